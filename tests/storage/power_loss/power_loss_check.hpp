#pragma once
// The power-loss check of the cube store: runs the workload under the
// recording shim, then, at every point of its trace where the disk
// changed, rebuilds each tree a power cut there may leave (disk_model.hpp)
// and opens the store in it as a reader does (`gpuolap query`/`info`:
// load_cube_with_log, the default recovery) and as a writer does
// (DurableCube, which repairs the log), then once more as a reader after
// that repair. A crash state that needed repairing is then recovered by the
// workload under the shim, written to, and every cut of that checked alike. Each opening must succeed and hold exactly the cube after
// every acknowledged write and possibly some of the writes in flight
// (appended, not yet acknowledged), each whole — nothing else.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "workload.hpp"

namespace gpuolap::power_loss {

struct CheckOptions {
  std::filesystem::path work;      // emptied and used for the store, the trace and the rebuilt trees
  WorkloadShape shape;
  std::string hide;                // POWER_LOSS_HIDE for the shim ("": record every sync)
  std::filesystem::path shim;      // the LD_PRELOAD library
  std::filesystem::path workload;  // power_loss_workload
  bool writer_recovery = true;     // open as a writer too, then as a reader after its repair
  // Of the crash states whose opening as a writer repaired the store (a
  // bad tail cut, a stale log replaced), every this many (0: none) is
  // recovered under the shim and written to again, and every cut of that
  // checked too: a power cut during or after a repair.
  uint64_t recovery_every = 25;
};

struct CheckReport {
  uint64_t events = 0;                // in the trace
  uint64_t cut_points = 0;            // points where the disk changed
  uint64_t crash_states = 0;          // distinct trees opened, over all cut points
  uint64_t acknowledged = 0;          // writes acknowledged by the end
  uint64_t checkpoints = 0;
  uint64_t recovery_runs = 0;         // crash states recovered and written to under the shim
  uint64_t recovery_cut_points = 0;   // cut points of those runs
  uint64_t recovery_crash_states = 0;
  uint64_t failed_states = 0;         // trees where a check failed
  uint64_t acknowledged_lost = 0;     // the most acknowledged writes missing from one tree
  std::vector<std::string> failures;  // the first few, in words
  double seconds = 0;
};

// Where the check's work directory should go: /dev/shm when there is one
// (the writer's recovery fsyncs, which on a tmpfs cost nothing; the check
// opens thousands of stores), else the temporary directory.
std::filesystem::path fast_temp_directory();

// Throws std::runtime_error when the workload fails or its trace is not
// complete (the tree rebuilt from the whole trace differs from the real one).
CheckReport check_power_loss(const CheckOptions& options);

}  // namespace gpuolap::power_loss
