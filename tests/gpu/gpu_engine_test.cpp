// The gpu engine against cpu-serial, on a GPU (ctest label `gpu`): every
// combination of its knobs on random cubes, and the thesis-shaped cubes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "molap/cpu_engines.hpp"
#include "molap/gpu/gpu_engine.hpp"
#include "gpu/runtime/device_info.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/fact_store.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"
#include "molap/planning/kernel_model.hpp"
#include "molap/random_cube.hpp"
#include "molap/result_check.hpp"
#include "molap/self_check.hpp"
#include "support/test_path.hpp"

namespace gpuolap {
namespace {

TEST(GpuEngine, EveryKnobCombinationEqualsCpuSerialOnRandomCubes) {
  const auto grid = gpu_option_grid();
  auto last = std::chrono::steady_clock::now();
  const SelfCheckResult r = self_check("gpu", grid, 8, 4, 11, [&](uint64_t done, uint64_t) {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last).count();
    if (s > 0.5) std::cerr << "slow configuration (" << s << " s): " << describe(grid[done - 1]) << "\n";
    last = now;
  });
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  EXPECT_GT(r.runs, 3000u);
}

TEST(GpuEngine, AutoEqualsCpuSerialOnRandomCubes) {
  const SelfCheckResult r = self_check("gpu", {GpuOptions{}}, 100, 8, 500);
  for (const auto& f : r.failures) ADD_FAILURE() << f;
  EXPECT_EQ(r.not_applicable, 0u);
}

// Values too far apart for the exact grid (1e-200 beside 1e200): each
// contribution is rounded to the grid on the device as on the host, the
// engine stays in one phase, and the answer is cpu-serial's to the bit;
// --two-phase on says why it cannot.
TEST(GpuEngine, ValuesTooWideForTheExactGridEqualCpuSerialInOnePhase) {
  const std::unique_ptr<Engine> engine = make_gpu_engine({}, "gpu", 0);
  GpuOptions two_phase;
  two_phase.two_phase = TwoPhase::on;
  const std::unique_ptr<Engine> forced = make_gpu_engine(two_phase, "gpu", 0);
  int queries = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const RandomCube cube = random_cube(seed, 1 + seed % 31);
    if (cube.facts.size() < 2) continue;
    std::vector<double> wide(cube.facts.size());
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i < wide.size(); ++i) wide[i] = static_cast<double>(1 + rng() % 2000) * (i % 2 ? 1e200 : 1e-200);
    const FactTable facts = with_values(cube, wide);
    for (int q = 0; q < 6; ++q) {
      AreaQuery query = random_query(rng, cube.schema);
      query.measure = 0;
      query.aggregate = q % 2 ? Aggregate::sum : Aggregate::avg;
      const AggregationMap map(cube.schema, query);
      if (!gpu_engine_limit(facts, map).empty()) continue;
      ASSERT_FALSE(map.sum_grid(facts, 0).exact);
      const AreaResult got = engine->run(facts, map, query);
      EXPECT_EQ(engine->last_plan().find("two-phase:"), std::string::npos) << engine->last_plan();
      EXPECT_EQ(compare_results(CpuSerialEngine().run(facts, map, query), got), "") << "seed " << seed << " query " << q;
      EXPECT_THROW(forced->run(facts, map, query), InputError);
      ++queries;
    }
  }
  EXPECT_GT(queries, 40);
}

