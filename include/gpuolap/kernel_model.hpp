#pragma once
// How `auto` chooses the kernel over the facts (issue 5): cheap statistics of
// the query, taken from a sample of the facts, and a cost per unit of work
// of each kernel, calibrated once on the user's GPU by `gpuolap calibrate`.
//
// The kernels' work (gpu engine, --kernel):
//   source     a thread per cell walks its targets: a warp takes as many
//              steps as its widest cell has targets (warp steps), whatever
//              the other 31 lanes need
//   work-list  count the fan-outs, scan them, then a thread per pair
//   cdp        per page of the parent grid, a child grid over its pairs
//   hybrid     cdp's children only for uneven pages, the rest as source
// Two-phase aggregation and thread runs are chosen before the model (they
// cut the updates to about one per fact, which no pair kernel does).
#include <cstdint>
#include <string>
#include <vector>

#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/fact_table.hpp"

namespace gpuolap {

// Fan-out statistics of a query over a fact table, scaled from a sample of
// runs of consecutive facts (sorted facts keep their neighbours, so warps
// and pages see what they would see in the full table).
struct FanOutStats {
  uint64_t cells = 0;        // facts the kernels visit
  double relevant = 0;       // facts with at least one target
  double pairs = 0;          // (fact, target) contributions
  double warp_steps = 0;     // source kernel: sum over warps of their widest fact's fan-out
  double pages = 0;          // pages of kPageCells facts with any pair
  double uneven_pages = 0;   // ... whose fan-outs have variance > mean^2 (the hybrid hands them off)
  double uneven_pairs = 0;   // pairs on those pages
  double uneven_steps = 0;   // warp steps on those pages
  uint64_t sampled = 0;      // facts looked at
  static constexpr uint64_t kPageCells = 256;
};

FanOutStats sample_fan_out(const FactTable& facts, const AggregationMap& map, size_t measure);

// Seconds per unit of work on one GPU. The defaults are what `gpuolap
// calibrate --scale 0.1` measured on an H100 with the work list dealing runs
// of pairs (bench/results/h100-work-list-runs-2026-11-22.md). A full warp
// step of the source kernel costs about a third of 32 work-list pairs, so the
// work list wins only where the source kernel's lanes are busy less than
// about a third of its steps.
struct KernelCosts {
  std::string gpu;                    // the GPU they were measured on ("" for the defaults)
  double per_cell = 5.2e-12;          // reading a fact (16 B at streaming bandwidth)
  double per_warp_step = 0.375e-9;    // source kernel, one warp step (all its lanes' updates)
  double per_pair = 0.0387e-9;        // work list, one pair
  double per_child_pair = 0.0279e-9;  // CDP child, one pair
  double per_launch = 0.756e-6;       // CDP, one child launch
  // The CPU against the GPU's fixed cost (`auto`): a GPU query on the demo
  // cube (1,406 facts), and cpu-parallel per (fact, target) contribution
  // (the H100 host's 16 threads).
  double gpu_fixed = 0.21e-3;
  double cpu_per_contribution = 2.44e-9;
};

// The costs `auto` uses: from the calibration file when there is one (and
// it names this GPU), else the defaults. `source` says which, in words.
KernelCosts load_kernel_costs(const std::string& gpu_name, std::string* source = nullptr);
// Where `gpuolap calibrate` writes and `auto` reads: $GPUOLAP_CALIBRATION,
// else $XDG_CONFIG_HOME/gpuolap/calibration.json, else
// ~/.config/gpuolap/calibration.json.
std::string calibration_path();
void save_kernel_costs(const KernelCosts& costs, const std::string& path);

// (Fact, target) contributions of an area over `cells` facts, estimated
// from the map alone (each dimension's mean list length over its bases,
// as if facts were spread evenly over bases): O(dimensions), for deciding
// between CPU and GPU before touching the facts.
double estimated_contributions(const AggregationMap& map, uint64_t cells);

// The CPU's work on such an area: a look per contribution, and at least
// one per fact whatever its fan-out.
double cpu_looks(const AggregationMap& map, uint64_t cells);

// Whether the CPU answers (cpu_looks at the calibrated cost per
// contribution) before the GPU has paid its fixed cost.
bool cpu_answers_first(const AggregationMap& map, uint64_t cells, const KernelCosts& c);

struct KernelPrediction {
  std::string kernel;  // source, work-list, cdp, hybrid
  double seconds;
};

// Predicted aggregate-stage time of each kernel, fastest first (CDP parent
// blocks of kPageCells threads).
std::vector<KernelPrediction> predict_kernels(const FanOutStats& s, const KernelCosts& c);

}  // namespace gpuolap
