// The table and aggregate stages: a target store cleared for a window of
// the area, then the chosen kernel over the resident and the added cells.
#include <cub/cub.cuh>

#include <algorithm>

#include "molap/gpu/gpu_engine.cuh"

namespace gpuolap::gpu {

namespace {

// Source cells per work-list segment: its counts and sums take 8 bytes each.
constexpr uint64_t kWorkListSegment = uint64_t{1} << 24;

}  // namespace

TargetTable GpuEngine::aggregate_facts(const StagePlan& plan, const MapImage& image, const Inputs& inputs, int fields,
                                       const SumGrid& grid, uint64_t first, uint64_t width, StageClock& clock) {
  const cudaStream_t stream = ctx_.stream();
  const CdpRounds::Totals cdp_before = cdp_.totals();
  for (uint64_t capacity_factor = 2;; capacity_factor *= 2) {
    const size_t attempt = clock.size();
    cdp_.restore(cdp_before);  // a retry replaces its attempt
    clock.start("table");
    const uint64_t entries = inputs.resident.n + inputs.added.n;
    const uint64_t expected = std::min<uint64_t>(width, std::max<uint64_t>(entries, 1)) * plan.copies;
    TargetTable t = first_.prepare(plan.store, first, width, plan.copies,
                                   next_pow2(std::max<uint64_t>(1024, expected * capacity_factor)), fields, stream);
    t.grid = grid;
    if (count_updates_) {
      updates_.reserve(1);
      GPUOLAP_CUDA_CHECK(cudaMemsetAsync(updates_.data(), 0, sizeof(unsigned long long), stream));
      t.updates = updates_.data();
    }
    clock.stop();

    clock.start("aggregate");
    const LaunchShape shape{plan.grid, plan.block, plan.shared_bytes, stream, image.is_lean()};
    if (uses_cdp(plan.kernel)) cdp_.clear_counters(stream);
    // gpu-cdp and an explicit --kernel keep the thesis' default of no
    // synchronisation; auto synchronises every 2,048 pages, as the thesis
    // did (§5.5.2): the pending launches then fit what the runtime grants.
    const int sync_every = options_.sync_every > 0 ? options_.sync_every : !options_.kernel ? 2048 : 0;
    for (const KernelInput& in : {inputs.resident, inputs.added}) {
      if (in.n == 0) continue;
      switch (plan.kernel) {
        case KernelKind::source:
          if (plan.preagg == Preagg::run) launch_lean_run(plan.store, fields, shape, in, image.lean, t);
          else launch_aggregate(plan.store, plan.preagg, fields, shape, in, image.view, t);
          break;
        case KernelKind::work_list: launch_work_list_segments(plan, in, image.view, fields, t); break;
        case KernelKind::cdp:
        case KernelKind::hybrid:
          cdp_.launch(plan.store, plan.preagg, fields, plan.grid, plan.block, plan.kernel == KernelKind::hybrid,
                      options_.child_grid, sync_every, in, image.view, t, stream);
          break;
      }
    }
    clock.stop();
    if (uses_cdp(plan.kernel)) cdp_.collect(stream);
    // A full hash store: again, twice as large (the retry's stages replace these).
    if (plan.store == StoreKind::hash && first_.overflowed(stream)) {
      clock.truncate(attempt);
      continue;
    }
    return t;
  }
}

void GpuEngine::launch_work_list_segments(const StagePlan& plan, const KernelInput& in, const DeviceMap& map,
                                          int fields, const TargetTable& t) {
  const cudaStream_t stream = ctx_.stream();
  const LaunchShape shape{plan.grid, plan.block, plan.shared_bytes, stream, false};
  // Segments bound the sums' memory; inputs past a few thousand cells are
  // split at least four ways, so every test crosses segment boundaries.
  const uint64_t segment = std::clamp<uint64_t>((in.n + 3) / 4, 1024, kWorkListSegment);
  fan_out_ends_.reserve(std::min(in.n, segment));
  uint64_t* ends = fan_out_ends_.data();
  for (uint64_t offset = 0; offset < in.n; offset += segment) {
    const uint64_t n = std::min(segment, in.n - offset);
    launch_count_fan_out(in, offset, n, map, ends, stream);
    size_t bytes = 0;
    const auto items = static_cast<int64_t>(n);
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, ends, ends, items, stream));
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(ctx_.scratch(bytes), bytes, ends, ends, items, stream));
    // The kernel reads the segment's pair count from the sums itself.
    launch_work_list(plan.store, plan.preagg, fields, shape, in, offset, n, ends, map, t);
  }
}

uint64_t GpuEngine::read_updates() { return count_updates_ ? updates_.download(1, ctx_.stream())[0] : 0; }

}  // namespace gpuolap::gpu