// Values on an exact grid whose span is too wide for carry-save limbs
// (k·2^75 beside k·2^-70: some 160 bits) are added in the 192-bit words,
// in one phase or two, and equal cpu-serial to the bit; everyday values
// take the carry-save limbs (the plan says which).
TEST(GpuEngine, SumsTooWideForCarrySaveLimbsUseTheWords) {
  const std::unique_ptr<Engine> engine = make_gpu_engine({}, "gpu", 0);
  GpuOptions two_phase;
  two_phase.two_phase = TwoPhase::on;
  const std::unique_ptr<Engine> forced = make_gpu_engine(two_phase, "gpu", 0);
  int words = 0, limbs = 0;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const RandomCube cube = random_cube(seed, 1 + seed % 31);
    if (cube.facts.size() < 2) continue;
    std::vector<double> wide(cube.facts.size());
    std::mt19937_64 rng(seed);
    const bool too_wide = seed % 2 == 0;
    for (size_t i = 0; i < wide.size(); ++i)
      wide[i] = static_cast<double>(1 + rng() % 2000) * (too_wide ? (i % 2 ? 0x1p75 : -0x1p-70) : (i % 2 ? 1e15 : -0.01));
    const FactTable facts = with_values(cube, wide);
    for (int q = 0; q < 6; ++q) {
      AreaQuery query = random_query(rng, cube.schema);
      query.measure = 0;
      query.aggregate = q % 2 ? Aggregate::sum : Aggregate::avg;
      const AggregationMap map(cube.schema, query);
      if (!gpu_engine_limit(facts, map).empty()) continue;
      const SumGrid grid = map.sum_grid(facts, 0);
      ASSERT_TRUE(grid.exact);
      const AreaResult want = CpuSerialEngine().run(facts, map, query);
      for (Engine* e : {engine.get(), forced.get()}) {
        AreaResult got;
        try {
          got = e->run(facts, map, query);
        } catch (const InputError&) {
          continue;  // more class tuples than two-phase takes
        }
        EXPECT_EQ(compare_results(want, got), "") << "seed " << seed << " query " << q << ": " << e->last_plan();
        const bool said_words = e->last_plan().find("exact sums in 192-bit words") != std::string::npos;
        const bool said_limbs = e->last_plan().find("exact sums in carry-save limbs") != std::string::npos;
        EXPECT_EQ(said_words, grid.limb_bits == 0) << e->last_plan();
        EXPECT_EQ(said_limbs, grid.limb_bits > 0) << e->last_plan();
        (grid.limb_bits ? limbs : words) += 1;
      }
      if (too_wide) {
        EXPECT_EQ(grid.limb_bits, 0);
      }
    }
  }
  EXPECT_GT(words, 20);
  EXPECT_GT(limbs, 20);
}

// Runs the gpu engine under every configuration that can take the query and
// expects `want`; returns the plans of those runs (a configuration that does
// not fit the area, an InputError, is skipped).
std::vector<std::string> expect_configs_match(const FactTable& facts, const AggregationMap& map, const AreaQuery& q,
                                              const AreaResult& want, const std::vector<GpuOptions>& configs,
                                              const std::string& label) {
  std::vector<std::string> plans;
  for (const GpuOptions& o : configs) {
    EngineChoice gpu = make_engine("gpu", facts.size(), o);
    AreaResult got;
    try {
      got = gpu.engine->run(facts, map, q);
    } catch (const InputError&) {
      continue;
    }
    plans.push_back(gpu.engine->last_plan());
    EXPECT_EQ(compare_results(want, got), "")
        << label << " " << aggregate_name(q.aggregate) << " " << describe(o) << " (" << plans.back() << ")";
  }
  return plans;
}

void expect_thesis_queries_match(const GeneratedCube& cube, const std::vector<GpuOptions>& configs) {
  for (const NamedQuery& nq : cube.queries) {
    for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::min, Aggregate::max, Aggregate::avg}) {
      AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
      q.aggregate = a;
      const AggregationMap map(cube.schema, q);
      expect_configs_match(cube.facts, map, q, CpuParallelEngine().run(cube.facts, map, q), configs, nq.name);
    }
  }
}

std::vector<GpuOptions> main_variants() {
  std::vector<GpuOptions> configs{GpuOptions{}};
  for (StoreKind variant : {StoreKind::hash, StoreKind::dense, StoreKind::shared})
    for (Preagg preagg : {Preagg::none, Preagg::lane0, Preagg::stride, Preagg::match, Preagg::run}) {
      GpuOptions o;
      o.variant = variant;
      o.preagg = preagg;
      o.two_phase = TwoPhase::off;
      configs.push_back(o);
    }
  for (Preagg preagg : {Preagg::none, Preagg::lane0, Preagg::stride, Preagg::match, Preagg::run}) {
    GpuOptions o;
    o.preagg = preagg;
    o.two_phase = TwoPhase::on;
    configs.push_back(o);
  }
  return configs;
}

