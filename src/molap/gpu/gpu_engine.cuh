#pragma once
// The gpu engine's class (gpu_engine.hpp makes it): the pipeline of an
// area query on one GPU, each stage timed with CUDA events when asked
// (time_stages: the events cost every query some 20 driver calls):
//   upload    facts to the device once, then only the cells written since
//             (gpu/runtime/device_cube.cuh)                    gpu_engine.cu
//   plan      on the host: the kernel's map (or, two-phase, the classes and
//             the class map), the kernel, store and launch shape
//                                                  query_plan.cu, stage_plan.cu
//   map       the maps to global memory in one copy (or constant memory);
//             the thread-run kernel copies its packed map to shared memory
//                                                              map_upload.cu
//   prefilter skip pages without relevant cells, compact the relevant cells
//             (CUB select) — or, fused, let the kernel skip them itself (the
//             thread-run kernel gets the list of pages to read) map_upload.cu
//   table     allocate and clear the target store
//   aggregate the kernel over the facts with the chosen store and
//             pre-aggregation                               facts_kernels.cu
//   expand    two-phase: phase 2's map, built on the host and sent on a
//             stream of its own while phase 1 runs; the class tuples' cells
//             and target counts in one pass, a CUB scan of the counts, then
//             a thread per (tuple, target) pair                 two_phase.cu
//   compact   merge each target's copies into one cell and keep the filled
//             ones (gpu/primitives/compaction.cuh)
//   copy back targets and values to the host, through pinned memory
// An area whose store would not fit runs table..copy back once per window of
// target numbers; repeated stages' times are summed (windows.cu). The plan
// in words: plan_text.cpp.
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpu/primitives/compaction.cuh"
#include "gpu/primitives/target_store_buffers.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/device_cube.cuh"
#include "gpu/runtime/pinned_buffer.cuh"
#include "gpuolap/engine.hpp"
#include "molap/gpu/aggregate_kernels.hpp"
#include "molap/gpu/cdp_rounds.cuh"
#include "molap/gpu/gpu_engine.hpp"
#include "molap/gpu/host_steps.hpp"
#include "molap/gpu/plan_text.hpp"
#include "molap/planning/kernel_model.hpp"
#include "molap/planning/map_images.hpp"
#include "molap/planning/part_merge.hpp"
#include "molap/planning/target_classes.hpp"

namespace gpuolap::gpu {

inline bool uses_cdp(KernelKind k) { return k == KernelKind::cdp || k == KernelKind::hybrid; }

// How the kernel over the facts runs: into which store, with how many
// copies per target, which pre-aggregation and launch shape.
struct StagePlan {
  KernelKind kernel;
  StoreKind store;
  Preagg preagg;
  unsigned copies;
  int block;
  int grid;
  size_t shared_bytes;
  bool map_in_shared;  // Preagg::run: the lean map's positions, after the store's replicas
  int resident;        // blocks per multiprocessor at once (0: this block size cannot launch)
};

// What the plan stage decided for one query.
struct QueryPlan {
  int fields = 0;            // the store's fields for the query's aggregate
  SumGrid grid;              // the exact sums' grid (gpuolap/exact_sum.hpp)
  uint64_t targets = 0;      // of the area
  TargetClasses classes;     // two-phase: the class tuples (cells 0: one phase)
  bool two_phase = false;
  MapImage image;            // the map of the kernel over the facts
  std::string auto_plan;     // why auto chose the kernel (when the cost model weighed it)
  bool constant_map = false;
  uint64_t first_targets = 0;  // targets of the facts' kernel's store (class tuples, or the area)
  int first_fields = 0;
  StagePlan stage{};
  bool compact = false;        // prefilter by CUB select
  std::optional<uint32_t> page_list_at;  // fused prefilter: the pages the thread-run kernel reads
  std::vector<uint32_t> page_list;
  HostSteps host;
};

// The kernels index a device's resident facts with 32 bits: a GPU holds
// fewer than this many; a bigger table is split over several.
constexpr uint64_t kMaxFactsPerDevice = uint64_t{1} << 32;

class GpuEngine final : public Engine {
 public:
  // On GPU `device` (-1: the current one).
  GpuEngine(const GpuOptions& o, std::string name, int device = -1);
  ~GpuEngine() override;

  std::string name() const override { return name_; }
  std::string limit(const FactTable& facts, const AggregationMap& map) const override {
    return gpu_engine_limit(facts, map);
  }
  bool time_stages(bool on) override {
    time_stages_ = on;
    return true;
  }
  StageTimes stages() const override { return stages_; }
  std::string last_plan() const override { return plan_text_ ? plan_text_() : std::string(); }
  bool count_target_updates(bool on) override {
    count_updates_ = on;
    return true;
  }
  uint64_t last_target_updates() const override { return target_updates_; }

  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) override;

  // One device's part of a query split over several (multi_gpu_engine.cu):
  // the query over the slice of the facts this engine holds. `as_part`: a
  // sum or avg holds the targets' exact sums (and avg their counts), so that
  // parts merge to one device's bits (molap/planning/part_merge.hpp).
  QueryPart run_part(const FactTable& facts, const AggregationMap& map, const AreaQuery& query, const FactSlice& slice,
                     bool as_part);
  // Whether the device copy serves `slice` of these facts without a full upload.
  bool can_keep(const FactTable& facts, size_t measure, const FactSlice& slice) const {
    return cube_.can_keep(facts, measure, slice);
  }
  // Drops the device copy's identity (after a failed part): uploaded in full next time.
  void forget_facts() { cube_.forget(); }
  const DeviceContext& context() const { return ctx_; }

