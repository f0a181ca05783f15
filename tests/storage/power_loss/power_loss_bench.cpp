// The power-loss check over a workload of any size, printing what it
// checked: bench/power_loss.sh runs it over 10,000 writes.
// Usage: power_loss_bench WORK_DIR WRITES CHECKPOINT_EVERY [SEED [HIDE [RECOVERY_EVERY]]]
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <string>

#include "power_loss_check.hpp"

int main(int argc, char** argv) {
  using namespace gpuolap::power_loss;
  if (argc < 4 || argc > 7) {
    std::fprintf(stderr, "usage: %s WORK_DIR WRITES CHECKPOINT_EVERY [SEED [HIDE [RECOVERY_EVERY]]]\n", argv[0]);
    return 2;
  }
  CheckOptions o;
  o.work = argv[1];
  o.shape.writes = std::stoull(argv[2]);
  o.shape.checkpoint_every = std::stoull(argv[3]);
  if (argc > 4) o.shape.seed = std::stoull(argv[4]);
  if (argc > 5 && std::string(argv[5]) != "-") o.hide = argv[5];  // "-": hide nothing
  if (argc > 6) o.recovery_every = std::stoull(argv[6]);
  o.shim = POWER_LOSS_SHIM;
  o.workload = POWER_LOSS_WORKLOAD;
  try {
    const CheckReport r = check_power_loss(o);
    fmt::print("writes {}, checkpoint every {}, seed {}{}\n", o.shape.writes, o.shape.checkpoint_every, o.shape.seed,
               o.hide.empty() ? "" : fmt::format(", {} hidden from the trace", o.hide));
    fmt::print("trace events            {}\n", r.events);
    fmt::print("checkpoints             {}\n", r.checkpoints);
    fmt::print("writes acknowledged     {}\n", r.acknowledged);
    fmt::print("cut points checked      {}\n", r.cut_points);
    fmt::print("crash states opened     {}\n", r.crash_states);
    fmt::print("recovered and rewritten {} (of the crash states a writer had to repair)\n", r.recovery_runs);
    fmt::print("  their cut points      {}\n", r.recovery_cut_points);
    fmt::print("  their crash states    {}\n", r.recovery_crash_states);
    fmt::print("crash states failed     {}\n", r.failed_states);
    fmt::print("acknowledged writes lost (most at one cut) {}\n", r.acknowledged_lost);
    fmt::print("seconds                 {:.1f}\n", r.seconds);
    for (const std::string& f : r.failures) fmt::print("FAILED: {}\n", f);
    return r.failed_states == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "power_loss_bench: %s\n", e.what());
    return 1;
  }
}