// The pair kernels (work list, CDP, hybrid) under their knobs.
// Two engines on one GPU, each with its own device context (the seam for
// several GPUs), take turns on the same queries and answer as cpu-serial.
TEST(GpuEngine, TwoEnginesOnOneGpuAnswerSideBySide) {
  const std::unique_ptr<Engine> engines[] = {make_gpu_engine({}, "gpu", 0), make_gpu_engine({}, "gpu", 0)};
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    for (int q = 0; q < 4; ++q) {
      const AreaQuery query = random_query(rng, cube.schema);
      const AggregationMap map(cube.schema, query);
      if (!gpu_engine_limit(cube.facts, map).empty()) continue;
      const AreaResult want = CpuSerialEngine().run(cube.facts, map, query);
      for (const auto& engine : engines)
        EXPECT_EQ(compare_results(want, engine->run(cube.facts, map, query)), "")
            << "seed " << seed << " query " << q;
    }
  }
}

TEST(GpuEngine, PairKernelsEqualCpuSerialOnRandomCubes) {
  // Each kernel must answer most of its runs (a shared store may not fit).
  for (KernelKind kernel : {KernelKind::work_list, KernelKind::cdp, KernelKind::hybrid}) {
    std::vector<GpuOptions> grid = pair_kernel_grid(false);
    std::erase_if(grid, [&](const GpuOptions& o) { return o.kernel != kernel; });
    const SelfCheckResult r = self_check("gpu", grid, 8, 4, 13);
    for (const auto& f : r.failures) ADD_FAILURE() << f;
    EXPECT_GT(r.runs, grid.size() * 8 * 4 * 3 / 4) << knob_name(kernel) << ": " << r.not_applicable << " not applicable";
  }
  const SelfCheckResult cdp = self_check("gpu-cdp", {GpuOptions{}}, 30, 6, 700);
  for (const auto& f : cdp.failures) ADD_FAILURE() << f;
  EXPECT_EQ(cdp.not_applicable, 0u);
}

std::vector<GpuOptions> pair_kernel_variants() {
  std::vector<GpuOptions> configs;
  for (KernelKind kernel : {KernelKind::work_list, KernelKind::cdp, KernelKind::hybrid})
    for (Preagg preagg : {Preagg::none, Preagg::stride}) {
      GpuOptions o;
      o.kernel = kernel;
      o.preagg = preagg;
      configs.push_back(o);
      if (kernel == KernelKind::work_list) continue;
      o.child_grid = ChildGrid::fixed;
      o.sync_every = 2;
      o.grid = 4;  // pages of 1024 cells
      configs.push_back(o);
    }
  return configs;
}

// What the CDP kernels did, from their plans: the hybrid hands M3's pages
// (a 7th component's fact reaches 1,001 targets, its neighbours 2) to
// children and writes B2's even pages itself; --sync-every runs rounds.
TEST(GpuEngine, CdpKernelsLaunchChildrenWhereFanOutIsUneven) {
  const auto plan_of = [](const GeneratedCube& cube, const std::string& name, const GpuOptions& o) {
    for (const NamedQuery& nq : cube.queries) {
      if (nq.name != name) continue;
      const AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
      const AggregationMap map(cube.schema, q);
      EngineChoice gpu = make_engine("gpu-cdp", cube.facts.size(), o);
      EXPECT_EQ(compare_results(CpuParallelEngine().run(cube.facts, map, q), gpu.engine->run(cube.facts, map, q)),
                "") << name;
      EXPECT_EQ(gpu.engine->name(), "gpu-cdp");
      return gpu.engine->last_plan();
    }
    ADD_FAILURE() << "no query " << name;
    return std::string();
  };
  const auto number_before = [](const std::string& plan, const std::string& what) {
    const size_t at = plan.find(what);
    size_t start = at;
    while (start != std::string::npos && start > 0 && std::isdigit(static_cast<unsigned char>(plan[start - 1]))) --start;
    if (at == std::string::npos || start == at) return -1L;
    return std::stol(plan.substr(start, at - start));
  };
  const GeneratedCube machines = generate_machines(0.002, 5, {});
  const GeneratedCube biker = generate_biker(0.0005, 5, {});
  GpuOptions hybrid;
  hybrid.kernel = KernelKind::hybrid;
  const std::string m3 = plan_of(machines, "M3", hybrid);
  EXPECT_GT(number_before(m3, " handed to children"), 0) << m3;
  const std::string b2 = plan_of(biker, "B2", hybrid);
  EXPECT_GT(number_before(b2, " pages written by the parent"), 0) << b2;
  GpuOptions cdp;
  cdp.grid = 2;
  cdp.block = 128;
  cdp.sync_every = 3;
  const std::string synced = plan_of(machines, "M3", cdp);
  EXPECT_GT(number_before(synced, " child grids of "), 3) << synced;
  EXPECT_GT(number_before(synced, " rounds)"), 3) << synced;
}

