#include "molap/self_check.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

#include "cpu_engines.hpp"
#include "gpuolap/error.hpp"
#include "molap/random_cube.hpp"
#include "molap/result_check.hpp"

namespace gpuolap {

std::vector<GpuOptions> gpu_option_grid() {
  std::vector<GpuOptions> grid;
  for (StoreKind variant : {StoreKind::hash, StoreKind::dense, StoreKind::shared})
    for (Preagg preagg : {Preagg::none, Preagg::lane0, Preagg::stride, Preagg::match, Preagg::run})
      for (Prefilter prefilter : {Prefilter::compact, Prefilter::fused})
        for (MapMemory map_memory : {MapMemory::constant, MapMemory::global})
          for (std::optional<TwoPhase> two_phase : {std::optional(TwoPhase::off), std::optional<TwoPhase>()})
          for (int phf : {1, 3, 32}) {
            // Thread runs keep their own packed map, never in constant memory.
            if (preagg == Preagg::run && map_memory == MapMemory::constant) continue;
            GpuOptions o;
            o.two_phase = two_phase;
            o.variant = variant;
            o.preagg = preagg;
            o.prefilter = prefilter;
            o.map_memory = map_memory;
            o.phf = phf;
            grid.push_back(o);
          }
  return grid;
}

std::vector<GpuOptions> pair_kernel_grid(bool cdp_only) {
  // The pair kernels aggregate in one phase. Their own knobs are crossed
  // with store and pre-aggregation; prefilter, map memory and hash functions
  // rotate with the index. Tiny grids (2 blocks of 128: pages of 256 cells)
  // give the random cubes many pages, so CDP parents launch many children,
  // the hybrid merges runs of pages, and --sync-every 1 tail-launches a round
  // per page.
  std::vector<GpuOptions> grid;
  int i = 0;
  const auto add = [&](GpuOptions o) {
    o.two_phase = TwoPhase::off;
    o.prefilter = i % 2 ? Prefilter::compact : Prefilter::fused;
    o.map_memory = (i / 2) % 2 ? MapMemory::constant : MapMemory::global;
    o.phf = std::array{1, 3, 32}[(i / 4) % 3];
    ++i;
    grid.push_back(o);
  };
  for (KernelKind kernel : {KernelKind::work_list, KernelKind::cdp, KernelKind::hybrid}) {
    const bool cdp = kernel != KernelKind::work_list;
    if (cdp_only && !cdp) continue;
    for (StoreKind variant : {StoreKind::hash, StoreKind::dense, StoreKind::shared})
      for (Preagg preagg : {Preagg::none, Preagg::lane0, Preagg::stride, Preagg::match}) {
        if (cdp && variant == StoreKind::shared) continue;  // children cannot use a block's store
        GpuOptions o;
        o.kernel = kernel;
        o.variant = variant;
        o.preagg = preagg;
        if (!cdp) {
          o.grid = i % 3 == 0 ? 2 : 0;
          add(o);
          continue;
        }
        for (ChildGrid child_grid : {ChildGrid::dynamic, ChildGrid::fixed})
          for (int sync_every : {0, 1, 3}) {
            o.child_grid = child_grid;
            o.sync_every = sync_every;
            // Parent shapes rotate with a period (3) prime to the other
            // knobs' (2, 4, 12): 2 blocks of 128 or 1024, or the default.
            const int shape = i % 3;
            o.grid = shape == 2 ? 0 : 2;
            o.block = shape == 2 ? 0 : std::array{128, 1024}[shape];
            add(o);
          }
      }
  }
  return grid;
}

std::string describe(const GpuOptions& o) {
  const bool cdp = o.kernel == KernelKind::cdp || o.kernel == KernelKind::hybrid;
  return fmt::format("--variant {} --phf {} --preagg {} --prefilter {} --map-memory {} --two-phase {}{}{}{}{}{}{}",
                     knob_name(o.variant), o.phf, knob_name(o.preagg), knob_name(o.prefilter),
                     knob_name(o.map_memory), knob_name(o.two_phase),
                     o.kernel ? fmt::format(" --kernel {}", knob_name(*o.kernel)) : "",
                     cdp ? fmt::format(" --child-grid {} --sync-every {}", knob_name(o.child_grid), o.sync_every) : "",
                     o.block ? fmt::format(" --block {}", o.block) : "", o.grid ? fmt::format(" --grid {}", o.grid) : "",
                     o.store_memory_mb > 0 ? fmt::format(" --store-memory {}", o.store_memory_mb) : "",
                     o.gpus.unset() ? "" : " --gpus " + gpu_set_name(o.gpus));
}

SelfCheckResult self_check(const std::string& engine_name, const std::vector<GpuOptions>& configs, int cubes,
                           int queries_per_cube, uint64_t seed,
                           const std::function<void(uint64_t, uint64_t)>& progress) {
  // The oracle's answers first, once per query.
  struct Case {
    RandomCube cube;
    std::vector<AreaQuery> queries;
    std::vector<AreaResult> answers;
  };
  std::vector<Case> cases;
  CpuSerialEngine oracle;
  for (int c = 0; c < cubes; ++c) {
    Case k{random_cube(seed + static_cast<uint64_t>(c), 1 + (seed + c) % 97), {}, {}};
    std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(c));
    for (int q = 0; q < queries_per_cube; ++q) {
      k.queries.push_back(random_query(rng, k.cube.schema));
      const AggregationMap map(k.cube.schema, k.queries.back());
      k.answers.push_back(oracle.run(k.cube.facts, map, k.queries.back()));
    }
    cases.push_back(std::move(k));
  }

  SelfCheckResult result;
  for (size_t i = 0; i < configs.size(); ++i) {
    EngineChoice choice = make_engine(engine_name, 0, configs[i]);
    for (size_t c = 0; c < cases.size() && result.failures.size() < 20; ++c) {
      const Case& k = cases[c];
      for (size_t q = 0; q < k.queries.size(); ++q) {
        const AggregationMap map(k.cube.schema, k.queries[q]);
        AreaResult got;
        try {
          got = choice.engine->run(k.cube.facts, map, k.queries[q]);
        } catch (const InputError&) {
          ++result.not_applicable;
          continue;
        }
        ++result.runs;
        const std::string diff = compare_results(k.answers[q], got);
        if (!diff.empty())
          result.failures.push_back(fmt::format("{} {}: cube {} query {} ({}): {}", engine_name, describe(configs[i]),
                                                seed + c, q, aggregate_name(k.queries[q].aggregate), diff));
      }
    }
    if (progress) progress(i + 1, configs.size());
  }
  return result;
}

}  // namespace gpuolap
