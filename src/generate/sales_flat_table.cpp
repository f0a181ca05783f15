// sales-flat: the flat sales table of the cube-creation paper (Year, Month,
// Day, Group, Product, Amount; 25 M rows at scale 1, whose cube at the
// highest granularity has 1,424,016 intersections).
//
// The paper gives only those two numbers; this draws every row independently
// and uniformly from a grid of exactly 1,424,016 cells:
//   year           2001..2012 (12 years)
//   month          1..12
//   day            1..31 in every month (the paper's count needs 31 days a
//                  month: 12 * 12 * 31 * 319 = 1,424,016)
//   product        1..319
//   product_group  1..11, fixed by the product: (product - 1) / 29 + 1
//                  ("group" is an SQL keyword, hence the name)
//   amount         a double of whole cents, uniform in 1.00..1000.00
// Rows: round(25,000,000 * scale). The expected number of distinct
// (year, month, day, product_group, product) is C * (1 - exp(-rows / C)) with
// C = 1,424,016: all of them at scale 1 (about 0.03 missing), 229,300 at
// scale 0.01. The rows are in random order (no sort order is recorded).
#include <tbb/parallel_for.h>

#include <cmath>

#include "fact_sampler.hpp"
#include "table_generators.hpp"

namespace gpuolap {

using namespace generate_detail;
using table::ColumnType;

std::vector<table::Table> generate_sales_flat(const TableGeneratorOptions& o) {
  const std::size_t rows = scaled_count(o.scale, 25'000'000);
  table::Table t;
  t.name = "sales";
  t.columns.push_back(make_column("year", ColumnType::Int64, rows));
  t.columns.push_back(make_column("month", ColumnType::Int64, rows));
  t.columns.push_back(make_column("day", ColumnType::Int64, rows));
  t.columns.push_back(make_column("product_group", ColumnType::Int64, rows));
  t.columns.push_back(make_column("product", ColumnType::Int64, rows));
  t.columns.push_back(make_column("amount", ColumnType::Double, rows));
  auto& year = t.columns[0].int64s;
  auto& month = t.columns[1].int64s;
  auto& day = t.columns[2].int64s;
  auto& group = t.columns[3].int64s;
  auto& product = t.columns[4].int64s;
  auto& amount = t.columns[5].doubles;
  constexpr std::size_t kBlock = 1 << 16;
  tbb::parallel_for(std::size_t{0}, (rows + kBlock - 1) / kBlock, [&](std::size_t block) {
    Rng rng(o.seed, (std::uint64_t{1} << 40) + block);
    for (std::size_t r = block * kBlock; r < std::min(rows, (block + 1) * kBlock); ++r) {
      year[r] = 2001 + rng.below(12);
      month[r] = 1 + rng.below(12);
      day[r] = 1 + rng.below(31);
      product[r] = 1 + rng.below(319);
      group[r] = (product[r] - 1) / 29 + 1;
      amount[r] = static_cast<double>(100 + rng.below(99901)) / 100.0;
    }
  });
  std::vector<table::Table> tables;
  tables.push_back(std::move(t));
  return tables;
}

}  // namespace gpuolap