TEST(GpuEngine, ThesisQueriesOnSmallBikerAndMachinesCubes) {
  std::vector<GpuOptions> configs = main_variants();
  for (const GpuOptions& o : pair_kernel_variants()) configs.push_back(o);
  expect_thesis_queries_match(generate_biker(0.0005, 3, {}), configs);
  expect_thesis_queries_match(generate_machines(0.002, 3, {}), configs);
}

TEST(GpuEngine, AutoAnswersOnTheCpuWhatTheGpuEngineCannot) {
  // 17 dimensions of two bases and a total: past the gpu engine's 16.
  std::vector<Dimension> dims;
  for (int d = 0; d < 17; ++d)
    dims.push_back(Dimension::build("D" + std::to_string(d), {{"a", {}}, {"b", {}}, {"All", {{"a", 1.0}, {"b", 2.0}}}}, "t"));
  Schema schema("wide", std::move(dims), {"V"}, "t");
  std::vector<uint64_t> keys;
  std::vector<double> values;
  for (uint64_t k = 0; k < 5000; k += 7) {
    keys.push_back(k);
    values.push_back(static_cast<double>(k % 13) - 6.0);
  }
  FactTable facts(schema.codec(), keys, {values});
  AreaQuery q{0, Aggregate::sum, std::vector<std::vector<ElementId>>(17, std::vector<ElementId>{2})};
  q.area[16] = {0, 1, 2};
  const AggregationMap map(schema, q);
  EngineChoice chosen = make_engine("auto", facts.size());
  const AreaResult got = chosen.engine->run(facts, map, q);
  EXPECT_EQ(chosen.engine->name(), "cpu-parallel");
  EXPECT_NE(chosen.engine->last_plan().find("17 dimensions"), std::string::npos) << chosen.engine->last_plan();
  EXPECT_EQ(compare_results(CpuSerialEngine().run(facts, map, q), got), "");
  EXPECT_THROW(make_engine("gpu", facts.size()).engine->run(facts, map, q), InputError);
}

// Contributions of zero, of either sign, fill their targets: a sum that
// ends at 0 is a non-empty cell. (Shared stores tell a touched slot by its
// sum no longer being -0.0, where it starts, and add -0.0 as +0.0; a weight
// of -1 turns +0.0 facts into -0.0 contributions.)
TEST(GpuEngine, TargetsOfZeroContributionsAreFilled) {
  std::vector<Dimension> dims;
  dims.push_back(Dimension::build(
      "D", {{"a", {}}, {"b", {}}, {"c", {}}, {"Neg", {{"a", -1.0}, {"b", -1.0}}}, {"All", {{"a", 1.0}, {"b", 1.0}, {"c", 1.0}}}},
      "t"));
  dims.push_back(Dimension::build("E", {{"x", {}}, {"y", {}}, {"AllE", {{"x", 1.0}, {"y", 1.0}}}}, "t"));
  Schema schema("zeros", std::move(dims), {"V"}, "t");
  // (base of D, base of E, value); (c, y) has no fact.
  const std::vector<std::tuple<uint32_t, uint32_t, double>> cells{
      {0, 0, -0.0}, {0, 1, 0.0}, {1, 0, -0.0}, {1, 1, -0.0}, {2, 0, 0.0}};
  std::vector<uint64_t> keys;
  std::vector<double> values;
  for (const auto& [d, e, v] : cells) {  // in key order
    const uint32_t ids[] = {d, e};
    keys.push_back(schema.codec().encode(ids));
    values.push_back(v);
  }
  FactTable facts(schema.codec(), keys, {values});
  const AreaQuery q{0, Aggregate::sum, {{0, 1, 2, 3, 4}, {0, 1, 2}}};
  const AggregationMap map(schema, q);
  const AreaResult want = CpuSerialEngine().run(facts, map, q);
  ASSERT_EQ(want.targets.size(), 14u);  // every target but (c, y)
  std::vector<GpuOptions> configs = main_variants();
  GpuOptions work_list;
  work_list.kernel = KernelKind::work_list;
  work_list.variant = StoreKind::shared;
  configs.push_back(work_list);
  const std::vector<std::string> plans = expect_configs_match(facts, map, q, want, configs, "zeros");
  EXPECT_TRUE(std::any_of(plans.begin(), plans.end(),
                          [](const std::string& p) { return p.find("store shared") != std::string::npos; }));
}