 private:
  // The plan stage (query_plan.cu).
  QueryPlan plan_query(const FactTable& facts, const AggregationMap& map, const AreaQuery& query);
  KernelKind weigh_kernels(const FactTable& facts, const AggregationMap& map, size_t measure,
                                          std::string& why) const;
  void list_pages(const AggregationMap& map, QueryPlan& plan);
  // The launch shape and store of the kernel over the facts (stage_plan.cu).
  StagePlan choose_stage(KernelKind kernel, uint64_t targets, int fields, bool dense_only, const MapImage& map) const;
  // allow_shared false: not the shared store (auto's choice when it leaves
  // no room for a block of the kernel).
  StagePlan plan_for(KernelKind kernel, int block, uint64_t targets, int fields, bool dense_only,
                     const MapImage& map, bool allow_shared = true) const;
  StoreKind choose_store(StagePlan& p, KernelKind kernel, int block, uint64_t targets, int fields, bool dense_only,
                         bool allow_shared) const;
  Preagg choose_preagg(KernelKind kernel, uint64_t targets, const MapImage& map) const;
  // The map and prefilter stages (map_upload.cu).
  void upload_maps(QueryPlan& plan);
  // The resident table's cells to read (prefiltered when asked) and those
  // added since, read in full.
  struct Inputs {
    KernelInput resident;
    KernelInput added;
  };
  Inputs prefilter(const QueryPlan& plan, const AggregationMap& map, size_t measure);
  // The facts' kernel into a store of the targets [first, first + width) (facts_kernels.cu).
  TargetTable aggregate_facts(const StagePlan& plan, const MapImage& image, const Inputs& inputs, int fields,
                              const SumGrid& grid, uint64_t first, uint64_t width, StageClock& clock);
  void launch_work_list_segments(const StagePlan& plan, const KernelInput& in, const DeviceMap& map, int fields,
                                 const TargetTable& t);
  uint64_t read_updates();
  // Two-phase (two_phase.cu): phase 1's store, then the expansion's counts
  // and scan, with phase 2's map sent on the side stream; returns the
  // contributions when the host needs them (a hash store), else 0.
  struct Expansion {
    TargetTable tuples{};
    ExpandImage image;
    StoreKind store = StoreKind::dense;
    uint64_t contributions = 0;
    uint64_t updates = 0;  // phase 1's
  };
  Expansion run_phase_one(const AggregationMap& map, const Inputs& inputs, QueryPlan& plan,
                          StageClock& clock);
  TargetTable expand_window(const QueryPlan& plan, const Expansion& e, uint64_t first, uint64_t width,
                            StageClock& clock);
  // The area in windows whose stores fit (windows.cu).
  struct Windows {
    AreaResult result;
    std::vector<double> counts;  // with_counts: each target's count
    std::vector<ExactSum> sums;  // with_sums: each target's exact sum
    uint64_t chunks = 1;
    uint64_t updates = 0;
  };
  Windows aggregate_windows(const QueryPlan& plan, const Inputs& inputs, const Expansion& e, Aggregate aggregate,
                            bool with_counts, bool with_sums, StageClock& clock);
  uint64_t chunks_for(StoreKind kind, uint64_t targets, unsigned copies, int fields, uint64_t entries);
  // Frees the reusable store and compaction buffers.
  void release_stores();
  // The plan's facts for the plan text.
  PlanFacts plan_facts(const QueryPlan& plan, const CubeUpdate& update, const Inputs& inputs, StoreKind final_store,
                       uint64_t contributions, uint64_t chunks) const;

  GpuOptions options_;
  std::string name_;
  KernelCosts costs_;  // what `auto` chooses kernels by
  std::string costs_source_;
  DeviceContext ctx_;
  // Phase 2's map goes up on the side stream while phase 1 runs; the main
  // stream waits for this event before phase 2.
  cudaEvent_t expand_sent_ = nullptr;
  DeviceCube cube_;
  bool time_stages_ = false;
  StageTimes stages_;  // the last query's, when timed
  std::function<std::string()> plan_text_;  // the last query's plan, put in words when read
  bool count_updates_ = false;
  uint64_t target_updates_ = 0;

  // Reused between queries; they only grow.
  TargetStoreBuffers first_, second_;  // the store of the facts' kernel; phase 2's
  Compactor compactor_;
  CdpRounds cdp_;
  // The trips of the maps, phase 2's map and the pair count.
  PinnedBuffer upload_staging_, expand_staging_, count_staging_;
  DeviceBuffer<uint8_t> map_global_, expand_global_, page_relevant_;
  DeviceBuffer<uint32_t> cells_;
  DeviceBuffer<uint64_t> selected_count_, expand_ends_;
  DeviceBuffer<Cell> phase1_cells_;
  DeviceBuffer<unsigned long long> updates_;
  // Work list: a segment's fan-outs, then their inclusive sums.
  DeviceBuffer<uint64_t> fan_out_ends_;
};

}  // namespace gpuolap::gpu
