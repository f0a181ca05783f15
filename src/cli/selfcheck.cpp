// `gpuolap selfcheck`: compares an engine with cpu-serial on random cubes, on
// this machine's hardware, under every configuration of its knobs.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "gpu/runtime/device_info.hpp"
#include "molap/self_check.hpp"
#include "progress.hpp"

namespace gpuolap::cli {

namespace {

// `auto` checks the engine `query --engine auto` runs the large queries on:
// the gpu engine where there is a GPU, else cpu-parallel. (Its own choice
// per query would check cpu-serial, the oracle, against itself on these
// small random cubes.) Checking the gpu engine on a machine without one
// could only fail.
std::string resolve_engine(const std::string& asked, std::string& why) {
  if (asked != "auto") return asked;
  const GpuStatus gpu = gpu_status();
  if (gpu.cuda_build && gpu.device_count > 0) {
    why = fmt::format("auto: GPU {} found", gpu.device_name);
    return "gpu";
  }
  why = "auto: " + gpu.problem;
  return "cpu-parallel";
}

}  // namespace

int run_selfcheck(const SelfCheckOptions& options) {
  std::string why;
  SelfCheckOptions o = options;
  o.engine = resolve_engine(options.engine, why);
  if (!why.empty()) std::cout << fmt::format("selfcheck: checking {} ({})\n", o.engine, why);
  std::vector<GpuOptions> configs{o.gpu};
  if (o.engine == "gpu" && o.configs == "grid") {
    configs = gpu_option_grid();
    const std::vector<GpuOptions> pairs = pair_kernel_grid(false);
    configs.insert(configs.end(), pairs.begin(), pairs.end());
  }
  if (o.engine == "gpu-cdp" && o.configs == "grid") configs = pair_kernel_grid(true);
  SelfCheckResult r = [&] {
    Progress progress("checking " + o.engine);
    return self_check(o.engine, configs, o.cubes, o.queries, o.seed, progress.callback());
  }();
  for (const std::string& f : r.failures) std::cout << "MISMATCH " << f << '\n';
  std::cout << fmt::format("selfcheck {}: {} queries in {} configuration(s) on {} random cubes, {} not applicable, {} "
                           "mismatches\n",
                           o.engine, r.runs, configs.size(), o.cubes, r.not_applicable, r.failures.size());
  if (r.runs == 0) {
    std::cout << "selfcheck: nothing was compared\n";
    return 1;
  }
  return r.failures.empty() ? 0 : 1;
}

}  // namespace gpuolap::cli
