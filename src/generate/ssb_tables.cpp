// ssb: the Star Schema Benchmark (O'Neil, O'Neil, Chen; revision 3) — the
// lineorder fact table and its dimensions customer, supplier, part and date,
// with the columns its 13 queries read and the spec's distributions, so that
// their filters select what they should:
//   date       1992-01-01 .. 1998-12-31, one row a day (2,557): d_datekey
//              (YYYYMMDD), d_year 1992..1998, d_yearmonthnum (199401),
//              d_yearmonth ("Jan1994"), d_month ("January"), d_dayofweek,
//              d_daynuminmonth, d_monthnuminyear, d_weeknuminyear
//              ((day of year - 1) / 7 + 1)
//   customer   30,000 * SF: c_custkey 1.., c_name Customer#000000001,
//              c_nation uniform over TPC-H's 25 nations, c_region its region,
//              c_city the nation's first 9 letters (space padded) and a digit
//              0..9 ("UNITED KI1"), c_mktsegment one of 5
//   supplier   2,000 * SF: s_suppkey, s_name, s_city, s_nation, s_region as
//              the customer's
//   part       200,000 * floor(1 + log2 SF) (200,000 * SF below SF 1):
//              p_partkey, p_mfgr MFGR#1..5, p_category p_mfgr and 1..5
//              ("MFGR#12"), p_brand1 p_category and 1..40 ("MFGR#1221"),
//              p_size 1..50, all uniform
//   lineorder  orders as TPC-H's (1,500,000 * SF, sparse keys, 1..7 lines,
//              order date uniform 1992-01-01 .. 1998-08-02), about 6,000,000
//              rows at SF 1: lo_orderkey, lo_linenumber, lo_custkey,
//              lo_partkey, lo_suppkey uniform over their tables,
//              lo_orderdate and lo_commitdate (orderdate + 30..90) as
//              YYYYMMDD keys of date, lo_orderpriority one of 5,
//              lo_quantity 1..50, lo_discount 0..10, lo_tax 0..8,
//              lo_extendedprice quantity * the part's price (TPC-H's retail
//              price formula, in cents), lo_revenue extendedprice *
//              (100 - discount) / 100, lo_supplycost 6 * price / 10,
//              lo_shipmode one of 7
// Money is whole integers, as in the spec. Every table is sorted by its key
// (lineorder by lo_orderkey, lo_linenumber) and records that order.
#include <fmt/format.h>
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

namespace {

struct Nation {
  const char* name;
  const char* region;
};
constexpr Nation kNations[25] = {
    {"ALGERIA", "AFRICA"},     {"ARGENTINA", "AMERICA"},  {"BRAZIL", "AMERICA"},         {"CANADA", "AMERICA"},
    {"EGYPT", "MIDDLE EAST"},  {"ETHIOPIA", "AFRICA"},    {"FRANCE", "EUROPE"},          {"GERMANY", "EUROPE"},
    {"INDIA", "ASIA"},         {"INDONESIA", "ASIA"},     {"IRAN", "MIDDLE EAST"},       {"IRAQ", "MIDDLE EAST"},
    {"JAPAN", "ASIA"},         {"JORDAN", "MIDDLE EAST"}, {"KENYA", "AFRICA"},           {"MOROCCO", "AFRICA"},
    {"MOZAMBIQUE", "AFRICA"},  {"PERU", "AMERICA"},       {"CHINA", "ASIA"},             {"ROMANIA", "EUROPE"},
    {"SAUDI ARABIA", "MIDDLE EAST"}, {"VIETNAM", "ASIA"}, {"RUSSIA", "EUROPE"},          {"UNITED KINGDOM", "EUROPE"},
    {"UNITED STATES", "AMERICA"}};

// A string column of small tables: the values of every row, coded.
table::Column strings(std::string name, const std::vector<std::string>& values) {
  std::vector<std::string> dictionary = values;
  std::sort(dictionary.begin(), dictionary.end());
  dictionary.erase(std::unique(dictionary.begin(), dictionary.end()), dictionary.end());
  table::Column c = make_string_column(std::move(name), dictionary, values.size());
  for (std::size_t r = 0; r < values.size(); ++r)
    c.int32s[r] = static_cast<std::int32_t>(std::lower_bound(c.dictionary.begin(), c.dictionary.end(), values[r]) -
                                            c.dictionary.begin());
  return c;
}

table::Column ints(std::string name, std::vector<std::int64_t> values) {
  table::Column c = make_column(std::move(name), ColumnType::Int64, 0);
  c.int64s = std::move(values);
  return c;
}

std::string city(const Nation& n, unsigned digit) { return fmt::format("{:<9.9}{}", n.name, digit); }

// customer or supplier: key, name, city, nation, region (and a segment).
table::Table party(const std::string& table_name, const std::string& prefix, const std::string& label,
                   std::size_t rows, Rng rng, bool with_segment) {
  std::vector<std::int64_t> keys(rows);
  std::vector<std::string> names(rows), cities(rows), nations(rows), regions(rows), segments(rows);
  const std::vector<std::string> kSegments = {"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"};
  for (std::size_t r = 0; r < rows; ++r) {
    keys[r] = static_cast<std::int64_t>(r + 1);
    names[r] = fmt::format("{}#{:09}", label, r + 1);
    const Nation& n = kNations[rng.below(25)];
    cities[r] = city(n, rng.below(10));
    nations[r] = n.name;
    regions[r] = n.region;
    segments[r] = kSegments[rng.below(5)];
  }
  table::Table t;
  t.name = table_name;
  t.columns.push_back(ints(prefix + "key", std::move(keys)));
  t.columns.push_back(strings(prefix.substr(0, 2) + "name", names));
  t.columns.push_back(strings(prefix.substr(0, 2) + "city", cities));
  t.columns.push_back(strings(prefix.substr(0, 2) + "nation", nations));
  t.columns.push_back(strings(prefix.substr(0, 2) + "region", regions));
  if (with_segment) t.columns.push_back(strings(prefix.substr(0, 2) + "mktsegment", segments));
  t.sort_order = {prefix + "key"};
  return t;
}

std::int64_t datekey(std::int32_t days) {
  const std::string s = table::format_date(days);  // YYYY-MM-DD
  return std::stoll(s.substr(0, 4) + s.substr(5, 2) + s.substr(8, 2));
}

}  // namespace