// Writes patch the device copy: after the first queries have made both
// measures resident, no query uploads the table again, and every answer
// equals cpu-serial's on the written table.
TEST(GpuEngine, WritesPatchTheDeviceCopyAndAnswersStayExact) {
  for (uint64_t seed : {3u, 8u, 21u}) {
    RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    const KeyCodec& codec = cube.schema.codec();
    FactStore store(codec, std::move(cube.facts));
    std::vector<GpuOptions> configs(6);
    configs[1].variant = StoreKind::hash;
    configs[1].preagg = Preagg::match;
    configs[1].two_phase = TwoPhase::off;
    configs[2].prefilter = Prefilter::compact;
    configs[2].two_phase = TwoPhase::off;
    // The pair kernels run the added cells as a second input through the
    // same D and counters (CDP: pages of 256 cells, rounds of 2 pages).
    configs[3].kernel = KernelKind::work_list;
    configs[4].kernel = KernelKind::cdp;
    configs[4].grid = 2;
    configs[4].block = 128;
    configs[4].sync_every = 2;
    configs[5].kernel = KernelKind::hybrid;
    configs[5].grid = 2;
    configs[5].block = 128;
    std::vector<EngineChoice> engines;
    for (const GpuOptions& o : configs) engines.push_back(make_engine("gpu", store.table().size(), o));
    auto random_key = [&] {
      std::vector<uint32_t> ids(cube.schema.dimension_count());
      for (size_t d = 0; d < ids.size(); ++d)
        ids[d] = std::uniform_int_distribution<uint32_t>(0, cube.schema.dimension(d).base_count() - 1)(rng);
      return codec.encode(ids);
    };
    std::shared_ptr<const FactTable> older;
    for (int round = 0; round < 25; ++round) {
      if (round > 0) {
        // Cells old and new: rewrite existing ones, add some, delete some.
        const WriteMode mode = static_cast<WriteMode>(rng() % 3);
        std::vector<uint64_t> keys;
        std::vector<std::vector<double>> values(2);
        const std::shared_ptr<const FactTable> now = store.snapshot();
        for (int i = 0; i < 12; ++i) {
          keys.push_back(i % 2 == 0 && now->size() > 0 ? now->keys()[rng() % now->size()] : random_key());
          values[0].push_back(static_cast<double>(rng() % 17) - 8.0);
          values[1].push_back(rng() % 4 == 0 ? kNoValue : static_cast<double>(rng() % 5));
        }
        if (round % 3 == 0) {
          for (size_t i = 0; i < keys.size(); ++i)
            store.apply(mode, CellWrite{keys[i], {values[0][i], values[1][i]}, {true, true}});
        } else {
          store.apply(mode, keys, values, {true, rng() % 2 == 0});
        }
      }
      const std::shared_ptr<const FactTable> facts = store.snapshot();
      ASSERT_TRUE(round == 0 || facts->changes()) << "the store started a new base; the test needs fewer writes";
      for (size_t measure : {0u, 1u}) {
        AreaQuery q = random_query(rng, cube.schema);
        q.measure = measure;
        const AggregationMap map(cube.schema, q);
        const AreaResult want = CpuSerialEngine().run(*facts, map, q);
        for (size_t e = 0; e < engines.size(); ++e) {
          const AreaResult got = engines[e].engine->run(*facts, map, q);
          const std::string plan = engines[e].engine->last_plan();
          EXPECT_EQ(compare_results(want, got), "")
              << "seed " << seed << " round " << round << " " << describe(configs[e]) << " (" << plan << ")";
          if (round > 0) {
            EXPECT_EQ(plan.find("facts uploaded"), std::string::npos) << "round " << round << ": " << plan;
          }
          if (round > 0 && measure == 0) {
            EXPECT_NE(plan.find("facts patched"), std::string::npos) << plan;
          }
        }
      }
      if (round == 10) older = facts;
    }
    // A snapshot older than the device copy is answered exactly too.
    AreaQuery q = random_query(rng, cube.schema);
    const AggregationMap map(cube.schema, q);
    const AreaResult got = engines[0].engine->run(*older, map, q);
    EXPECT_NE(engines[0].engine->last_plan().find("facts uploaded"), std::string::npos);
    EXPECT_EQ(compare_results(CpuSerialEngine().run(*older, map, q), got),
              "");
  }
}

