// The gpu engine over several GPUs (molap/gpu/multi_gpu_engine.cu) against
// cpu-serial. On a one-GPU machine the devices are contexts on GPU 0 listed
// several times ("--gpus 0,0,0"): the same code as on several GPUs, the
// slices, parts, routing of writes and merge, on one. On a machine with
// several GPUs the tests name real devices too, and
// `GPUOLAP_GPUS=all ctest -L gpu` runs every other gpu test over all of them.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "gpu/runtime/device_info.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/fact_store.hpp"
#include "molap/cpu_engines.hpp"
#include "molap/gpu/gpu_engine.hpp"
#include "molap/gpu/multi_gpu_engine.hpp"
#include "molap/random_cube.hpp"
#include "molap/result_check.hpp"
#include "molap/self_check.hpp"

namespace gpuolap {
namespace {

// Device lists to split over: contexts on GPU 0, and every GPU when there are several.
std::vector<GpuSet> device_sets() {
  std::vector<GpuSet> sets{GpuSet{false, {0, 0}}, GpuSet{false, {0, 0, 0}}};
  if (gpu_status().device_count > 1) sets.push_back(GpuSet{true, {}});
  return sets;
}

TEST(MultiGpuEngine, SplitQueriesEqualCpuSerialOnRandomCubes) {
  for (const GpuSet& gpus : device_sets()) {
    // Small pages so that random cubes split into several slices.
    std::vector<GpuOptions> configs(4);
    configs[1].two_phase = TwoPhase::off;
    configs[1].variant = StoreKind::hash;
    configs[2].kernel = KernelKind::work_list;
    configs[3].prefilter = Prefilter::compact;
    configs[3].two_phase = TwoPhase::off;
    for (GpuOptions& o : configs) o.gpus = gpus;
    const SelfCheckResult r = self_check("gpu", configs, 40, 8, 77);
    for (const auto& f : r.failures) ADD_FAILURE() << "--gpus " << gpu_set_name(gpus) << ": " << f;
    EXPECT_GT(r.runs, 1000u);
  }
}

// Every aggregate over a cube split into several slices: avg merges the
// parts' sums and counts, min and max their extremes.
TEST(MultiGpuEngine, EveryAggregateMergesExactly) {
  for (uint64_t seed : {2u, 5u, 9u, 14u}) {
    const RandomCube cube = random_cube(seed, 16);
    std::mt19937_64 rng(seed);
    GpuOptions o;
    o.gpus = GpuSet{false, {0, 0, 0, 0}};
    EngineChoice gpu = make_engine("gpu", cube.facts.size(), o);
    for (int q = 0; q < 10; ++q) {
      AreaQuery query = random_query(rng, cube.schema);
      for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::avg, Aggregate::min, Aggregate::max}) {
        query.aggregate = a;
        const AggregationMap map(cube.schema, query);
        const AreaResult got = gpu.engine->run(cube.facts, map, query);
        EXPECT_EQ(compare_results(CpuSerialEngine().run(cube.facts, map, query), got),
                  "")
            << "seed " << seed << " " << aggregate_name(a) << ": " << gpu.engine->last_plan();
        if (cube.facts.page_count() >= 4) {
          EXPECT_NE(gpu.engine->last_plan().find("on 4 GPUs"), std::string::npos) << gpu.engine->last_plan();
        }
      }
    }
  }
}

// Writes reach the device that owns the written key: cells rewritten in
// place, deleted, and added between other slices' keys, across rounds of
// patches, answered exactly and without uploading the facts again.
TEST(MultiGpuEngine, WritesArePatchedIntoTheDeviceThatOwnsTheKey) {
  for (uint64_t seed : {3u, 8u, 21u}) {
    RandomCube cube = random_cube(seed, 16);
    std::mt19937_64 rng(seed);
    const KeyCodec& codec = cube.schema.codec();
    FactStore store(codec, std::move(cube.facts));
    GpuOptions o;
    o.gpus = GpuSet{false, {0, 0, 0}};
    EngineChoice gpu = make_engine("gpu", store.table().size(), o);
    auto random_key = [&] {
      std::vector<uint32_t> ids(cube.schema.dimension_count());
      for (size_t d = 0; d < ids.size(); ++d)
        ids[d] = std::uniform_int_distribution<uint32_t>(0, cube.schema.dimension(d).base_count() - 1)(rng);
      return codec.encode(ids);
    };
    for (int round = 0; round < 20; ++round) {
      if (round > 0) {
        const WriteMode mode = static_cast<WriteMode>(rng() % 3);
        const std::shared_ptr<const FactTable> now = store.snapshot();
        std::vector<uint64_t> keys;
        std::vector<std::vector<double>> values(2);
        for (int i = 0; i < 12; ++i) {
          keys.push_back(i % 2 == 0 && now->size() > 0 ? now->keys()[rng() % now->size()] : random_key());
          values[0].push_back(static_cast<double>(rng() % 17) - 8.0);
          values[1].push_back(static_cast<double>(rng() % 5));
        }
        store.apply(mode, keys, values, {true, true});
      }
      const std::shared_ptr<const FactTable> facts = store.snapshot();
      ASSERT_TRUE(round == 0 || facts->changes()) << "the store started a new base; the test needs fewer writes";
      AreaQuery q = random_query(rng, cube.schema);
      q.measure = 0;
      const AggregationMap map(cube.schema, q);
      const AreaResult got = gpu.engine->run(*facts, map, q);
      const std::string plan = gpu.engine->last_plan();
      EXPECT_EQ(compare_results(CpuSerialEngine().run(*facts, map, q), got),
                "")
          << "seed " << seed << " round " << round << ": " << plan;
      if (round > 0) {
        EXPECT_NE(plan.find("facts patched"), std::string::npos) << "round " << round << ": " << plan;
      }
    }
  }
}

