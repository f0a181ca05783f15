// The gpu engine against cpu-serial, on a GPU (ctest label `gpu`): every
// combination of its knobs on random cubes, and the thesis-shaped cubes.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>

#include "cpu_engines.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"
#include "gpuolap/result_check.hpp"
#include "gpuolap/self_check.hpp"

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

void expect_thesis_queries_match(const GeneratedCube& cube, const std::vector<GpuOptions>& configs) {
  for (const NamedQuery& nq : cube.queries) {
    for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::min, Aggregate::max, Aggregate::avg}) {
      AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
      q.aggregate = a;
      const AggregationMap map(cube.schema, q);
      const AreaResult want = CpuParallelEngine().run(cube.facts, map, q);
      const AreaResult magnitudes = contribution_magnitudes(cube.facts, map, q.measure);
      for (const GpuOptions& o : configs) {
        EngineChoice gpu = make_engine("gpu", cube.facts.size(), o);
        AreaResult got;
        try {
          got = gpu.engine->run(cube.facts, map, q);
        } catch (const InputError&) {
          continue;  // the variant does not fit this area
        }
        EXPECT_EQ(compare_results(want, got, a, magnitudes), "")
            << nq.name << " " << aggregate_name(a) << " " << describe(o) << " (" << gpu.engine->last_plan() << ")";
      }
    }
  }
}

std::vector<GpuOptions> main_variants() {
  std::vector<GpuOptions> configs{GpuOptions{}};
  for (const char* variant : {"hash", "dense", "shared"})
    for (const char* preagg : {"none", "lane0", "stride", "match"}) {
      GpuOptions o;
      o.variant = variant;
      o.preagg = preagg;
      o.two_phase = "off";
      configs.push_back(o);
    }
  for (const char* preagg : {"none", "lane0", "stride", "match"}) {
    GpuOptions o;
    o.preagg = preagg;
    o.two_phase = "on";
    configs.push_back(o);
  }
  return configs;
}

TEST(GpuEngine, ThesisQueriesOnSmallBikerAndMachinesCubes) {
  expect_thesis_queries_match(generate_biker(0.0005, 3, {}), main_variants());
  expect_thesis_queries_match(generate_machines(0.002, 3, {}), main_variants());
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
  EXPECT_EQ(compare_results(CpuSerialEngine().run(facts, map, q), got, q.aggregate, contribution_magnitudes(facts, map, 0)), "");
  EXPECT_THROW(make_engine("gpu", facts.size()).engine->run(facts, map, q), InputError);
}

}  // namespace
}  // namespace gpuolap