std::vector<table::Table> generate_ssb(const TableGeneratorOptions& o) {
  const std::size_t customers = std::max<std::uint64_t>(1, scaled_count(o.scale, 30'000));
  const std::size_t suppliers = std::max<std::uint64_t>(1, scaled_count(o.scale, 2'000));
  const std::size_t parts =
      o.scale < 1 ? std::max<std::uint64_t>(1, scaled_count(o.scale, 200'000))
                  : 200'000 * static_cast<std::size_t>(std::floor(1 + std::log2(o.scale)));
  const std::size_t orders = std::max<std::uint64_t>(1, scaled_count(o.scale, 1'500'000));
  std::vector<table::Table> tables;

  // date
  const std::int32_t first_day = table::days_from_civil(1992, 1, 1), last_day = table::days_from_civil(1998, 12, 31);
  {
    static const char* kMonths[12] = {"January", "February", "March",     "April",   "May",      "June",
                                      "July",    "August",   "September", "October", "November", "December"};
    static const char* kDays[7] = {"Thursday", "Friday", "Saturday", "Sunday", "Monday", "Tuesday", "Wednesday"};
    std::vector<std::int64_t> key, year, yearmonthnum, daynuminmonth, monthnuminyear, weeknuminyear;
    std::vector<std::string> yearmonth, month, dayofweek;
    for (std::int32_t d = first_day; d <= last_day; ++d) {
      const std::string s = table::format_date(d);
      const int y = std::stoi(s.substr(0, 4)), m = std::stoi(s.substr(5, 2)), day = std::stoi(s.substr(8, 2));
      key.push_back(datekey(d));
      year.push_back(y);
      yearmonthnum.push_back(y * 100 + m);
      yearmonth.push_back(fmt::format("{:.3}{}", kMonths[m - 1], y));
      month.push_back(kMonths[m - 1]);
      dayofweek.push_back(kDays[((d % 7) + 7) % 7]);
      daynuminmonth.push_back(day);
      monthnuminyear.push_back(m);
      weeknuminyear.push_back((d - table::days_from_civil(y, 1, 1)) / 7 + 1);
    }
    table::Table t;
    t.name = "date";
    t.columns.push_back(ints("d_datekey", std::move(key)));
    t.columns.push_back(ints("d_year", std::move(year)));
    t.columns.push_back(ints("d_yearmonthnum", std::move(yearmonthnum)));
    t.columns.push_back(strings("d_yearmonth", yearmonth));
    t.columns.push_back(strings("d_month", month));
    t.columns.push_back(strings("d_dayofweek", dayofweek));
    t.columns.push_back(ints("d_daynuminmonth", std::move(daynuminmonth)));
    t.columns.push_back(ints("d_monthnuminyear", std::move(monthnuminyear)));
    t.columns.push_back(ints("d_weeknuminyear", std::move(weeknuminyear)));
    t.sort_order = {"d_datekey"};
    tables.push_back(std::move(t));
  }
  tables.push_back(party("customer", "c_cust", "Customer", customers, Rng(o.seed, (std::uint64_t{6} << 40) + 1), true));
  tables.push_back(party("supplier", "s_supp", "Supplier", suppliers, Rng(o.seed, (std::uint64_t{6} << 40) + 2), false));

  // part
  std::vector<std::int64_t> price_cents(parts);
  {
    Rng rng(o.seed, (std::uint64_t{6} << 40) + 3);
    std::vector<std::int64_t> key(parts), size(parts);
    std::vector<std::string> mfgr(parts), category(parts), brand(parts);
    for (std::size_t r = 0; r < parts; ++r) {
      const auto k = static_cast<std::int64_t>(r + 1);
      key[r] = k;
      const unsigned m = 1 + rng.below(5), c = 1 + rng.below(5), b = 1 + rng.below(40);
      mfgr[r] = fmt::format("MFGR#{}", m);
      category[r] = fmt::format("MFGR#{}{}", m, c);
      brand[r] = fmt::format("MFGR#{}{}{}", m, c, b);
      size[r] = 1 + rng.below(50);
      price_cents[r] = 90000 + (k / 10) % 20001 + 100 * (k % 1000);
    }
    table::Table t;
    t.name = "part";
    t.columns.push_back(ints("p_partkey", std::move(key)));
    t.columns.push_back(strings("p_mfgr", mfgr));
    t.columns.push_back(strings("p_category", category));
    t.columns.push_back(strings("p_brand1", brand));
    t.columns.push_back(ints("p_size", std::move(size)));
    t.sort_order = {"p_partkey"};
    tables.push_back(std::move(t));
  }

  // lineorder: lines per order first, then each block of orders in parallel.
  constexpr std::size_t kBlock = 1 << 14;
  const std::size_t blocks = (orders + kBlock - 1) / kBlock;
  std::vector<std::uint8_t> lines(orders);
  std::vector<std::size_t> block_rows(blocks + 1, 0);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    Rng rng(o.seed, (std::uint64_t{7} << 40) + b);
    std::size_t sum = 0;
    for (std::size_t i = b * kBlock; i < std::min(orders, (b + 1) * kBlock); ++i) sum += lines[i] = 1 + rng.below(7);
    block_rows[b + 1] = sum;
  });
  std::partial_sum(block_rows.begin(), block_rows.end(), block_rows.begin());
  const std::size_t rows = block_rows.back();
  // YYYYMMDD of every day an order or commit date can fall on.
  const std::int32_t last_order_day = last_day - 151;
  std::vector<std::int64_t> datekeys;
  for (std::int32_t d = first_day; d <= last_order_day + 90; ++d) datekeys.push_back(datekey(d));
  const std::vector<std::string> priorities = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"};
  const std::vector<std::string> modes = {"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"};
  table::Table t;
  t.name = "lineorder";
  for (const char* name : {"lo_orderkey", "lo_linenumber", "lo_custkey", "lo_partkey", "lo_suppkey", "lo_orderdate"})
    t.columns.push_back(make_column(name, ColumnType::Int64, rows));
  t.columns.push_back(make_string_column("lo_orderpriority", priorities, rows));
  for (const char* name : {"lo_quantity", "lo_extendedprice", "lo_discount", "lo_revenue", "lo_supplycost", "lo_tax",
                           "lo_commitdate"})
    t.columns.push_back(make_column(name, ColumnType::Int64, rows));
  t.columns.push_back(make_string_column("lo_shipmode", modes, rows));
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    Rng rng(o.seed, (std::uint64_t{8} << 40) + b);
    std::size_t row = block_rows[b];
    for (std::size_t i = b * kBlock; i < std::min(orders, (b + 1) * kBlock); ++i) {
      const auto key = static_cast<std::int64_t>((i / 8) * 32 + i % 8 + 1);
      const std::uint32_t order_day = rng.below(static_cast<std::uint32_t>(last_order_day - first_day + 1));
      const std::int64_t customer = 1 + rng.below(static_cast<std::uint32_t>(customers));
      const std::int32_t priority = static_cast<std::int32_t>(rng.below(5));
      for (std::uint8_t line = 1; line <= lines[i]; ++line, ++row) {
        const std::size_t part = rng.below(static_cast<std::uint32_t>(parts));
        const std::int64_t quantity = 1 + rng.below(50), discount = rng.below(11);
        const std::int64_t extended = quantity * price_cents[part];
        t.columns[0].int64s[row] = key;
        t.columns[1].int64s[row] = line;
        t.columns[2].int64s[row] = customer;
        t.columns[3].int64s[row] = static_cast<std::int64_t>(part + 1);
        t.columns[4].int64s[row] = 1 + rng.below(static_cast<std::uint32_t>(suppliers));
        t.columns[5].int64s[row] = datekeys[order_day];
        t.columns[6].int32s[row] = priority;
        t.columns[7].int64s[row] = quantity;
        t.columns[8].int64s[row] = extended;
        t.columns[9].int64s[row] = discount;
        t.columns[10].int64s[row] = extended * (100 - discount) / 100;
        t.columns[11].int64s[row] = 6 * price_cents[part] / 10;
        t.columns[12].int64s[row] = rng.below(9);
        t.columns[13].int64s[row] = datekeys[order_day + 30 + rng.below(61)];
        t.columns[14].int32s[row] = static_cast<std::int32_t>(rng.below(7));
      }
    }
  });
  t.sort_order = {"lo_orderkey", "lo_linenumber"};
  tables.push_back(std::move(t));
  return tables;
}

}  // namespace gpuolap
