// zipf: the tables of the memory-contention paper's experiments, a fact
// table F and a dimension table D1:
//   f(a, fk)   round(10,000,000 * scale) rows;
//              a   Zipf(theta) over 0..C-1: value k has probability
//                  proportional to 1 / (k + 1)^theta, so 0 is the most
//                  frequent (theta 0: uniform; the paper uses 0..2, C 1024);
//              fk  drawn the same way, independently: a foreign key into d1
//   d1(id, b)  C rows; id 0..C-1 in order (sorted by id), b uniform 0..999
// C is --cardinality (default 1024), theta --theta (default 1). Both tables'
// integer codes start at 0 and are consecutive, as the paper assumes.
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "fact_sampler.hpp"
#include "gpuolap/error.hpp"
#include "table_generators.hpp"

namespace gpuolap {

using namespace generate_detail;
using table::ColumnType;

std::vector<table::Table> generate_zipf(const TableGeneratorOptions& o) {
  if (!(o.theta >= 0) || !std::isfinite(o.theta) || o.theta > 10)
    throw InputError(fmt::format("--theta must be a number from 0 to 10, not {}", o.theta));
  if (o.cardinality < 1 || o.cardinality > (std::uint64_t{1} << 28))
    throw InputError(fmt::format("--cardinality must be from 1 to 2^28, not {}", o.cardinality));
  const std::size_t c = o.cardinality;
  // cdf[k]: the probability of a value <= k.
  std::vector<double> cdf(c);
  double sum = 0;
  for (std::size_t k = 0; k < c; ++k) cdf[k] = sum += std::pow(static_cast<double>(k + 1), -o.theta);
  for (double& p : cdf) p /= sum;
  cdf.back() = 1.0;
  auto draw = [&](std::uint64_t word) {
    const double u = unit_interval(word);
    return static_cast<std::int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
  };

  const std::size_t rows = scaled_count(o.scale, 10'000'000);
  table::Table f;
  f.name = "f";
  f.columns.push_back(make_column("a", ColumnType::Int64, rows));
  f.columns.push_back(make_column("fk", ColumnType::Int64, rows));
  auto& a = f.columns[0].int64s;
  auto& fk = f.columns[1].int64s;
  constexpr std::size_t kBlock = 1 << 16;
  tbb::parallel_for(std::size_t{0}, (rows + kBlock - 1) / kBlock, [&](std::size_t block) {
    Rng rng(o.seed, (std::uint64_t{3} << 40) + block);
    for (std::size_t r = block * kBlock; r < std::min(rows, (block + 1) * kBlock); ++r) {
      a[r] = draw(rng.next());
      fk[r] = draw(rng.next());
    }
  });

  table::Table d1;
  d1.name = "d1";
  d1.columns.push_back(make_column("id", ColumnType::Int64, c));
  d1.columns.push_back(make_column("b", ColumnType::Int64, c));
  Rng rng(o.seed, (std::uint64_t{3} << 40) - 1);
  for (std::size_t k = 0; k < c; ++k) {
    d1.columns[0].int64s[k] = static_cast<std::int64_t>(k);
    d1.columns[1].int64s[k] = rng.below(1000);
  }
  d1.sort_order = {"id"};
  std::vector<table::Table> tables;
  tables.push_back(std::move(f));
  tables.push_back(std::move(d1));
  return tables;
}

}  // namespace gpuolap
