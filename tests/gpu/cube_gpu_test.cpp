// Cube creation on the GPU: every GPU algorithm against cpu-sequential on
// random tables (empty, one row, unsorted and sorted, small and large), the
// table kept resident between builds, and two tables in turn.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "cube/cube_cases.hpp"
#include "sql/binder.hpp"
#include "sql/result_format.hpp"
#include "sql/sql.hpp"

namespace gpuolap::cube {
namespace {

BuildOptions with(Algorithm a) {
  BuildOptions o;
  o.algorithm = a;
  return o;
}

const std::vector<Algorithm> kGpuAlgorithms{Algorithm::GpuNaive, Algorithm::GpuSorted, Algorithm::GpuLattice,
                                            Algorithm::GpuExpand};

TEST(CubeGpu, EveryAlgorithmEqualsCpuSequential) {
  ASSERT_TRUE(gpu_available());
  for (std::size_t rows : {0, 1, 2, 3000, 200000})
    for (bool sorted : {false, true}) {
      const table::Table facts = test::random_table(rows, 21 + static_cast<std::uint32_t>(rows), sorted);
      for (const test::SpecCase& c : test::spec_cases()) {
        const CubeSpec spec = test::make_spec(c, facts);
        const PreparedCube prepared(facts, spec);
        const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
        for (Algorithm a : kGpuAlgorithms)
          // Run 1 uploads; run 2 finds the table resident, and its host
          // vectors sized as run 1's cells while the GPU works.
          for (int run = 0; run < 2; ++run) {
            const CubeResult got = prepared.build(with(a));
            EXPECT_EQ(compare_results(want.table, got.table), "")
                << algorithm_name(a) << ", " << c.name << ", " << rows << " rows" << (sorted ? ", sorted" : "")
                << ", run " << run + 1;
          }
      }
    }
}

// The measures that take the NULL and special-value branches of each
// aggregate's words (the atomics; the runs' reduce-by-key calls,
// groupby/gpu/slot_reduce_by_key.cuh): integer SUM, AVG, MAX and COUNT over
// a nullable column; MIN, MAX, AVG of doubles with NaN, -0.0 and NULLs;
// MAX of strings; COUNT and AVG of a column without NULL flags. Dimensions that lead the sorted table's order give the
// lattice sorted rows; the others, rows in no order.
TEST(CubeGpu, NullAndSpecialValuedMeasuresEqualCpuSequential) {
  ASSERT_TRUE(gpu_available());
  const std::pair<const char*, const char*> cases[] = {
      {"a>b, c", "min(d), max(d), avg(d), sum(d), count(d), max(z), count(*)"},
      {"b>c, e", "sum(a), avg(a), max(a), min(a), count(a), min(d), max(d)"},
      // y has no NULL flags: its count and AVG's count are the runs' lengths.
      {"a>b, c", "avg(y), count(y), sum(x), count(x)"},
  };
  for (std::size_t rows : {1, 3000, 200000})
    for (bool sorted : {false, true}) {
      table::Table facts = test::random_table(rows, 5 + static_cast<std::uint32_t>(rows), sorted);
      facts.columns[6].nulls.clear();  // y, as a column loaded without NULLs
      for (const auto& [dims, measures] : cases) {
        CubeSpec spec = parse_dims(dims);
        parse_measures(measures, spec, facts);
        const PreparedCube prepared(facts, spec);
        const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
        for (Algorithm a : kGpuAlgorithms) {
          const CubeResult got = prepared.build(with(a));
          EXPECT_EQ(compare_results(want.table, got.table), "")
              << algorithm_name(a) << ", " << dims << ": " << measures << ", " << rows << " rows"
              << (sorted ? ", sorted" : "");
        }
      }
    }
}

// The contexts the several-context tests build on: two and three on GPU 0
// (the code of several GPUs, on one), and every GPU where there are more.
std::vector<std::vector<int>> context_lists() {
  std::vector<std::vector<int>> lists{{0, 0}, {0, 0, 0}};
  if (gpu_count() > 1) {
    lists.emplace_back();
    for (int d = 0; d < gpu_count(); ++d) lists.back().push_back(d);
  }
  return lists;
}

std::string contexts_text(const std::vector<int>& devices) {
  std::string text;
  for (int d : devices) text += (text.empty() ? "" : ",") + std::to_string(d);
  return "contexts on GPUs " + (text.empty() ? "(one)" : text);
}

// An upload in chunks, each aggregated while the next is copied
// (gpu-lattice's finest set from sorted rows or into its dense cube,
// gpu-naive; the others take the rows in one copy): chunks cut at run
// borders on sorted rows, more chunks asked for than rows or runs, over
// one context and two, y without NULL flags. Run 1 uploads in chunks, run
// 2 finds the table resident, runs 3 and 4 upload again (not kept
// resident), run 4 with the stage clocks off.
TEST(CubeGpu, UploadInChunksEqualsCpuSequential) {
  ASSERT_TRUE(gpu_available());
  const std::vector<test::SpecCase> all = test::spec_cases();
  // The cube of three is sorted by the sorted table's order (the sorted
  // rows' chunks); the total is one run (no cut fits).
  const std::vector<test::SpecCase> cases{all[0], all[2], all[3], all[5]};
  for (std::size_t rows : {1, 3000, 200000})
    for (bool sorted : {false, true}) {
      table::Table facts = test::random_table(rows, 9 + static_cast<std::uint32_t>(rows), sorted);
      facts.columns[6].nulls.clear();  // sum(y): a value column the chunks offset without NULL flags
      for (const test::SpecCase& c : cases) {
        const PreparedCube prepared(facts, test::make_spec(c, facts));
        const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
        for (Algorithm a : kGpuAlgorithms)
          for (int chunks : {3, 4096})
            for (const std::vector<int>& devices : {std::vector<int>{}, std::vector<int>{0, 0}})
              for (int run = 0; run < 4; ++run) {
                BuildOptions o = with(a);
                o.upload_chunks = chunks;
                o.devices = devices;
                o.keep_resident = run < 2;
                o.timing = run < 3;
                const CubeResult got = prepared.build(o);
                const std::string where = std::string(algorithm_name(a)) + ", " + c.name + ", " +
                                          std::to_string(rows) + " rows" + (sorted ? ", sorted" : "") + ", " +
                                          std::to_string(chunks) + " chunks, " + contexts_text(devices) +
                                          ", run " + std::to_string(run + 1);
                EXPECT_EQ(compare_results(want.table, got.table), "") << where;
                // The chunked path ran: a stage beside the upload.
                const bool beside = std::any_of(got.stage_ms.begin(), got.stage_ms.end(), [](const auto& stage) {
                  return stage.first.ends_with(", beside the upload");
                });
                const bool one_run = a == Algorithm::GpuLattice && std::string(c.name) == "total only";
                const bool chunked = (a == Algorithm::GpuLattice || a == Algorithm::GpuNaive) && rows >= 3000 && !one_run;
                if (o.timing) {
                  EXPECT_EQ(beside, chunked && run != 1) << where;
                }
              }
      }
    }
}

// Keys too wide for dense cubes: the lattice sorts a parent's cells for
// (u, v), the sets and gpu-expand's keys are rank-coded; over several
// contexts, the lattice merges the finest cells by sorting them too.
TEST(CubeGpu, WideKeysEqualCpuSequential) {
  const table::Table facts = test::wide_table(3000, 3);
  std::vector<std::vector<int>> lists = context_lists();
  lists.insert(lists.begin(), std::vector<int>{});
  for (const std::string& sets : test::wide_sets()) {
    const PreparedCube prepared(facts, test::wide_spec(sets, facts));
    const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
    for (Algorithm a : kGpuAlgorithms)
      for (const std::vector<int>& devices : lists) {
        BuildOptions o = with(a);
        o.devices = devices;
        EXPECT_EQ(compare_results(want.table, prepared.build(o).table), "")
            << algorithm_name(a) << ", sets " << sets << ", " << contexts_text(devices);
      }
  }
}

// Several contexts: the rows in slices, a part each, merged (gpu-lattice's
// finest cells on the first context's GPU, the others' sets on the host),
// as over several GPUs; or cut by ranges of the finest key, the finest
// set's parts side by side. Run 2 finds the slices resident and the
// vectors sized as run 1's cells.
TEST(CubeGpu, SlicesOverSeveralContextsMergeIntoTheSameCube) {
  for (std::size_t rows : {0, 2, 5000, 100000})
    for (bool sorted : {false, true}) {
      const table::Table facts = test::random_table(rows, 31 + static_cast<std::uint32_t>(rows), sorted);
      for (const test::SpecCase& c : test::spec_cases()) {
        const PreparedCube prepared(facts, test::make_spec(c, facts));
        const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
        for (Algorithm a : kGpuAlgorithms)
          for (const std::vector<int>& devices : context_lists())
            for (GpuSplit split : {GpuSplit::Rows, GpuSplit::Keys})
              for (int run = 0; run < 2; ++run) {
                BuildOptions o = with(a);
                o.devices = devices;
                o.gpu_split = split;
                o.timing = run == 1;  // events recorded on each context's GPU, from any thread
                EXPECT_EQ(compare_results(want.table, prepared.build(o).table), "")
                    << algorithm_name(a) << ", " << c.name << ", " << rows << " rows, " << contexts_text(devices)
                    << ", split by " << split_name(split) << (sorted ? ", sorted" : "") << ", run " << run + 1;
              }
      }
    }
}

// Most rows in one cell: its key range holds them all and the others are
// empty or nearly (cut by key as asked), or auto cuts by position.
TEST(CubeGpu, KeyRangesOfOneCrowdedCellStillGiveTheCube) {
  for (bool sorted : {false, true}) {
    table::Table facts = test::random_table(20000, 77);
    for (std::size_t col = 0; col < 5; ++col) {  // the grouping columns a..e
      table::Column& c = facts.columns[col];
      for (std::size_t r = 1; r < facts.row_count(); ++r)
        if (r % 8) {
          if (!c.int64s.empty()) c.int64s[r] = c.int64s[0];
          if (!c.int32s.empty()) c.int32s[r] = c.int32s[0];
          if (!c.doubles.empty()) c.doubles[r] = c.doubles[0];
          c.nulls[r] = c.nulls[0];
        }
    }
    if (sorted) table::sort_table(facts, {"a", "b", "c", "d", "e"});
    for (const test::SpecCase& c : test::spec_cases()) {
      const PreparedCube prepared(facts, test::make_spec(c, facts));
      const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
      for (Algorithm a : kGpuAlgorithms)
        for (GpuSplit split : {GpuSplit::Auto, GpuSplit::Keys}) {
          BuildOptions o = with(a);
          o.devices = {0, 0, 0, 0};
          o.gpu_split = split;
          o.timing = true;
          const CubeResult got = prepared.build(o);
          EXPECT_EQ(compare_results(want.table, got.table), "")
              << algorithm_name(a) << ", " << c.name << ", split by " << split_name(split) << (sorted ? ", sorted" : "");
          // The planner saw the crowded range: auto cut by position.
          bool side_by_side = false;
          for (const auto& [name, ms] : got.stage_ms) side_by_side |= name.find("key ranges merged") != std::string::npos;
          EXPECT_EQ(side_by_side, split == GpuSplit::Keys) << algorithm_name(a) << ", " << c.name;
        }
    }
  }
}

// The lattice's dense sets go in waves, one launch each (coarser() in
// cube_gpu.cu). A set whose best parent is still queued takes a computed
// parent of at most 2^20 cells instead (as in the small cubes above, where
// one wave holds every set), or waits for the next wave when every
// computed one is larger. Here the finest set (p, q, r) holds about 1.8 M
// of its 9 M cells and (p, q) is bounded by 1.8 M: in the rollup, (p)
// waits for (p, q), and () for (p), three waves; in the product (p>q, r),
// (p) waits for (p, r), and (r) and () then take (p, r), computed in the
// wave before and small, in the second wave.
TEST(CubeGpu, WavesOfDenseSetsOverLargeParentsEqualCpuSequential) {
  std::mt19937_64 rng(5);
  table::Table facts = test::int64_table({"p", "q", "r", "y"});
  for (std::size_t row = 0; row < 2'000'000; ++row) {
    facts.columns[0].int64s.push_back(static_cast<std::int64_t>(rng() % 1500));
    facts.columns[1].int64s.push_back(static_cast<std::int64_t>(rng() % 1500));
    facts.columns[2].int64s.push_back(static_cast<std::int64_t>(rng() % 4));
    facts.columns[3].int64s.push_back(static_cast<std::int64_t>(rng() % 2001) - 1000);
  }
  for (table::Column& c : facts.columns) c.nulls.resize(facts.row_count(), 0);
  for (bool sorted : {false, true}) {
    if (sorted) table::sort_table(facts, {"p", "q", "r"});
    for (const char* dims : {"p>q>r", "p>q, r"}) {
      CubeSpec spec = parse_dims(dims);
      parse_measures("count(*), sum(y), min(y), avg(y)", spec, facts);
      const PreparedCube prepared(facts, spec);
      const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
      for (int run = 0; run < 2; ++run)
        EXPECT_EQ(compare_results(want.table, prepared.build(with(Algorithm::GpuLattice)).table), "")
            << dims << (sorted ? ", sorted" : "") << ", run " << run + 1;
    }
  }
}

// The two reductions of sorted rows into runs (BuildOptions::sorted_runs)
// over runs of about a chosen length: inside a lane's 16 rows, across
// lanes, warps (512 rows) and tiles (4,096), one run of every row; tables
// whose length is no multiple of these. gpu-lattice reduces the sorted
// rows (run 1 uploads them in chunks, run 2 finds them resident and takes
// the runs counted on the host), gpu-expand its sorted virtual rows
// (through an order, the runs counted on the GPU). The x values are
// multiples of 1/8, so their sums are exact in any order.
TEST(CubeGpu, SortedRunsOnePassAndCubEqualCpuSequential) {
  std::mt19937_64 rng(11);
  for (std::size_t rows : {1, 17, 4097, 100'003, 1'000'000})
    for (std::uint64_t run_length : {1, 3, 16, 33, 600, 5000, 2'000'000}) {
      if (rows == 1'000'000 && run_length < 16) continue;  // the smaller tables have these
      table::Table facts = test::int64_table({"p", "q", "y"});
      table::Column x;
      x.name = "x";
      x.type = table::ColumnType::Double;
      std::int64_t p = 0;
      for (std::size_t row = 0; row < rows; ++row) {
        if (row > 0 && rng() % run_length == 0) ++p;  // a new run, on average every run_length rows
        facts.columns[0].int64s.push_back(p);
        facts.columns[1].int64s.push_back(p % 7);
        facts.columns[2].int64s.push_back(static_cast<std::int64_t>(rng() % 2'000'001) - 1'000'000 +
                                          (rng() % 2 ? std::int64_t{1} << 40 : 0));
        x.doubles.push_back(static_cast<double>(static_cast<std::int64_t>(rng() % 20001) - 10000) / 8.0);
        x.nulls.push_back(rng() % 10 == 0);
      }
      facts.columns.push_back(std::move(x));
      for (table::Column& c : facts.columns) c.nulls.resize(rows, 0);
      CubeSpec spec = parse_dims("p, q");
      parse_measures("count(*), sum(y), min(y), max(y), avg(x), count(x), sum(x)", spec, facts);
      const PreparedCube prepared(facts, spec);
      const CubeResult want = prepared.build(with(Algorithm::CpuSequential));
      for (SortedRuns way : {SortedRuns::OnePass, SortedRuns::Cub})
        for (Algorithm a : {Algorithm::GpuLattice, Algorithm::GpuExpand})
          for (int run = 0; run < 2; ++run) {
            BuildOptions o = with(a);
            o.sorted_runs = way;
            o.upload_chunks = 5;
            EXPECT_EQ(compare_results(want.table, prepared.build(o).table), "")
                << algorithm_name(a) << ", " << sorted_runs_name(way) << ", " << rows << " rows in runs of about "
                << run_length << ", run " << run + 1;
          }
    }
}

TEST(CubeGpu, TwoTablesBuiltInTurnEachUseTheirOwnRows) {
  const table::Table one = test::random_table(5000, 1), two = test::random_table(7000, 2);
  const test::SpecCase c = test::spec_cases().front();
  const PreparedCube p1(one, test::make_spec(c, one)), p2(two, test::make_spec(c, two));
  const CubeResult want1 = p1.build(with(Algorithm::CpuSequential)), want2 = p2.build(with(Algorithm::CpuSequential));
  for (int round = 0; round < 2; ++round) {
    EXPECT_EQ(compare_results(want1.table, p1.build(with(Algorithm::GpuLattice)).table), "");
    EXPECT_EQ(compare_results(want2.table, p2.build(with(Algorithm::GpuLattice)).table), "");
  }
}

TEST(CubeGpu, AutoChoosesTheLatticeAndSaysWhy) {
  const table::Table facts = test::random_table(100, 3);
  const CubeResult r = build_cube(facts, test::make_spec(test::spec_cases().front(), facts), BuildOptions{});
  EXPECT_EQ(r.algorithm, Algorithm::GpuLattice);
  EXPECT_NE(r.why.find("smallest computed parent"), std::string::npos);
}

// SQL's gpu engine (the cube operator) answers as cpu-serial does: ROLLUP,
// CUBE, GROUPING SETS and a plain GROUP BY, with GROUPING(), HAVING, ORDER
// BY and LIMIT over the cells.
TEST(CubeGpu, SqlsGpuEngineAnswersAsCpuSerial) {
  for (bool sorted : {false, true}) {
    sql::TablesInMemory catalog;
    catalog.add(std::make_shared<table::Table>(test::random_table(20000, 9, sorted)));
    const std::vector<std::string> queries{
        "SELECT a, b, count(*), sum(x), avg(y) FROM facts GROUP BY ROLLUP(a, b) ORDER BY a NULLS FIRST, b NULLS FIRST",
        "SELECT GROUPING(a, c), a, c, min(z), max(x) FROM facts GROUP BY CUBE(a, c) ORDER BY 1, 2 NULLS FIRST, 3 NULLS FIRST",
        "SELECT d, e, count(x), sum(y) FROM facts GROUP BY GROUPING SETS ((d, e), (e), ()) HAVING count(*) > 3 "
        "ORDER BY d NULLS FIRST, e NULLS FIRST",
        "SELECT b, max(c), sum(x) FROM facts GROUP BY b ORDER BY b NULLS FIRST LIMIT 3",
        "SELECT b, count(*), sum(x) FROM facts GROUP BY GROUPING SETS ((b), ()) ORDER BY b NULLS FIRST",
    };
    for (const std::string& query : queries) {
      sql::SqlOptions serial, gpu;
      gpu.engine = sql::SqlEngine::Gpu;
      const std::string want = sql::format_result(sql::run(catalog, query, serial), sql::ResultFormat::Csv);
      const std::string got = sql::format_result(sql::run(catalog, query, gpu), sql::ResultFormat::Csv);
      test::expect_same_csv(want, got, query + (sorted ? ", sorted" : ""));
    }
  }
}

// The gpu engine's other route: a GROUP BY of one coded column, and an
// aggregate over a join to a dense dimension, by the shared-memory
// operators (src/groupby/shared_memory/), answer as cpu-serial does, with
// HAVING, ORDER BY and LIMIT; EXPLAIN says which route.
TEST(CubeGpu, SqlsGpuEngineTakesTheSharedMemoryOperatorsWhereTheyFit) {
  const std::size_t rows = 50'000, dims = 300;
  std::mt19937_64 rng(5);
  auto column = [](const char* name, table::ColumnType type) {
    table::Column c;
    c.name = name;
    c.type = type;
    return c;
  };
  auto f = std::make_shared<table::Table>();
  f->name = "f";
  f->columns = {column("a", table::ColumnType::Int64), column("s", table::ColumnType::String),
                column("x", table::ColumnType::Double), column("i", table::ColumnType::Int64),
                column("fk", table::ColumnType::Int64)};
  f->columns[1].dictionary = {"", "apple", "pear", "plum"};
  f->columns[4].nulls.assign(rows, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::uint64_t w = rng();
    f->columns[0].int64s.push_back(static_cast<std::int64_t>((w % 7 == 0) ? w % 2000 : w % 11));  // skewed codes
    f->columns[1].int32s.push_back(static_cast<std::int32_t>(w % 4));
    f->columns[2].doubles.push_back(static_cast<double>(static_cast<std::int64_t>(w >> 40) % 10000 - 5000));
    f->columns[3].int64s.push_back(static_cast<std::int64_t>(w >> 20) % 2000000 - 1000000);
    f->columns[4].int64s.push_back(static_cast<std::int64_t>(w % (dims + 20)) - 5);  // some without a match
    if (w % 101 == 0) f->columns[4].nulls[r] = 1, f->columns[4].int64s[r] = 0;
  }
  auto d = std::make_shared<table::Table>();
  d->name = "d";
  d->columns = {column("id", table::ColumnType::Int64), column("b", table::ColumnType::Int64),
                column("bd", table::ColumnType::Double)};
  for (std::size_t k = 0; k < dims; ++k) {
    d->columns[0].int64s.push_back(static_cast<std::int64_t>((k * 7) % dims));  // every id once, not in order
    d->columns[1].int64s.push_back(static_cast<std::int64_t>(rng() % 1000));
    d->columns[2].doubles.push_back(static_cast<double>(rng() % 1000) / 4);
  }
  sql::TablesInMemory catalog;
  catalog.add(f);
  catalog.add(d);
  const std::vector<std::string> queries{
      "SELECT a, count(*), sum(x), avg(x), min(x), max(x) FROM f GROUP BY a ORDER BY a",
      "SELECT s, count(*), sum(i) FROM f GROUP BY s HAVING count(*) > 10 ORDER BY 3 DESC, s LIMIT 3",
      "SELECT a, min(i), max(i), avg(i), count(i) FROM f GROUP BY a ORDER BY a",
      "SELECT a, count(*) FROM f GROUP BY a ORDER BY 2 DESC, a LIMIT 5",
      "SELECT count(*), sum(d.b), avg(d.b) FROM f JOIN d ON f.fk = d.id",
      "SELECT sum(d.bd), count(d.bd) FROM d JOIN f ON d.id = f.fk",
  };
  for (const std::string& query : queries) {
    sql::SqlOptions serial, gpu;
    gpu.engine = sql::SqlEngine::Gpu;
    const sql::QueryResult plan = sql::run(catalog, "EXPLAIN " + query, gpu);
    ASSERT_FALSE(plan.plan.empty());
    EXPECT_NE(plan.plan.front().find("shared-memory"), std::string::npos) << query << ": " << plan.plan.front();
    const std::string want = sql::format_result(sql::run(catalog, query, serial), sql::ResultFormat::Csv);
    const std::string got = sql::format_result(sql::run(catalog, query, gpu), sql::ResultFormat::Csv);
    test::expect_same_csv(want, got, query);
  }
  // Two keys go to the cube operator, and the plan says why not the other.
  sql::SqlOptions gpu;
  gpu.engine = sql::SqlEngine::Gpu;
  const sql::QueryResult two = sql::run(catalog, "EXPLAIN SELECT a, s, count(*) FROM f GROUP BY a, s", gpu);
  EXPECT_NE(two.plan.front().find("cube operator"), std::string::npos);
}

}  // namespace
}  // namespace gpuolap::cube