TEST(MultiGpuEngine, AFailedPartFailsTheQueryNamingItsDevice) {
  const RandomCube cube = random_cube(4, 16);
  ASSERT_GE(cube.facts.page_count(), 2u);
  std::mt19937_64 rng(4);
  const AreaQuery query = random_query(rng, cube.schema);
  const AggregationMap map(cube.schema, query);
  // Each part's engine refuses this pair of knobs when it plans the query:
  // an InputError inside the parts, which the query's error must name.
  GpuOptions o;
  o.gpus = GpuSet{false, {0, 0}};
  o.kernel = KernelKind::work_list;
  o.two_phase = TwoPhase::on;
  EngineChoice gpu = make_engine("gpu", cube.facts.size(), o);
  try {
    gpu.engine->run(cube.facts, map, query);
    ADD_FAILURE() << "the parts' refusal was not reported";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("GPU 0 ("), std::string::npos) << what;
    EXPECT_NE(what.find("part 1 of 2"), std::string::npos) << what;
    EXPECT_NE(what.find("--two-phase on needs --kernel source"), std::string::npos) << what;
  }
}

TEST(MultiGpuEngine, ADeviceThatDoesNotExistIsAnInputError) {
  GpuOptions o;
  o.gpus = GpuSet{false, {0, gpu_status().device_count}};
  try {
    make_engine("gpu", 100, o);
    ADD_FAILURE() << "a missing device was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("there is no GPU " + std::to_string(gpu_status().device_count)),
              std::string::npos)
        << e.what();
  }
}

// `auto` over several GPUs splits only facts worth splitting, and says why.
TEST(MultiGpuEngine, AutoSplitsOnlyWhenThatIsFaster) {
  const RandomCube cube = random_cube(6, 16);
  std::mt19937_64 rng(6);
  const AreaQuery query = random_query(rng, cube.schema);
  const AggregationMap map(cube.schema, query);
  const std::unique_ptr<Engine> engine = gpu::make_multi_gpu_engine({}, "gpu", {0, 0}, false);
  const AreaResult got = engine->run(cube.facts, map, query);
  EXPECT_EQ(compare_results(CpuSerialEngine().run(cube.facts, map, query), got),
            "");
  const std::string plan = engine->last_plan();
  EXPECT_NE(plan.find("gpu on 1 GPU (auto: "), std::string::npos) << plan;
  EXPECT_NE(plan.find("less than the split's own"), std::string::npos) << plan;
}

// Stage times of a split query: each stage as its slowest part's, then
// each part's whole time and the merge.
TEST(MultiGpuEngine, StageTimesShowThePartsAndTheMerge) {
  const RandomCube cube = random_cube(12, 4);
  ASSERT_GE(cube.facts.page_count(), 2u);
  std::mt19937_64 rng(12);
  const AreaQuery query = random_query(rng, cube.schema);
  const AggregationMap map(cube.schema, query);
  GpuOptions o;
  o.gpus = GpuSet{false, {0, 0}};
  EngineChoice gpu = make_engine("gpu", cube.facts.size(), o);
  ASSERT_TRUE(gpu.engine->time_stages(true));
  gpu.engine->run(cube.facts, map, query);
  std::vector<std::string> names;
  for (const auto& [name, ms] : gpu.engine->stages()) names.push_back(name);
  for (const char* stage : {"upload", "aggregate", "part 0 (GPU 0)", "part 1 (GPU 0)", "merge", "whole query"})
    EXPECT_NE(std::find(names.begin(), names.end(), stage), names.end()) << stage << " missing";
}

}  // namespace
}  // namespace gpuolap
