#pragma once
// Checks an engine against the oracle (cpu-serial) on random cubes, under
// every configuration given: what the gpu-labelled tests and
// `gpuolap selfcheck` run on the user's own hardware.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpuolap/engine.hpp"

namespace gpuolap {

struct SelfCheckResult {
  uint64_t runs = 0;                  // queries compared
  uint64_t not_applicable = 0;        // configurations refused for a query (e.g. too many targets for shared memory)
  std::vector<std::string> failures;  // the first differences, in words
};

// Every combination of the gpu engine's knobs: variant × pre-aggregation ×
// prefilter × map memory × parallel hash functions {1, 3, 32}.
std::vector<GpuOptions> gpu_option_grid();
// The kernels that give each (cell, target) pair a thread (--kernel
// work-list, cdp, hybrid) under their knobs; cdp_only: the gpu-cdp engine's.
std::vector<GpuOptions> pair_kernel_grid(bool cdp_only);
std::string describe(const GpuOptions& o);

// `progress(done, total)` is called after each configuration.
SelfCheckResult self_check(const std::string& engine, const std::vector<GpuOptions>& configs, int cubes,
                           int queries_per_cube, uint64_t seed,
                           const std::function<void(uint64_t, uint64_t)>& progress = {});

}  // namespace gpuolap
