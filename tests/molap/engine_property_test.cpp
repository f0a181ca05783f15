// Every engine this machine has equals cpu-serial on randomized cubes.
#include <gtest/gtest.h>

#include <tbb/global_control.h>

#include <algorithm>
#include <bit>
#include <numeric>
#include <set>
#include <string>

#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"
#include "molap/cpu_engines.hpp"
#include "support/compare_results.hpp"
#include "molap/random_cube.hpp"
#include "molap/result_check.hpp"

namespace gpuolap {
namespace {

using testing::expect_same_bits;

// The CPU engines' answers equal the oracle's bit for bit: sums are exact.
void check_engine_on_random_cubes(Engine& engine, int cubes, int queries_per_cube) {
  CpuSerialEngine oracle;
  int exact_grids = 0, queries = 0;
  for (int seed = 1; seed <= cubes; ++seed) {
    const auto cube = random_cube(static_cast<uint64_t>(seed), /*page_size=*/1 + seed % 97);
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 7919);
    for (int q = 0; q < queries_per_cube; ++q) {
      const AreaQuery query = random_query(rng, cube.schema);
      const AggregationMap map(cube.schema, query);
      const AreaResult want = oracle.run(cube.facts, map, query);
      const AreaResult got = engine.run(cube.facts, map, query);
      expect_same_bits(want, got,
                       "cube seed " + std::to_string(seed) + " query " + std::to_string(q) + " (" +
                           aggregate_name(query.aggregate) + ")");
      if (::testing::Test::HasFailure()) return;
      exact_grids += map.sum_grid(cube.facts, query.measure).exact;
      ++queries;
    }
  }
  // The random cubes' values (eighths, and millions beside hundredths) and
  // weights fit the exact grid: the answers are the exactly rounded sums.
  EXPECT_EQ(exact_grids, queries);
}

TEST(CpuParallelEngine, EqualsCpuSerialOnRandomCubes) {
  CpuParallelEngine engine;
  check_engine_on_random_cubes(engine, 150, 12);
}

// Two-phase aggregation (class tuples, then expanded) where the gpu engine
// would take it, one reduction for a one-target area, direct aggregation
// elsewhere: each equals the oracle, and the random cubes reach each.
TEST(CpuParallelEngine, TwoPhaseAndDirectBothEqualCpuSerial) {
  CpuParallelEngine engine;
  CpuSerialEngine oracle;
  int two_phase = 0, direct = 0, one_target = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    const auto cube = random_cube(seed, 1 + seed % 31);
    std::mt19937_64 rng(seed * 31);
    for (int q = 0; q < 10; ++q) {
      const AreaQuery query = random_query(rng, cube.schema);
      const AggregationMap map(cube.schema, query);
      const AreaResult got = engine.run(cube.facts, map, query);
      const std::string plan = engine.last_plan();
      (plan.rfind("two-phase", 0) == 0 ? two_phase : plan.rfind("one target", 0) == 0 ? one_target : direct)++;
      expect_same_bits(oracle.run(cube.facts, map, query), got,
                       "cube seed " + std::to_string(seed) + " query " + std::to_string(q) + " (" + plan + ")");
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(two_phase, 50);
  EXPECT_GT(direct, 50);
  EXPECT_GT(one_target, 10);
}

// M1's area (every dimension a weight-1 total) is one reduction over the
// values: every aggregate equals the oracle's, and the sum has the same
// bits on every run.
TEST(CpuParallelEngine, AnAreaOfTotalsIsOneReduction) {
  const GeneratedCube cube = generate_cube("machines", 0.002, 42);
  const auto m1 = std::find_if(cube.queries.begin(), cube.queries.end(), [](const NamedQuery& q) { return q.name == "M1"; });
  ASSERT_NE(m1, cube.queries.end());
  AreaQuery query = parse_query_json(cube.schema, m1->json, "M1");
  CpuParallelEngine engine;
  for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::avg, Aggregate::min, Aggregate::max}) {
    query.aggregate = a;
    const AggregationMap map(cube.schema, query);
    const AreaResult got = engine.run(cube.facts, map, query);
    EXPECT_NE(engine.last_plan().find("one reduction"), std::string::npos) << engine.last_plan();
    expect_same_bits(CpuSerialEngine().run(cube.facts, map, query), got, aggregate_name(a));
    for (int run = 0; run < 3; ++run) EXPECT_EQ(engine.run(cube.facts, map, query).values, got.values) << aggregate_name(a);
  }
}

