// Two-phase aggregation: phase 1 aggregates the facts per class tuple
// (about one update per fact), phase 2 expands each tuple's cell to its
// targets, a thread per (tuple, target) pair.
#include <cub/cub.cuh>

#include <cstring>

#include "molap/gpu/gpu_engine.cuh"

namespace gpuolap::gpu {

GpuEngine::Expansion GpuEngine::run_phase_one(const AggregationMap& map, const Inputs& inputs, QueryPlan& plan,
                                              StageClock& clock) {
  const cudaStream_t stream = ctx_.stream();
  const cudaStream_t side = ctx_.side_stream();
  Expansion e;
  e.store = plan.targets <= kMaxDenseSlots ? StoreKind::dense : StoreKind::hash;
  // The class tuples, never chunked (at most 2^22 of them).
  e.tuples =
      aggregate_facts(plan.stage, plan.image, inputs, plan.first_fields, plan.grid, 0, plan.first_targets, clock);
  clock.start("expand");
  // Phase 2's map is built and sent while phase 1 runs: its own staging
  // (the first copy may still be reading the map's staging), and its own
  // stream, so the copy is done when phase 1 is (on the main stream it took
  // a few microseconds after it). A failed query may have left its copy in
  // flight: wait for it before the staging is written again.
  plan.host.resume();
  e.image = expand_image(map, plan.classes);
  plan.host.step("expansion image");
  const std::vector<uint8_t>& bytes_up = e.image.image.bytes;
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(side));
  expand_staging_.reserve(bytes_up.size());
  std::memcpy(expand_staging_.data(), bytes_up.data(), bytes_up.size());
  expand_global_.reserve(bytes_up.size());
  GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(expand_global_.data(), expand_staging_.data(), bytes_up.size(),
                                     cudaMemcpyHostToDevice, side));
  GPUOLAP_CUDA_CHECK(cudaEventRecord(expand_sent_, side));
  GPUOLAP_CUDA_CHECK(cudaStreamWaitEvent(stream, expand_sent_, 0));
  e.image.view.global = expand_global_.data();
  e.updates = read_updates();
  // The tuples' cells and target counts, then the counts' inclusive sums.
  phase1_cells_.reserve(plan.first_targets);
  expand_ends_.reserve(plan.first_targets);
  uint64_t* ends = expand_ends_.data();
  launch_count_expansions(e.tuples, plan.first_fields, e.image.view, phase1_cells_.data(), ends, stream);
  size_t bytes = 0;
  const auto n = static_cast<int64_t>(plan.first_targets);
  GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, ends, ends, n, stream));
  GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(ctx_.scratch(bytes), bytes, ends, ends, n, stream));
  // The pair count arrives with the results (the expansion writes it to
  // mapped host memory); only a hash store, sized by it, waits for it here.
  count_staging_.reserve(sizeof(uint64_t));
  if (e.store == StoreKind::hash) {
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(count_staging_.data(), ends + plan.first_targets - 1, sizeof(uint64_t),
                                       cudaMemcpyDeviceToHost, stream));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream));
    e.contributions = *static_cast<const uint64_t*>(count_staging_.data());
  }
  clock.stop();
  return e;
}

TargetTable GpuEngine::expand_window(const QueryPlan& plan, const Expansion& e, uint64_t first, uint64_t width,
                                     StageClock& clock) {
  const cudaStream_t stream = ctx_.stream();
  clock.start("expand");
  // A hash store needs a slot per distinct target: at most one per contribution.
  TargetTable t =
      second_.prepare(e.store, first, width, 1, next_pow2(std::max<uint64_t>(1024, 2 * std::min(width, e.contributions))),
                      plan.fields, stream);
  t.grid = plan.grid;
  // A grid-stride loop: the host may not know the pair count yet.
  const int grid = ctx_.multiprocessors() * 8;
  launch_expand(e.store, plan.fields, LaunchShape{grid, 256, 0, stream, false}, phase1_cells_.data(),
                expand_ends_.data(), plan.first_targets, e.image.view, t,
                static_cast<uint64_t*>(count_staging_.device_data()));
  clock.stop();
  if (e.store == StoreKind::hash && second_.overflowed(stream)) throw GpuError("gpu engine: phase 2 hash store overflowed");
  return t;
}

}  // namespace gpuolap::gpu
