// lineitem: TPC-H's lineitem table by the rules of its dbgen (TPC-H
// specification 4.2.3), without l_comment (free text no query here reads).
//   orders      round(1,500,000 * SF); order i (from 0) has the sparse key
//               (i / 8) * 32 + i % 8 + 1 and 1..7 lines (uniform), so SF 1
//               has about 6,000,000 rows; o_orderdate uniform in
//               1992-01-01 .. 1998-12-31 minus 151 days (1998-08-02)
//   l_orderkey, l_linenumber  the order's key, 1..lines
//   l_partkey   uniform 1 .. 200,000 * SF
//   l_suppkey   (partkey + i * (S / 4 + (partkey - 1) / S)) % S + 1, i uniform
//               0..3, S = 10,000 * SF (one of the part's four suppliers)
//   l_quantity  uniform 1..50;  l_discount 0.00..0.10;  l_tax 0.00..0.08
//   l_extendedprice  quantity * retail price of the part, the price being
//               (90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000)) / 100
//   l_shipdate  orderdate + 1..121;  l_commitdate orderdate + 30..90;
//   l_receiptdate  shipdate + 1..30
//   l_returnflag  'R' or 'A' (even odds) when receiptdate <= 1995-06-17,
//               else 'N';  l_linestatus 'O' when shipdate > 1995-06-17, else 'F'
//   l_shipinstruct  one of DELIVER IN PERSON, COLLECT COD, NONE, TAKE BACK RETURN
//   l_shipmode  one of REG AIR, AIR, RAIL, SHIP, TRUCK, MAIL, FOB
// Quantities and money are doubles (the spec's decimals, exact in cents).
// The rows are in order of (l_orderkey, l_linenumber), recorded as the
// table's sort order.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "fact_sampler.hpp"
#include "table/date.hpp"
#include "table_generators.hpp"

