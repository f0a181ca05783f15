// Cube creation on the CPU: cpu-sequential against SQL's cpu-serial (one
// plain GROUP BY per grouping set) on random tables, cpu-partitioned against
// cpu-sequential, PostgreSQL's empty total, and the errors.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "cube/cube_cases.hpp"
#include "gpuolap/error.hpp"
#include "sql/binder.hpp"
#include "sql/result_format.hpp"
#include "sql/sql.hpp"

namespace gpuolap::cube {
namespace {

// The aggregates of test::make_spec, as SQL writes them.
const char* kSqlAggregates = "count(*), count(x), sum(x), avg(x), min(x), sum(y), min(z), max(c)";

std::string csv(const sql::TableCatalog& catalog, const std::string& query) {
  sql::SqlOptions options;
  options.max_rows = 1u << 30;
  return sql::format_result(sql::run(catalog, query, options), sql::ResultFormat::Csv);
}

// CSV lines compared field by field: numbers within 1e-9 relative.
void expect_same_csv(const std::string& want, const std::string& got, const std::string& what) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  std::getline(a, la);  // the headers differ in the aggregates' names
  std::getline(b, lb);
  for (int line = 2;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    ASSERT_EQ(more_a, more_b) << what << ": line " << line << " is in one answer only";
    if (!more_a) return;
    if (la == lb) continue;
    std::istringstream fa(la), fb(lb);
    std::string x, y;
    while (std::getline(fa, x, ',')) {
      ASSERT_TRUE(static_cast<bool>(std::getline(fb, y, ','))) << what << ", line " << line << ": " << la << " vs " << lb;
      if (x == y) continue;
      char* end_x = nullptr;
      char* end_y = nullptr;
      const double p = std::strtod(x.c_str(), &end_x), q = std::strtod(y.c_str(), &end_y);
      ASSERT_TRUE(*end_x == 0 && *end_y == 0 && !x.empty() && !y.empty() &&
                  std::abs(p - q) <= 1e-9 * std::max(std::abs(p), std::abs(q)))
          << what << ", line " << line << ": " << la << " vs " << lb;
    }
  }
}

// Every set of `spec`'s result equals SQL's GROUP BY of the set's columns.
void expect_equals_sql(const table::Table& facts, const CubeSpec& spec, const table::Table& result, const std::string& what) {
  sql::TablesInMemory catalog;
  catalog.add(std::make_shared<table::Table>(facts));
  auto cells = std::make_shared<table::Table>(result);
  cells->name = "cube_cells";
  catalog.add(cells);
  const std::size_t n = spec.columns.size();
  for (SetMask set : spec.sets) {
    std::string kept, order;
    std::int64_t id = 0;
    for (std::size_t i = 0; i < n; ++i) {
      id = id << 1 | ((set >> i) & 1 ? 0 : 1);
      if (!((set >> i) & 1)) continue;
      kept += spec.columns[i] + ", ";
      order += (order.empty() ? "" : ", ") + spec.columns[i] + " NULLS FIRST";
    }
    std::string cube_aggregates;
    for (const CubeSpec::Measure& m : spec.measures) cube_aggregates += (cube_aggregates.empty() ? "" : ", ") + measure_name(m);
    const std::string want = csv(catalog, "SELECT " + kept + kSqlAggregates + " FROM facts" +
                                              (order.empty() ? "" : " GROUP BY " + kept.substr(0, kept.size() - 2) +
                                                                        " ORDER BY " + order));
    const std::string got =
        csv(catalog, "SELECT " + kept + cube_aggregates + " FROM cube_cells WHERE grouping = " + std::to_string(id));
    expect_same_csv(want, got, what + ", set " + set_text(spec, set));
  }
}

BuildOptions with(Algorithm a, int threads = 0) {
  BuildOptions o;
  o.algorithm = a;
  o.threads = threads;
  return o;
}

TEST(CubeCpu, SequentialEqualsSqlOnEverySpecAndTable) {
  for (std::size_t rows : {0, 1, 3000})
    for (bool sorted : {false, true}) {
      const table::Table facts = test::random_table(rows, 11 + static_cast<std::uint32_t>(rows), sorted);
      for (const test::SpecCase& c : test::spec_cases()) {
        const CubeSpec spec = test::make_spec(c, facts);
        const CubeResult r = build_cube(facts, spec, with(Algorithm::CpuSequential));
        expect_equals_sql(facts, spec, r.table, c.name + ", " + std::to_string(rows) + " rows" + (sorted ? ", sorted" : ""));
      }
    }
}

TEST(CubeCpu, PartitionedEqualsSequentialForEveryThreadCount) {
  for (std::size_t rows : {0, 1, 2, 5000})
    for (bool sorted : {false, true}) {
      const table::Table facts = test::random_table(rows, 5 + static_cast<std::uint32_t>(rows), sorted);
      for (const test::SpecCase& c : test::spec_cases()) {
        const CubeSpec spec = test::make_spec(c, facts);
        const PreparedCube prepared(facts, spec);
        const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
        for (int threads : {1, 3, 0}) {
          const CubeResult got = prepared.build(with(Algorithm::CpuPartitioned, threads));
          EXPECT_EQ(compare_results(want.table, got.table), "")
              << c.name << ", " << rows << " rows, " << threads << " threads" << (sorted ? ", sorted" : "");
        }
      }
    }
}

TEST(CubeCpu, TheEmptyTotalIsOneRowAsInPostgreSql) {
  const table::Table facts = test::random_table(0, 1);
  CubeSpec spec = parse_dims("a>b");
  parse_measures("count(*), sum(x), min(z)", spec, facts);
  const CubeResult r = build_cube(facts, spec, with(Algorithm::CpuPartitioned));
  ASSERT_EQ(r.table.row_count(), 1u);  // (a, b) and (a) have no rows; () has one
  EXPECT_EQ(r.table.columns[0].int64s[0], 3);  // GROUPING(a, b): both rolled up
  EXPECT_TRUE(r.table.columns[1].is_null(0));
  EXPECT_EQ(r.table.columns[3].int64s[0], 0);  // count(*)
  EXPECT_TRUE(r.table.columns[4].is_null(0));  // sum(x)
  EXPECT_TRUE(r.table.columns[5].is_null(0));  // min(z)
}

TEST(CubeCpu, RollupsMultiplyIntoSetsFinestFirst) {
  const CubeSpec spec = parse_dims("year > month > day, group > product");
  ASSERT_EQ(spec.columns, (std::vector<std::string>{"year", "month", "day", "group", "product"}));
  ASSERT_EQ(spec.sets.size(), 12u);
  EXPECT_EQ(set_text(spec, spec.sets.front()), "(year, month, day, group, product)");
  EXPECT_EQ(set_text(spec, spec.sets[1]), "(year, month, day, group)");
  EXPECT_EQ(set_text(spec, spec.sets.back()), "()");
}

TEST(CubeCpu, BadSpecsAreInputErrorsNamingWhatIsWrong) {
  const table::Table facts = test::random_table(10, 2);
  auto message = [&](const std::string& dims, const std::string& sets, const std::string& measures) -> std::string {
    try {
      CubeSpec spec = parse_dims(dims);
      if (!sets.empty()) parse_sets(sets, spec);
      parse_measures(measures, spec, facts);
      build_cube(facts, spec, with(Algorithm::CpuSequential));
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("a,,b", "", "count(*)").find("empty dimension"), std::string::npos);
  EXPECT_NE(message("a>a", "", "count(*)").find("appears twice"), std::string::npos);
  EXPECT_NE(message("a, nosuch", "", "count(*)").find("no column 'nosuch'"), std::string::npos);
  EXPECT_NE(message("a, b", "(a), (c)", "count(*)").find("'c' is not one of the grouping columns"), std::string::npos);
  EXPECT_NE(message("a, b", "(a), (a)", "count(*)").find("appears twice"), std::string::npos);
  EXPECT_NE(message("a, b", "(a", "count(*)").find("without its ')'"), std::string::npos);
  EXPECT_NE(message("a", "", "sum(z)").find("has no sum"), std::string::npos);
  EXPECT_NE(message("a", "", "median(x)").find("unknown function"), std::string::npos);
  EXPECT_NE(message("a,b,c,d,e,x,y,z,a1,a2,a3,a4,a5", "", "count(*)").find("at most 12"), std::string::npos);
  EXPECT_THROW(parse_algorithm("gpu-fast"), InputError);
}

}  // namespace
}  // namespace gpuolap::cube
