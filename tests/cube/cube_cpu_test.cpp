// Cube creation on the CPU: cpu-sequential against SQL's cpu-serial (one
// plain GROUP BY per grouping set) on random tables, cpu-partitioned against
// cpu-sequential, PostgreSQL's empty total, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "cube/coded_table.hpp"
#include "cube/cube_algorithms.hpp"
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

// Every set of `spec`'s result equals SQL's GROUP BY of the set's columns.
void expect_equals_sql(const table::Table& facts, const CubeSpec& spec, const table::Table& result, const std::string& what,
                       const std::string& sql_aggregates = kSqlAggregates) {
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
    const std::string want = csv(catalog, "SELECT " + kept + sql_aggregates + " FROM facts" +
                                              (order.empty() ? "" : " GROUP BY " + kept.substr(0, kept.size() - 2) +
                                                                        " ORDER BY " + order));
    const std::string got =
        csv(catalog, "SELECT " + kept + cube_aggregates + " FROM cube_cells WHERE grouping = " + std::to_string(id));
    test::expect_same_csv(want, got, what + ", set " + set_text(spec, set));
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

// Keys too wide for dense cubes: the hash maps of cpu-sequential and the
// sparse sets of cpu-partitioned; a column no set keeps takes no digits.
TEST(CubeCpu, WideKeysTakeTheSparsePaths) {
  const table::Table facts = test::wide_table(3000, 3);
  for (const std::string& sets : test::wide_sets()) {
    const CubeSpec spec = test::wide_spec(sets, facts);
    const PreparedCube prepared(facts, spec);
    const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
    expect_equals_sql(facts, spec, want.table, "wide keys, sets " + sets, test::kWideMeasures);
    EXPECT_EQ(compare_results(want.table, prepared.build(with(Algorithm::CpuPartitioned, 3)).table), "") << sets;
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

// The parts of several GPU contexts merge set by set: a part merged with
// itself doubles every count and sum and keeps every MIN; merged with an
// empty part it stays as it is.
TEST(CubeCpu, PartsMergeByKey) {
  const table::Table facts = test::random_table(4000, 8);
  CubeSpec spec = parse_dims("a>b, c");
  parse_measures("count(*), sum(x), min(x), sum(y), avg(x)", spec, facts);
  const CodedTable coded = code_table(facts, spec);
  StageTimes stages;
  const std::vector<SetCells> whole = build_cpu_sequential(coded, spec, stages, false);
  std::vector<SetCells> empty;
  for (std::size_t s = 0; s < whole.size(); ++s) empty.push_back(empty_cells(coded));
  EXPECT_EQ(compare_results(finish_table(coded, spec, whole), finish_table(coded, spec, merge_parts(coded, {whole, empty}))), "");
  EXPECT_EQ(compare_results(finish_table(coded, spec, whole), finish_table(coded, spec, merge_parts(coded, {empty, whole}))), "");
  const table::Table one = finish_table(coded, spec, whole);
  const table::Table twice = finish_table(coded, spec, merge_parts(coded, {whole, whole}));
  ASSERT_EQ(one.row_count(), twice.row_count());
  const std::size_t keys = spec.columns.size() + 1;
  for (std::size_t r = 0; r < one.row_count(); ++r) {
    EXPECT_EQ(twice.columns[keys].int64s[r], 2 * one.columns[keys].int64s[r]);  // count(*)
    if (!one.columns[keys + 1].is_null(r)) {
      EXPECT_NEAR(twice.columns[keys + 1].doubles[r], 2 * one.columns[keys + 1].doubles[r], 1e-6);  // sum(x)
    }
    if (!one.columns[keys + 2].is_null(r)) {
      EXPECT_EQ(twice.columns[keys + 2].doubles[r], one.columns[keys + 2].doubles[r]);  // min(x)
    }
    EXPECT_EQ(twice.columns[keys + 3].int64s[r], 2 * one.columns[keys + 3].int64s[r]);  // sum(y)
    if (!one.columns[keys + 4].is_null(r)) {
      EXPECT_NEAR(twice.columns[keys + 4].doubles[r], one.columns[keys + 4].doubles[r], 1e-9);  // avg(x)
    }
  }
}

// Parts that overlap in stretches (as key ranges' coarser sets do) and
// cell by cell: the merge copies the stretches and folds the shared cells;
// a cell held by two parts counts twice, sums twice, its MIN once.
TEST(CubeCpu, PartsOverlappingInStretchesMergeByKey) {
  const table::Table facts = test::random_table(6000, 9);
  CubeSpec spec = parse_dims("a>b, c");
  parse_measures("count(*), sum(y), min(x)", spec, facts);
  const CodedTable coded = code_table(facts, spec);
  StageTimes stages;
  const std::vector<SetCells> whole = build_cpu_sequential(coded, spec, stages, false);
  // Part 0: the first two thirds of each set's cells; part 1: empty; part
  // 2: the last two thirds but every fifth cell; part 3: every seventh cell
  // and the fifths of the last third. Each cell is in one part at least.
  auto holds = [](std::size_t part, std::size_t i, std::size_t n) {
    switch (part) {
      case 0: return i < 2 * n / 3;
      case 2: return i >= n / 3 && i % 5 != 0;
      case 3: return i % 7 == 0 || (i >= 2 * n / 3 && i % 5 == 0);
      default: return false;
    }
  };
  std::vector<std::vector<SetCells>> parts(4);
  for (std::size_t p = 0; p < 4; ++p)
    for (const SetCells& set : whole) {
      SetCells part = empty_cells(coded);
      for (std::size_t i = 0; i < set.keys.size(); ++i) {
        if (!holds(p, i, set.keys.size())) continue;
        part.keys.push_back(set.keys[i]);
        for (std::size_t a = 0; a < coded.slots.size(); ++a) {
          part.bits[a].push_back(set.bits[a][i]);
          if (!set.high[a].empty()) part.high[a].push_back(set.high[a][i]);
          if (!set.count[a].empty()) part.count[a].push_back(set.count[a][i]);
        }
      }
      parts[p].push_back(std::move(part));
    }
  const std::vector<SetCells> merged = merge_parts(coded, parts);
  const table::Table one = finish_table(coded, spec, whole), got = finish_table(coded, spec, merged);
  // So the merged cells are whole's, in order, each `times` over.
  ASSERT_EQ(got.row_count(), one.row_count());
  const std::size_t keys = spec.columns.size() + 1;
  std::size_t row = 0;
  for (const SetCells& set : whole)
    for (std::size_t i = 0; i < set.keys.size(); ++i, ++row) {
      const std::int64_t times = holds(0, i, set.keys.size()) + holds(2, i, set.keys.size()) + holds(3, i, set.keys.size());
      ASSERT_GE(times, 1);
      for (std::size_t c = 0; c < keys; ++c) EXPECT_EQ(got.columns[c].is_null(row), one.columns[c].is_null(row)) << row;
      EXPECT_EQ(got.columns[keys].int64s[row], times * one.columns[keys].int64s[row]) << row;          // count(*)
      EXPECT_EQ(got.columns[keys + 1].int64s[row], times * one.columns[keys + 1].int64s[row]) << row;  // sum(y)
      EXPECT_EQ(got.columns[keys + 2].is_null(row), one.columns[keys + 2].is_null(row)) << row;
      if (!one.columns[keys + 2].is_null(row))
        EXPECT_EQ(got.columns[keys + 2].doubles[row], one.columns[keys + 2].doubles[row]) << row;  // min(x)
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

// A table "facts" of a grouping column g and an int64 measure v, no NULLs.
table::Table g_and_v(table::Column g, std::vector<std::int64_t> v) {
  table::Table facts;
  facts.name = "facts";
  g.name = "g";
  table::Column values;
  values.name = "v";
  values.type = table::ColumnType::Int64;
  values.int64s = std::move(v);
  facts.columns = {std::move(g), std::move(values)};
  for (table::Column& c : facts.columns) c.nulls.assign(facts.columns[1].int64s.size(), 0);
  return facts;
}

// One code stands for +0.0 and -0.0; a column whose zeros are all -0.0
// prints its zero group as -0, as SQL's GROUP BY (and DuckDB) do, and a
// column with both signs prints no -0 (a group of +0.0 alone must not).
TEST(CubeCpu, AColumnOfNegativeZerosPrintsMinusZero) {
  for (const bool mixed : {false, true}) {
    table::Column g;
    g.type = table::ColumnType::Double;
    g.doubles = {-0.0, 1.5, mixed ? 0.0 : -0.0};
    const table::Table facts = g_and_v(g, {1, 2, 3});
    CubeSpec spec = parse_dims("g");
    parse_measures("sum(v)", spec, facts);
    for (Algorithm a : {Algorithm::CpuSequential, Algorithm::CpuPartitioned}) {
      const CubeResult r = build_cube(facts, spec, with(a));
      ASSERT_EQ(r.table.row_count(), 3u) << algorithm_name(a);  // 0, 1.5, ()
      EXPECT_EQ(r.table.columns[1].doubles[0], 0.0);
      EXPECT_EQ(std::signbit(r.table.columns[1].doubles[0]), !mixed) << algorithm_name(a) << (mixed ? ", mixed" : "");
      EXPECT_EQ(r.table.columns[2].int64s[0], 4);
    }
  }
  // GROUP BY (v, g): the group (2, +0.0) holds no -0.0 and must print 0.
  table::Column g;
  g.type = table::ColumnType::Double;
  g.doubles = {-0.0, 0.0};
  const table::Table facts = g_and_v(g, {1, 2});
  CubeSpec spec = parse_dims("v, g");
  parse_measures("count(*)", spec, facts);
  const CubeResult r = build_cube(facts, spec, with(Algorithm::CpuPartitioned));
  for (std::size_t row = 0; row < r.table.row_count(); ++row) {
    if (!r.table.columns[2].is_null(row) && r.table.columns[1].int64s[row] == 2) {
      EXPECT_FALSE(std::signbit(r.table.columns[2].doubles[row])) << "row " << row;
    }
  }
}

// Integer sums are exact in 128 bits; one that leaves int64 is an error
// naming the aggregate, the cube's row and its set.
TEST(CubeCpu, AnIntegerSumOutsideInt64NamesItsCell) {
  table::Column g;
  g.type = table::ColumnType::Int64;
  g.int64s = {1, 2, 2};
  const table::Table facts = g_and_v(g, {5, std::numeric_limits<std::int64_t>::max(), 1});
  CubeSpec spec = parse_dims("g");
  parse_measures("sum(v)", spec, facts);
  for (Algorithm a : {Algorithm::CpuSequential, Algorithm::CpuPartitioned}) {
    try {
      build_cube(facts, spec, with(a));
      ADD_FAILURE() << algorithm_name(a) << ": no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("sum(v) of the cell in row 2 of the cube (set (g))"), std::string::npos)
          << e.what();
    }
  }
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
  EXPECT_NE(message("a", "", "sum(x), sum(x)").find("two columns named 'sum_x'"), std::string::npos);
  EXPECT_THROW(parse_algorithm("gpu-fast"), InputError);

  // Twelve columns of 40 values each: 40^12 intersections pass 2^63.
  table::Table wide;
  wide.name = "wide";
  std::string dims;
  for (int c = 0; c < 12; ++c) {
    table::Column col;
    col.name = "c" + std::to_string(c);
    for (int r = 0; r < 40; ++r) col.int64s.push_back(r * 1000 + c);
    wide.columns.push_back(col);
    dims += (c ? "," : "") + col.name;
  }
  CubeSpec spec = parse_dims(dims);
  parse_measures("count(*)", spec, wide);
  try {
    build_cube(wide, spec, with(Algorithm::CpuSequential));
    ADD_FAILURE() << "a key past 2^63 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 2^63 intersections"), std::string::npos) << e.what();
  }
  // Offsets that would pass 2^63 (values a million apart in 4 rows) are
  // coded by rank instead.
  table::Table sparse;
  sparse.name = "sparse";
  for (const char* name : {"p", "q", "r", "s"}) {
    table::Column col;
    col.name = name;
    col.int64s = {1, 1'000'000, 5, 999'999};
    sparse.columns.push_back(col);
  }
  CubeSpec four = parse_dims("p, q, r, s");
  parse_measures("count(*)", four, sparse);
  EXPECT_EQ(build_cube(sparse, four, with(Algorithm::CpuSequential)).table.row_count(), 61u);  // 15 sets of 4 rows each, and ()
}

TEST(CubeCpu, SqlsGpuEngineRefusesWhatTheCubeOperatorCannotAnswer) {
  sql::TablesInMemory catalog;
  catalog.add(std::make_shared<table::Table>(test::random_table(20, 4)));
  sql::SqlOptions options;
  options.engine = sql::SqlEngine::Gpu;
  auto refusal = [&](const std::string& query) -> std::string {
    try {
      sql::run(catalog, query, options);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(refusal("SELECT a FROM facts").find("has no GROUP BY"), std::string::npos);
  EXPECT_NE(refusal("SELECT count(*) FROM facts GROUP BY ()").find("groups by no column"), std::string::npos);
  EXPECT_NE(refusal("SELECT a, count(*) FROM facts WHERE a > 0 GROUP BY ROLLUP(a)").find("WHERE"), std::string::npos);
  EXPECT_NE(refusal("SELECT a + 1, count(*) FROM facts GROUP BY CUBE(a + 1)").find("an expression, not a column"),
            std::string::npos);
  EXPECT_NE(refusal("SELECT a, sum(x * 2) FROM facts GROUP BY a").find("argument is an expression"), std::string::npos);
  EXPECT_NE(refusal("SELECT a, count(DISTINCT b) FROM facts GROUP BY a").find("DISTINCT"), std::string::npos);
  EXPECT_NE(refusal("SELECT a, count(*) FROM facts GROUP BY GROUPING SETS ((a), (a))").find("appears twice"),
            std::string::npos);
  EXPECT_NE(refusal("SELECT a FROM facts GROUP BY a").find("no aggregate"), std::string::npos);
  EXPECT_NE(refusal("SELECT a FROM facts").find("--engine cpu-parallel answers it"), std::string::npos);
  if (!gpu_available()) {
    EXPECT_NE(refusal("SELECT a, count(*) FROM facts GROUP BY ROLLUP(a)").find("gpu-lattice needs"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuolap::cube
