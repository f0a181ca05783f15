#pragma once
// How `auto` chooses the kernel over the facts and the copies of each target
// (issue 5): cheap statistics of the query, taken from a sample of the facts,
// a cost per unit of work of each kernel, and a slot budget per global store,
// calibrated once on the user's GPU by `gpuolap calibrate`.
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
#include "gpuolap/gpu_options.hpp"
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
  // Copies of each target in a global store (the thesis' parallel hash
  // functions, --phf 0): the store's slot budget over the area's targets
  // (model_copies). A hot target's updates serialise on its slot, so copies
  // pay while an area is small; past the budget the extra slots cost more
  // than the contention they spread (likely hash probes and a longer merge,
  // dense copies falling out of the L2; not measured apart). `gpuolap
  // calibrate` fits both budgets by timing the copies on its queries
  // (fit_slot_budget); the defaults are what it measured on an H100 at
  // scale 0.1 (bench/results/h100-copies-model-2026-11-22.md).
  double hash_slot_budget = 131072;
  double dense_slot_budget = 16777216;
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

// Copies of each target for a slot budget: the budget over the targets,
// rounded down to a power of two in [1, kMaxCopies].
constexpr unsigned kMaxCopies = 64;
unsigned copies_for_budget(double budget, uint64_t targets);

// The copies `auto` gives each target of a global store. A dense store has
// at most kMaxDenseSlots slots (targets x copies), so its budget is capped
// there: copies never push an area that fits with one copy out of it.
constexpr uint64_t kMaxDenseSlots = uint64_t{1} << 27;
// A global store: StoreKind::hash or StoreKind::dense.
unsigned model_copies(const KernelCosts& c, StoreKind store, uint64_t targets);
double slot_budget(const KernelCosts& c, StoreKind store);

// What a copies study (calibrate, bench --copies-sweep) times: the one-phase
// source kernel without pre-aggregation, so that the copies alone spread
// the contention, in `store` with `copies` per target (0: the model's).
GpuOptions copies_study_options(GpuOptions base, StoreKind store, int copies);

// One timed run of a copies study (calibrate, bench --copies-sweep): a
// query's area, the copies its store had, and its time.
struct CopiesRun {
  std::string query;
  uint64_t targets = 0;
  unsigned copies = 1;
  double seconds = 0;
};

// The slot budget, a power of two, under which the model's copies lose
// least to the fastest copies timed for each query (the mean over queries of
// their time ratio, the regret). Of equally good budgets, the middle one
// (the upper of two), searched up to the budget that gives the widest timed
// area kMaxCopies copies.
struct SlotBudgetFit {
  double budget = 0;
  double mean_regret = 0;
};
SlotBudgetFit fit_slot_budget(const std::vector<CopiesRun>& runs);

struct KernelPrediction {
  KernelKind kernel;
  double seconds;
};

// Predicted aggregate-stage time of each kernel, fastest first (CDP parent
// blocks of kPageCells threads).
std::vector<KernelPrediction> predict_kernels(const FanOutStats& s, const KernelCosts& c);

}  // namespace gpuolap