// Without pre-aggregation the one-phase kernel updates the store once per
// (fact, target) contribution; pre-aggregation only removes updates.
TEST(GpuEngine, CountsTheTargetStoresUpdates) {
  size_t chunked = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    const AreaQuery q = random_query(rng, cube.schema);
    const AggregationMap map(cube.schema, q);
    uint64_t contributions = 0;
    for (size_t i = 0; i < cube.facts.size(); ++i)
      if (has_value(cube.facts.values(q.measure)[i])) contributions += map.fan_out(cube.facts.keys()[i]);
    // In chunks of the area (16 KiB of store), each pass counts only the
    // updates of its own window.
    for (double store_mb : {0.0, 16.0 / 1024})
    for (KernelKind kernel : {KernelKind::source, KernelKind::work_list, KernelKind::cdp, KernelKind::hybrid})
    for (Preagg preagg : {Preagg::none, Preagg::lane0, Preagg::stride, Preagg::match}) {
      GpuOptions o;
      o.variant = StoreKind::hash;
      o.two_phase = TwoPhase::off;
      o.kernel = kernel;
      o.preagg = preagg;
      o.store_memory_mb = store_mb;
      if (kernel == KernelKind::cdp || kernel == KernelKind::hybrid) {
        o.grid = 2;  // pages of 256 cells: many children
        o.block = 128;
      }
      EngineChoice gpu = make_engine("gpu", cube.facts.size(), o);
      ASSERT_TRUE(gpu.engine->count_target_updates(true));
      gpu.engine->run(cube.facts, map, q);
      const uint64_t updates = gpu.engine->last_target_updates();
      chunked += gpu.engine->last_plan().find(" chunks of ") != std::string::npos;
      if (preagg == Preagg::none) {
        EXPECT_EQ(updates, contributions) << "seed " << seed << " " << knob_name(kernel) << " " << gpu.engine->last_plan();
      } else {
        EXPECT_LE(updates, contributions) << "seed " << seed << " " << knob_name(kernel) << " " << knob_name(preagg);
        EXPECT_EQ(updates == 0, contributions == 0) << "seed " << seed << " " << knob_name(kernel) << " " << knob_name(preagg);
      }
      gpu.engine->count_target_updates(false);
      gpu.engine->run(cube.facts, map, q);
      EXPECT_EQ(gpu.engine->last_target_updates(), 0u);
    }
  }
  EXPECT_GT(chunked, 0u) << "no run was chunked";
}

// Two-phase aggregation without pre-aggregation updates phase 1's store once
// per relevant fact, then phase 2's once per (class tuple, target) pair;
// the pair count comes back through mapped host memory, in one window or
// several. The pairs are counted here from the map: bases of equal target
// lists (positions and weights) form a class, and a class tuple holding a
// fact reaches the product of its lists' lengths.
TEST(GpuEngine, TwoPhaseCountsFactsAndClassTuplePairs) {
  size_t checked = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    const AreaQuery q = random_query(rng, cube.schema);
    const AggregationMap map(cube.schema, q);
    std::vector<std::map<std::pair<std::vector<uint32_t>, std::vector<double>>, uint32_t>> class_ids(
        map.dimension_count());
    std::set<std::vector<uint32_t>> tuples;
    uint64_t relevant = 0, pairs = 0;
    for (size_t i = 0; i < cube.facts.size(); ++i) {
      if (!has_value(cube.facts.values(q.measure)[i])) continue;
      std::vector<uint32_t> tuple;
      uint64_t fan_out = 1;
      for (size_t d = 0; d < map.dimension_count(); ++d) {
        const DimensionMap& m = map.dimension(d);
        const uint32_t b = map.codec().decode(cube.facts.keys()[i], d);
        const auto pos = m.positions_of(b);
        const auto w = m.weights_of(b);
        const auto list =
            std::make_pair(std::vector<uint32_t>(pos.begin(), pos.end()), std::vector<double>(w.begin(), w.end()));
        tuple.push_back(class_ids[d].emplace(list, static_cast<uint32_t>(class_ids[d].size())).first->second);
        fan_out *= pos.size();
      }
      if (fan_out == 0) continue;
      ++relevant;
      if (tuples.insert(tuple).second) pairs += fan_out;
    }
    for (double store_mb : {0.0, 16.0 / 1024}) {  // one window; windows of 16 KiB
      GpuOptions o;
      o.two_phase = TwoPhase::on;
      o.preagg = Preagg::none;
      o.store_memory_mb = store_mb;
      // One GPU: split over several, each part expands its own class
      // tuples, so the pairs counted here would be counted once per part
      // that holds the tuple (GPUOLAP_GPUS=all must not change this test).
      o.gpus = GpuSet{false, {0}};
      EngineChoice gpu = make_engine("gpu", cube.facts.size(), o);
      ASSERT_TRUE(gpu.engine->count_target_updates(true));
      try {
        gpu.engine->run(cube.facts, map, q);
      } catch (const InputError&) {
        continue;  // more class tuples than two-phase takes
      }
      ++checked;
      EXPECT_EQ(gpu.engine->last_target_updates(), relevant + pairs)
          << "seed " << seed << ", " << relevant << " relevant facts, " << pairs << " pairs; "
          << gpu.engine->last_plan();
    }
  }
  EXPECT_GT(checked, 10u) << "two-phase ran on too few random areas";
}