// Exact sums: the same bits on every run, whatever the threads, and the
// same as cpu-serial's.
TEST(CpuParallelEngine, TheThesisQueriesGiveTheSameBitsOnEveryRunAndThreadCount) {
  const GeneratedCube cube = generate_cube("biker", 0.005, 7);  // 86 pages: work for several threads
  for (const NamedQuery& named : cube.queries) {
    const AreaQuery query = parse_query_json(cube.schema, named.json, named.name);
    const AggregationMap map(cube.schema, query);
    CpuParallelEngine engine;
    const AreaResult first = engine.run(cube.facts, map, query);
    expect_same_bits(CpuSerialEngine().run(cube.facts, map, query), first, named.name + " (" + engine.last_plan() + ")");
    for (const int threads : {1, 2, 3, 8}) {
      tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
      for (int run = 0; run < 3; ++run) {
        const AreaResult again = engine.run(cube.facts, map, query);
        ASSERT_EQ(again.targets, first.targets) << named.name;
        for (size_t t = 0; t < first.values.size(); ++t)
          ASSERT_EQ(std::bit_cast<uint64_t>(again.values[t]), std::bit_cast<uint64_t>(first.values[t]))
              << named.name << " (" << engine.last_plan() << ") target " << first.targets[t] << " with " << threads
              << " threads";
      }
    }
  }
}