namespace gpuolap {

using namespace generate_detail;
using table::ColumnType;

std::vector<table::Table> generate_lineitem(const TableGeneratorOptions& o) {
  const std::size_t orders = std::max<std::uint64_t>(1, scaled_count(o.scale, 1'500'000));
  const std::int64_t parts = std::max<std::int64_t>(1, static_cast<std::int64_t>(scaled_count(o.scale, 200'000)));
  const std::int64_t suppliers = std::max<std::int64_t>(1, static_cast<std::int64_t>(scaled_count(o.scale, 10'000)));
  const std::int32_t start_date = table::days_from_civil(1992, 1, 1);
  const std::int32_t last_order_date = table::days_from_civil(1998, 12, 31) - 151;
  const std::int32_t current_date = table::days_from_civil(1995, 6, 17);

  // Lines per order, then where each block of orders starts in the table.
  constexpr std::size_t kBlock = 1 << 14;
  const std::size_t blocks = (orders + kBlock - 1) / kBlock;
  std::vector<std::uint8_t> lines(orders);
  std::vector<std::size_t> block_rows(blocks + 1, 0);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    Rng rng(o.seed, (std::uint64_t{4} << 40) + b);
    std::size_t sum = 0;
    for (std::size_t i = b * kBlock; i < std::min(orders, (b + 1) * kBlock); ++i) sum += lines[i] = 1 + rng.below(7);
    block_rows[b + 1] = sum;
  });
  std::partial_sum(block_rows.begin(), block_rows.end(), block_rows.begin());
  const std::size_t rows = block_rows.back();

  const std::vector<std::string> instructions = {"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"};
  const std::vector<std::string> modes = {"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"};
  table::Table t;
  t.name = "lineitem";
  t.columns.push_back(make_column("l_orderkey", ColumnType::Int64, rows));
  t.columns.push_back(make_column("l_partkey", ColumnType::Int64, rows));
  t.columns.push_back(make_column("l_suppkey", ColumnType::Int64, rows));
  t.columns.push_back(make_column("l_linenumber", ColumnType::Int64, rows));
  t.columns.push_back(make_column("l_quantity", ColumnType::Double, rows));
  t.columns.push_back(make_column("l_extendedprice", ColumnType::Double, rows));
  t.columns.push_back(make_column("l_discount", ColumnType::Double, rows));
  t.columns.push_back(make_column("l_tax", ColumnType::Double, rows));
  t.columns.push_back(make_string_column("l_returnflag", {"A", "N", "R"}, rows));
  t.columns.push_back(make_string_column("l_linestatus", {"F", "O"}, rows));
  t.columns.push_back(make_column("l_shipdate", ColumnType::Date, rows));
  t.columns.push_back(make_column("l_commitdate", ColumnType::Date, rows));
  t.columns.push_back(make_column("l_receiptdate", ColumnType::Date, rows));
  t.columns.push_back(make_string_column("l_shipinstruct", instructions, rows));
  t.columns.push_back(make_string_column("l_shipmode", modes, rows));
  auto code_of = [](const table::Column& c, const std::string& s) {
    return static_cast<std::int32_t>(std::lower_bound(c.dictionary.begin(), c.dictionary.end(), s) -
                                     c.dictionary.begin());
  };
  std::vector<std::int32_t> instruction_codes, mode_codes;
  for (const auto& s : instructions) instruction_codes.push_back(code_of(t.columns[13], s));
  for (const auto& s : modes) mode_codes.push_back(code_of(t.columns[14], s));
  const std::int32_t flag_a = code_of(t.columns[8], "A"), flag_n = code_of(t.columns[8], "N"),
                     flag_r = code_of(t.columns[8], "R");
  const std::int32_t status_f = code_of(t.columns[9], "F"), status_o = code_of(t.columns[9], "O");

  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    Rng rng(o.seed, (std::uint64_t{5} << 40) + b);
    std::size_t row = block_rows[b];
    for (std::size_t i = b * kBlock; i < std::min(orders, (b + 1) * kBlock); ++i) {
      const auto key = static_cast<std::int64_t>((i / 8) * 32 + i % 8 + 1);
      const std::int32_t order_date =
          start_date + static_cast<std::int32_t>(rng.below(static_cast<std::uint32_t>(last_order_date - start_date + 1)));
      for (std::uint8_t line = 1; line <= lines[i]; ++line, ++row) {
        const std::int64_t partkey = 1 + rng.below(static_cast<std::uint32_t>(parts));
        const std::int64_t supplier_choice = rng.below(4);
        const std::int64_t suppkey =
            (partkey + supplier_choice * (suppliers / 4 + (partkey - 1) / suppliers)) % suppliers + 1;
        const std::int64_t quantity = 1 + rng.below(50);
        const std::int64_t price_cents = 90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000);
        const std::int32_t ship = order_date + 1 + static_cast<std::int32_t>(rng.below(121));
        const std::int32_t commit = order_date + 30 + static_cast<std::int32_t>(rng.below(61));
        const std::int32_t receipt = ship + 1 + static_cast<std::int32_t>(rng.below(30));
        t.columns[0].int64s[row] = key;
        t.columns[1].int64s[row] = partkey;
        t.columns[2].int64s[row] = suppkey;
        t.columns[3].int64s[row] = line;
        t.columns[4].doubles[row] = static_cast<double>(quantity);
        t.columns[5].doubles[row] = static_cast<double>(quantity * price_cents) / 100.0;
        t.columns[6].doubles[row] = static_cast<double>(rng.below(11)) / 100.0;
        t.columns[7].doubles[row] = static_cast<double>(rng.below(9)) / 100.0;
        const bool returned_coin = rng.below(2) == 1;
        t.columns[8].int32s[row] = receipt <= current_date ? (returned_coin ? flag_r : flag_a) : flag_n;
        t.columns[9].int32s[row] = ship > current_date ? status_o : status_f;
        t.columns[10].int32s[row] = ship;
        t.columns[11].int32s[row] = commit;
        t.columns[12].int32s[row] = receipt;
        t.columns[13].int32s[row] = instruction_codes[rng.below(4)];
        t.columns[14].int32s[row] = mode_codes[rng.below(7)];
      }
    }
  });
  t.sort_order = {"l_orderkey", "l_linenumber"};
  std::vector<table::Table> tables;
  tables.push_back(std::move(t));
  return tables;
}

}  // namespace gpuolap