// Stage times are taken only when asked for (their events cost every query
// time), and the answers are the same either way.
TEST(GpuEngine, StageTimesAreTakenOnlyWhenAsked) {
  const RandomCube cube = random_cube(7);
  std::mt19937_64 rng(7);
  const AreaQuery q = random_query(rng, cube.schema);
  const AggregationMap map(cube.schema, q);
  EngineChoice gpu = make_engine("gpu", cube.facts.size());
  const AreaResult untimed = gpu.engine->run(cube.facts, map, q);
  EXPECT_TRUE(gpu.engine->stages().empty());
  ASSERT_TRUE(gpu.engine->time_stages(true));
  const AreaResult timed = gpu.engine->run(cube.facts, map, q);
  const StageTimes stages = gpu.engine->stages();
  std::vector<std::string> names;
  for (const auto& [name, ms] : stages) {
    names.push_back(name);
    EXPECT_GE(ms, 0.0) << name;
  }
  for (const char* stage : {"upload", "plan", "map", "aggregate", "compact", "copy back"})
    EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage << " missing";
  EXPECT_EQ(timed.targets, untimed.targets);
  EXPECT_EQ(compare_results(untimed, timed), "");
  gpu.engine->time_stages(false);
  gpu.engine->run(cube.facts, map, q);
  EXPECT_TRUE(gpu.engine->stages().empty());
}

// Under --phf 0 the copies of each target in a global store come from the
// slot budgets calibrated for this GPU (kernel_model.hpp), and the plan
// says so; the answers stay exact whatever the copies.
// Points GPUOLAP_CALIBRATION at a file while it lives, then puts back what
// was there (scripts may set it for the whole run).
class CalibrationFileInUse {
 public:
  explicit CalibrationFileInUse(const std::string& path) {
    if (const char* old = std::getenv(kVariable)) old_ = old;
    setenv(kVariable, path.c_str(), 1);
  }
  ~CalibrationFileInUse() {
    if (old_) setenv(kVariable, old_->c_str(), 1);
    else unsetenv(kVariable);
  }
  CalibrationFileInUse(const CalibrationFileInUse&) = delete;
  CalibrationFileInUse& operator=(const CalibrationFileInUse&) = delete;

 private:
  static constexpr const char* kVariable = "GPUOLAP_CALIBRATION";
  std::optional<std::string> old_;
};

TEST(GpuEngine, CopiesFollowTheCalibratedSlotBudgets) {
  const GeneratedCube cube = generate_machines(0.001, 3, {});
  const std::string path = (testing::fresh_test_path("gpu-copies") / "calibration.json").string();
  const CalibrationFileInUse in_use(path);
  KernelCosts costs;
  costs.gpu = gpu_status().device_name;
  costs.hash_slot_budget = 8;
  costs.dense_slot_budget = 4096;
  save_kernel_costs(costs, path);
  for (const StoreKind store : {StoreKind::hash, StoreKind::dense})
    for (const NamedQuery& nq : cube.queries) {
      const AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
      const AggregationMap map(cube.schema, q);
      const std::vector<std::string> plans =
          expect_configs_match(cube.facts, map, q, CpuSerialEngine().run(cube.facts, map, q),
                               {copies_study_options({}, store, 0)}, nq.name);
      ASSERT_EQ(plans.size(), 1u);
      const std::string says = "copies " + std::to_string(model_copies(costs, store, map.target_count())) +
                               " (model: slot budget " + (store == StoreKind::hash ? "8" : "4096") + " over " +
                               std::to_string(map.target_count()) + " targets)";
      EXPECT_NE(plans[0].find(says), std::string::npos) << nq.name << " " << knob_name(store) << ": " << plans[0];
    }
}

