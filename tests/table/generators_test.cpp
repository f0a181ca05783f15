#include "generate/table_generators.hpp"

#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "support/input_error.hpp"
#include "table/date.hpp"

namespace gpuolap {
namespace {

using table::Column;
using table::Table;
using ::gpuolap::testing::error_of;

const Table& named(const std::vector<Table>& tables, const std::string& name) {
  for (const Table& t : tables)
    if (t.name == name) return t;
  throw std::runtime_error("no table " + name);
}

const Column& col(const Table& t, const std::string& name) {
  const Column* c = t.find(name);
  if (!c) throw std::runtime_error("no column " + name);
  return *c;
}

std::string str(const Column& c, std::size_t r) { return std::string(c.dictionary.at(static_cast<std::size_t>(c.int32s[r]))); }

void expect_same(const std::vector<Table>& a, const std::vector<Table>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    ASSERT_EQ(a[t].columns.size(), b[t].columns.size());
    for (std::size_t c = 0; c < a[t].columns.size(); ++c) {
      EXPECT_EQ(a[t].columns[c].int64s, b[t].columns[c].int64s) << a[t].name << "." << a[t].columns[c].name;
      EXPECT_EQ(a[t].columns[c].doubles, b[t].columns[c].doubles) << a[t].name << "." << a[t].columns[c].name;
      EXPECT_EQ(a[t].columns[c].int32s, b[t].columns[c].int32s) << a[t].name << "." << a[t].columns[c].name;
      EXPECT_EQ(a[t].columns[c].dictionary, b[t].columns[c].dictionary);
    }
  }
}

TableGeneratorOptions at(double scale, std::uint64_t seed = 42) {
  TableGeneratorOptions o;
  o.scale = scale;
  o.seed = seed;
  return o;
}

// Every kind: the same tables for a seed whatever the number of threads,
// others for another seed, and tables the store accepts.
TEST(TableGenerators, DeterministicWhateverTheThreadsAndValid) {
  for (const std::string& kind : table_generator_kinds()) {
    const auto many = generate_tables(kind, at(0.02));
    std::vector<Table> one;
    {
      tbb::global_control single(tbb::global_control::max_allowed_parallelism, 1);
      one = generate_tables(kind, at(0.02));
    }
    expect_same(many, one);
    for (const Table& t : many) EXPECT_NO_THROW(table::check_table(t)) << kind << " " << t.name;
    const auto other = generate_tables(kind, at(0.02, 43));
    EXPECT_GT(many.back().row_count(), 0u) << kind;
    bool differs = false;
    for (std::size_t c = 0; c < many.back().columns.size(); ++c)
      differs = differs || many.back().columns[c].int64s != other.back().columns[c].int64s ||
                many.back().columns[c].doubles != other.back().columns[c].doubles ||
                many.back().columns[c].int32s != other.back().columns[c].int32s;
    EXPECT_TRUE(differs) << kind;
  }
  EXPECT_NE(error_of([] { generate_tables("nope", at(1)); }).find("sales-flat, lineitem, zipf, ssb"), std::string::npos);
  EXPECT_NE(error_of([] { generate_tables("zipf", at(0)); }).find("--scale"), std::string::npos);
}

TEST(TableGenerators, SalesFlatHasThePapersShape) {
  const auto tables = generate_sales_flat(at(0.01));
  const Table& t = named(tables, "sales");
  ASSERT_EQ(t.row_count(), 250'000u);
  std::unordered_set<std::int64_t> cells;
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const std::int64_t y = col(t, "year").int64s[r], m = col(t, "month").int64s[r], d = col(t, "day").int64s[r],
                       g = col(t, "product_group").int64s[r], p = col(t, "product").int64s[r];
    const double amount = col(t, "amount").doubles[r];
    ASSERT_TRUE(y >= 2001 && y <= 2012 && m >= 1 && m <= 12 && d >= 1 && d <= 31 && p >= 1 && p <= 319);
    ASSERT_EQ(g, (p - 1) / 29 + 1);
    ASSERT_TRUE(amount >= 1.0 && amount <= 1000.0);
    cells.insert((((y * 13 + m) * 32 + d) * 12 + g) * 320 + p);
  }
  // C (1 - exp(-n / C)) with C = 12 * 12 * 31 * 319 = 1,424,016 cells.
  const double c = 1'424'016, expected = c * (1 - std::exp(-250'000 / c));
  EXPECT_NEAR(static_cast<double>(cells.size()), expected, expected * 0.01) << cells.size();
}

TEST(TableGenerators, LineitemFollowsDbgensRules) {
  const auto tables = generate_lineitem(at(0.01));
  const Table& t = named(tables, "lineitem");
  EXPECT_NEAR(static_cast<double>(t.row_count()), 60'000, 1'500);
  EXPECT_EQ(t.sort_order, (std::vector<std::string>{"l_orderkey", "l_linenumber"}));
  std::int32_t current = table::days_from_civil(1995, 6, 17);
  std::set<std::string> flags, statuses, modes, instructions;
  for (std::size_t r = 0; r < t.row_count(); ++r) {
    const std::int64_t key = col(t, "l_orderkey").int64s[r], line = col(t, "l_linenumber").int64s[r];
    ASSERT_LE((key - 1) % 32, 7) << "sparse keys: 8 of every 32";
    ASSERT_TRUE(line >= 1 && line <= 7);
    if (line > 1) {
      ASSERT_EQ(col(t, "l_orderkey").int64s[r - 1], key);
      ASSERT_EQ(col(t, "l_linenumber").int64s[r - 1], line - 1);
    }
    const double q = col(t, "l_quantity").doubles[r], disc = col(t, "l_discount").doubles[r],
                 tax = col(t, "l_tax").doubles[r];
    ASSERT_TRUE(q >= 1 && q <= 50 && q == std::floor(q));
    ASSERT_TRUE(disc >= 0 && disc <= 0.1001 && tax >= 0 && tax <= 0.0801);
    const std::int64_t part = col(t, "l_partkey").int64s[r];
    ASSERT_TRUE(part >= 1 && part <= 2000);
    const double price = (90000 + (part / 10) % 20001 + 100 * (part % 1000)) / 100.0;
    ASSERT_NEAR(col(t, "l_extendedprice").doubles[r], q * price, 1e-6);
    const std::int32_t ship = col(t, "l_shipdate").int32s[r], receipt = col(t, "l_receiptdate").int32s[r],
                       commit = col(t, "l_commitdate").int32s[r];
    ASSERT_TRUE(receipt - ship >= 1 && receipt - ship <= 30);
    ASSERT_TRUE(ship >= table::days_from_civil(1992, 1, 2) && ship <= table::days_from_civil(1998, 12, 1));
    ASSERT_LE(std::abs(commit - ship), 120);
    const std::string flag = str(col(t, "l_returnflag"), r), status = str(col(t, "l_linestatus"), r);
    ASSERT_EQ(flag == "N", receipt > current) << flag;
    ASSERT_EQ(status == "O", ship > current) << status;
    flags.insert(flag);
    statuses.insert(status);
    modes.insert(str(col(t, "l_shipmode"), r));
    instructions.insert(str(col(t, "l_shipinstruct"), r));
  }
  EXPECT_EQ(flags, (std::set<std::string>{"A", "N", "R"}));
  EXPECT_EQ(statuses, (std::set<std::string>{"F", "O"}));
  EXPECT_EQ(modes.size(), 7u);
  EXPECT_EQ(instructions.size(), 4u);
}

TEST(TableGenerators, ZipfHasItsSkew) {
  TableGeneratorOptions o = at(0.1);
  o.cardinality = 1024;
  for (double theta : {0.0, 1.0, 2.0}) {
    o.theta = theta;
    const auto tables = generate_zipf(o);
    const Table& f = named(tables, "f");
    const Table& d1 = named(tables, "d1");
    ASSERT_EQ(f.row_count(), 1'000'000u);
    ASSERT_EQ(d1.row_count(), 1024u);
    double harmonic = 0;
    for (int k = 1; k <= 1024; ++k) harmonic += std::pow(k, -theta);
    std::vector<double> share(1024, 0), fk_share(1024, 0);
    for (std::size_t r = 0; r < f.row_count(); ++r) {
      share.at(static_cast<std::size_t>(f.columns[0].int64s[r])) += 1e-6;
      fk_share.at(static_cast<std::size_t>(f.columns[1].int64s[r])) += 1e-6;
    }
    for (int k : {0, 1, 9}) {
      const double expected = std::pow(k + 1, -theta) / harmonic;
      EXPECT_NEAR(share[k], expected, 0.02 * expected + 3e-4) << "theta " << theta << " value " << k;
      EXPECT_NEAR(fk_share[k], expected, 0.02 * expected + 3e-4) << "theta " << theta << " value " << k;
    }
    EXPECT_EQ(d1.columns[0].int64s[1023], 1023);
  }
  o.cardinality = 0;
  EXPECT_NE(error_of([&] { generate_zipf(o); }).find("--cardinality"), std::string::npos);
}

TEST(TableGenerators, SsbQueriesFiltersSelectRows) {
  const auto tables = generate_ssb(at(0.05));
  const Table& lo = named(tables, "lineorder");
  const Table& date = named(tables, "date");
  const Table& customer = named(tables, "customer");
  const Table& supplier = named(tables, "supplier");
  const Table& part = named(tables, "part");
  EXPECT_NEAR(static_cast<double>(lo.row_count()), 300'000, 5'000);
  EXPECT_EQ(date.row_count(), 2557u);
  EXPECT_EQ(customer.row_count(), 1500u);
  EXPECT_EQ(supplier.row_count(), 100u);
  EXPECT_EQ(part.row_count(), 10'000u);
  // Keys join: every foreign key of lineorder names a row of its dimension.
  std::set<std::int64_t> datekeys(col(date, "d_datekey").int64s.begin(), col(date, "d_datekey").int64s.end());
  std::size_t q11 = 0;
  std::map<std::int64_t, std::int64_t> year_of;
  for (std::size_t r = 0; r < date.row_count(); ++r) year_of[col(date, "d_datekey").int64s[r]] = col(date, "d_year").int64s[r];
  for (std::size_t r = 0; r < lo.row_count(); ++r) {
    ASSERT_TRUE(datekeys.count(col(lo, "lo_orderdate").int64s[r]));
    ASSERT_TRUE(datekeys.count(col(lo, "lo_commitdate").int64s[r]));
    ASSERT_TRUE(col(lo, "lo_custkey").int64s[r] >= 1 && col(lo, "lo_custkey").int64s[r] <= 1500);
    ASSERT_TRUE(col(lo, "lo_suppkey").int64s[r] >= 1 && col(lo, "lo_suppkey").int64s[r] <= 100);
    ASSERT_TRUE(col(lo, "lo_partkey").int64s[r] >= 1 && col(lo, "lo_partkey").int64s[r] <= 10'000);
    const std::int64_t discount = col(lo, "lo_discount").int64s[r], quantity = col(lo, "lo_quantity").int64s[r];
    ASSERT_TRUE(discount >= 0 && discount <= 10 && quantity >= 1 && quantity <= 50);
    ASSERT_EQ(col(lo, "lo_revenue").int64s[r], col(lo, "lo_extendedprice").int64s[r] * (100 - discount) / 100);
    // Q1.1: d_year = 1993, lo_discount between 1 and 3, lo_quantity < 25.
    q11 += year_of[col(lo, "lo_orderdate").int64s[r]] == 1993 && discount >= 1 && discount <= 3 && quantity < 25;
  }
  // 1/7 of the years (a little more: orders stop in August 1998) * 3/11 * 24/50.
  EXPECT_NEAR(static_cast<double>(q11) / static_cast<double>(lo.row_count()), 0.1499 * 3 / 11 * 0.48, 0.003);
  auto values = [](const Column& c) {
    std::set<std::string> s;
    for (std::size_t r = 0; r < c.size(); ++r) s.insert(str(c, r));
    return s;
  };
  const auto cities = values(col(customer, "c_city"));
  EXPECT_TRUE(cities.count("UNITED KI1") && cities.count("UNITED KI5"));
  EXPECT_EQ(values(col(customer, "c_region")),
            (std::set<std::string>{"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"}));
  EXPECT_EQ(values(col(supplier, "s_nation")).size(), 25u);
  EXPECT_TRUE(values(col(date, "d_yearmonth")).count("Dec1997"));
  EXPECT_EQ(values(col(part, "p_mfgr")).size(), 5u);
  EXPECT_EQ(values(col(part, "p_category")).size(), 25u);
  EXPECT_TRUE(values(col(part, "p_category")).count("MFGR#12"));
  const auto brands = values(col(part, "p_brand1"));
  EXPECT_EQ(brands.size(), 1000u);
  EXPECT_TRUE(brands.count("MFGR#2221") && brands.count("MFGR#2228") && brands.count("MFGR#2239"));
  std::int64_t week6_1994 = 0;
  for (std::size_t r = 0; r < date.row_count(); ++r)
    week6_1994 += col(date, "d_year").int64s[r] == 1994 && col(date, "d_weeknuminyear").int64s[r] == 6;
  EXPECT_EQ(week6_1994, 7);
}

}  // namespace
}  // namespace gpuolap