// Values too far apart for the exact grid (1e-200 beside 1e200): each term
// is rounded to the grid, so the engines stay in one phase (a class tuple's
// sum would round apart from its facts') and still agree to the bit.
TEST(CpuParallelEngine, ValuesTooWideForTheExactGridStayInOnePhase) {
  int would_be_two_phase = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const auto cube = random_cube(seed, 1 + seed % 31);
    std::vector<double> wide(cube.facts.size());
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<double>(1 + rng() % 2000) * (i % 2 ? 1e200 : 1e-200);
    if (wide.size() < 2) continue;
    const FactTable facts = with_values(cube, wide);
    for (int q = 0; q < 10; ++q) {
      AreaQuery query = random_query(rng, cube.schema);
      query.measure = 0;
      query.aggregate = Aggregate::sum;
      const AggregationMap map(cube.schema, query);
      ASSERT_FALSE(map.sum_grid(facts, 0).exact);
      CpuParallelEngine engine;
      const AreaResult got = engine.run(facts, map, query);
      EXPECT_EQ(engine.last_plan().rfind("two-phase", 0), std::string::npos) << engine.last_plan();
      const AreaResult exact_values = engine.run(cube.facts, map, query);
      would_be_two_phase += engine.last_plan().rfind("two-phase", 0) == 0;
      expect_same_bits(CpuSerialEngine().run(facts, map, query), got,
                       "cube seed " + std::to_string(seed) + " query " + std::to_string(q));
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(would_be_two_phase, 20);
}

// An exact grid too wide for carry-save limbs (k·2^75 beside k·2^-70: some
// 160 bits) keeps the 192-bit words, in two phases and in one-target
// reductions, and agrees to the bit; everyday values take the limbs.
TEST(CpuParallelEngine, SumsTooWideForCarrySaveLimbsUseTheWords) {
  int two_phase[2] = {0, 0};
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const auto cube = random_cube(seed, 1 + seed % 31);
    std::vector<double> values(cube.facts.size());
    std::mt19937_64 rng(seed);
    const bool too_wide = seed % 2 == 0;
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<double>(1 + rng() % 2000) * (too_wide ? (i % 2 ? 0x1p75 : -0x1p-70) : (i % 2 ? 1e15 : -0.01));
    const FactTable facts = with_values(cube, values);
    for (int q = 0; q < 10; ++q) {
      AreaQuery query = random_query(rng, cube.schema);
      query.measure = 0;
      query.aggregate = q % 2 ? Aggregate::sum : Aggregate::avg;
      const AggregationMap map(cube.schema, query);
      const SumGrid grid = map.sum_grid(facts, 0);
      ASSERT_TRUE(grid.exact);
      if (too_wide) ASSERT_EQ(grid.limb_bits, 0);
      CpuParallelEngine engine;
      const AreaResult got = engine.run(facts, map, query);
      two_phase[grid.limb_bits > 0] += engine.last_plan().rfind("two-phase", 0) == 0;
      expect_same_bits(CpuSerialEngine().run(facts, map, query), got,
                       "cube seed " + std::to_string(seed) + " query " + std::to_string(q));
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_GT(two_phase[0], 10);
  EXPECT_GT(two_phase[1], 10);
}

TEST(CpuParallelEngine, EqualsCpuSerialOnAreasTooLargeForDenseArrays) {
  // Three flat dimensions of 120 bases plus a total: "*" lists 121^3 cells,
  // more than the dense-array limit, so the hashed path runs.
  std::vector<Dimension> dims;
  for (int d = 0; d < 3; ++d) {
    std::vector<ElementSpec> specs;
    ElementSpec total{"All", {}};
    for (int b = 0; b < 120; ++b) {
      specs.push_back({"e" + std::to_string(b), {}});
      total.children.emplace_back(specs.back().name, b % 3 == 0 ? -0.5 : 1.0);
    }
    specs.push_back(total);
    dims.push_back(Dimension::build("D" + std::to_string(d), specs, "test"));
  }
  Schema schema("big", std::move(dims), {"V"}, "test");
  std::mt19937_64 rng(5);
  std::set<uint64_t> keys;
  while (keys.size() < 20000) {
    uint32_t ids[3] = {static_cast<uint32_t>(rng() % 120), static_cast<uint32_t>(rng() % 120),
                       static_cast<uint32_t>(rng() % 120)};
    keys.insert(schema.codec().encode(ids));
  }
  std::vector<double> v;
  for (size_t i = 0; i < keys.size(); ++i) v.push_back(static_cast<double>(rng() % 2001) - 1000.0);
  FactTable facts(schema.codec(), {keys.begin(), keys.end()}, {v}, 512);
  ASSERT_GT(uint64_t{121} * 121 * 121, CpuParallelEngine::kDenseTargetLimit);

  for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::avg, Aggregate::min, Aggregate::max}) {
    AreaQuery query{0, a, {}};
    for (int d = 0; d < 3; ++d) {
      std::vector<ElementId> all(121);
      std::iota(all.begin(), all.end(), 0u);
      query.area.push_back(all);
    }
    const AggregationMap map(schema, query);
    const AreaResult want = CpuSerialEngine().run(facts, map, query);
    const AreaResult got = CpuParallelEngine().run(facts, map, query);
    expect_same_bits(want, got, aggregate_name(a));
  }
}

TEST(CpuParallelEngine, SkipsPagesWithoutRelevantCellsYetFindsTheRest) {
  // One dimension of 1000 bases; facts on every base; an area naming a few
  // bases far apart, so most pages are skipped by their summaries.
  std::vector<ElementSpec> specs;
  for (int b = 0; b < 1000; ++b) specs.push_back({"e" + std::to_string(b), {}});
  std::vector<Dimension> dims;
  dims.push_back(Dimension::build("D", specs, "test"));
  Schema schema("pages", std::move(dims), {"V"}, "test");
  std::vector<uint64_t> keys(1000);
  std::vector<double> v(1000);
  for (uint32_t b = 0; b < 1000; ++b) {
    keys[b] = b;
    v[b] = b;
  }
  FactTable facts(schema.codec(), keys, {v}, 16);
  AreaQuery query{0, Aggregate::sum, {{3, 500, 999}}};
  const AggregationMap map(schema, query);
  const AreaResult got = CpuParallelEngine().run(facts, map, query);
  EXPECT_EQ(got.targets, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(got.values, (std::vector<double>{3, 500, 999}));
}

}  // namespace
}  // namespace gpuolap