// An area whose store does not fit the memory allowed is aggregated in
// chunks of target numbers, one phase or two, with the same answers.
TEST(GpuEngine, AreasLargerThanTheStoreMemoryAreAggregatedInChunks) {
  std::vector<GpuOptions> configs(7);
  configs[1].two_phase = TwoPhase::off;
  configs[1].variant = StoreKind::hash;
  configs[2].two_phase = TwoPhase::off;
  configs[2].variant = StoreKind::dense;
  configs[3].two_phase = TwoPhase::on;
  // The pair kernels once per window of targets.
  configs[4].kernel = KernelKind::work_list;
  configs[5].kernel = KernelKind::cdp;
  configs[5].variant = StoreKind::hash;
  configs[6].kernel = KernelKind::hybrid;
  configs[6].grid = 2;
  configs[6].block = 128;
  for (GpuOptions& o : configs) o.store_memory_mb = 16.0 / 1024;  // 16 KiB
  size_t chunked = 0;
  for (uint64_t seed = 30; seed < 42; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    for (int q = 0; q < 4; ++q) {
      const AreaQuery query = random_query(rng, cube.schema);
      const AggregationMap map(cube.schema, query);
      const std::string label = "seed " + std::to_string(seed) + " query " + std::to_string(q);
      for (const std::string& plan :
           expect_configs_match(cube.facts, map, query, CpuSerialEngine().run(cube.facts, map, query), configs, label))
        chunked += plan.find(" chunks of ") != std::string::npos;
    }
  }
  EXPECT_GT(chunked, 20u);
  // The Machines cube's M3 (874,437 targets) in a quarter of a MiB.
  GeneratedCube machines = generate_machines(0.0005, 3, {});
  GpuOptions small;
  small.store_memory_mb = 0.25;
  const NamedQuery& m3 = machines.queries.back();
  const AreaQuery q = parse_query_json(machines.schema, m3.json, m3.name);
  const AggregationMap map(machines.schema, q);
  EngineChoice gpu = make_engine("gpu", machines.facts.size(), small);
  const AreaResult got = gpu.engine->run(machines.facts, map, q);
  EXPECT_NE(gpu.engine->last_plan().find(" chunks of "), std::string::npos) << gpu.engine->last_plan();
  EXPECT_EQ(compare_results(CpuSerialEngine().run(machines.facts, map, q), got),
            "");
}

// Areas of more than 64 MB of results (4 M targets) are compacted into
// device buffers, their count read first, then copied back (smaller ones
// go straight to pinned host memory): the skewed Machines cube's M3 has
// 8,740,437 targets. In two phases (phase 2's store of one copy; at this
// scale, 124 K facts, its 27,968 class tuples are few enough), in one phase
// with two copies per target (merged before the selection), and hashed.
TEST(GpuEngine, AreasOfMoreThan64MBOfResultsAreCompactedOnTheDevice) {
  const GeneratedCube cube = generate_machines_skewed(0.003, 5, {});
  std::vector<GpuOptions> configs(3);
  configs[1].two_phase = TwoPhase::off;
  configs[1].variant = StoreKind::dense;
  configs[1].phf = 2;
  configs[2].two_phase = TwoPhase::off;
  configs[2].variant = StoreKind::hash;
  for (Aggregate a : {Aggregate::sum, Aggregate::avg, Aggregate::max}) {
    const NamedQuery& m3 = cube.queries.back();
    AreaQuery q = parse_query_json(cube.schema, m3.json, m3.name);
    q.aggregate = a;
    const AggregationMap map(cube.schema, q);
    ASSERT_GT(map.target_count() * 16, uint64_t{64} << 20);
    const std::vector<std::string> plans =
        expect_configs_match(cube.facts, map, q, CpuSerialEngine().run(cube.facts, map, q), configs, "skewed M3");
    ASSERT_EQ(plans.size(), configs.size()) << "a configuration did not run";
    EXPECT_NE(plans[0].find("two-phase"), std::string::npos) << plans[0];
  }
}

}  // namespace
}  // namespace gpuolap
