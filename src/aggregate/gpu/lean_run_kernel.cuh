#pragma once
// The thread-run kernel (past the thesis) for maps with one target per base
// (LeanMap). Facts are sorted by key, and each warp takes one contiguous
// range of them, lane l every 32nd fact from l on (loads stay coalesced), so
// a thread's successive facts share a target for as long as the data does
// (B1's single target, B2's month and channel classes: 146 K facts). Each
// thread merges such facts in registers and writes only when its target
// changes; the runs that end together are merged across the warp against
// the first ending lane's target (lane0 pre-aggregation): neighbouring
// lanes cross a target boundary together. The map's positions sit in shared
// memory. Pages without a relevant cell (their base-id ranges tell) are not
// read: the warps share the others evenly (KernelInput::pages).
#include "aggregate_kernel.cuh"

namespace gpuolap::gpu {

// No run yet (LeanMap targets are below it).
constexpr uint32_t kNoRun = kNoPosition;

// A key's target: the sum of its dimensions' parts, or kNoRun when some
// dimension's base is outside the area.
template <int D>
__device__ __forceinline__ uint32_t lean_target(const LeanMap& map, const uint32_t* positions, uint64_t key) {
  uint32_t target = 0;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
    const uint32_t part = positions[map.first[d] + b];  // position x stride
    if (part == kNoPosition) return kNoRun;
    target += part;
  }
  return target;
}

// D: the map's dimensions, exactly (a loop over unused slots would still
// issue its predicated instructions: the kernel is instruction-bound).
template <class Store, int F, int D>
__global__ void lean_run_kernel(KernelInput in, LeanMap map, Store store) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);
  const uint32_t* positions = reinterpret_cast<const uint32_t*>(map.global + map.positions_at);
  if (map.positions_in_shared) {
    uint32_t* local = reinterpret_cast<uint32_t*>(smem + map.shared_at);
    for (uint32_t i = threadIdx.x; i < map.entries; i += blockDim.x) local[i] = positions[i];
    __syncthreads();
    positions = local;
  }

  const uint64_t threads = uint64_t{gridDim.x} * blockDim.x;
  const unsigned copy = static_cast<unsigned>((uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) %
                                              (store.t.copies ? store.t.copies : 1));
  uint32_t run_target = kNoRun;
  Part run = Part::identity();
  // Writes the runs of the lanes that pass `ends` (all lanes call it).
  auto write_runs = [&](bool ends) {
    contribute<Preagg::lane0, F>(ends, run_target, run, 0, store, copy);
  };

  // A warp's share: a contiguous range of the cells, or of the listed
  // pages' cells. A batch lies on one page (the share and the page size are
  // multiples of the step).
  const uint64_t span = in.pages ? in.page_count * in.page_size : in.n;
  const uint64_t warps = threads / 32;
  const uint64_t warp = (uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const uint64_t per_warp = ((span + warps - 1) / warps + kLeanRunStep - 1) / kLeanRunStep * kLeanRunStep;
  const uint64_t begin = warp * per_warp;
  const uint64_t end = begin + per_warp < span ? begin + per_warp : span;
  const unsigned lane = threadIdx.x & 31;
  for (uint64_t first = begin; first < end; first += kLeanRunStep) {
    const uint64_t page_start = in.pages ? uint64_t{in.pages[first / in.page_size]} * in.page_size : 0;
    uint64_t keys[kLeanRunBatch];
    double values[kLeanRunBatch];
#pragma unroll
    for (int u = 0; u < kLeanRunBatch; ++u) {
      const uint64_t i = first + static_cast<uint64_t>(u) * 32 + lane;
      const uint64_t cell = in.pages ? page_start + i % in.page_size : in.cells ? in.cells[i] : i;
      keys[u] = 0;
      values[u] = __longlong_as_double(0x7ff8000000000000ll);  // NaN: no fact
      if (i < end && (!in.pages || cell < in.n)) {  // the last page may be partial
        keys[u] = in.keys[cell];
        values[u] = in.values[cell];
      }
    }
    // Not unrolled (write_runs is large): shift the batch instead of
    // indexing it, so it stays in registers.
#pragma unroll 1
    for (int u = 0; u < kLeanRunBatch; ++u) {
      const uint32_t target = lean_target<D>(map, positions, keys[0]);
      const bool relevant = target != kNoRun && values[0] == values[0];
      double w = 1.0;
#pragma unroll
      for (int d = 0; d < D; ++d) {
        // In dimension order, as on the CPU (a weight of 1 changes nothing).
        if (relevant && map.weights_at[d] != kNoWeights) {
          const uint32_t b = static_cast<uint32_t>((keys[0] >> map.shift[d]) & map.mask[d]);
          w = __dmul_rn(w, reinterpret_cast<const double*>(map.global + map.weights_at[d])[b]);
        }
      }
      const bool ends = relevant && run_target != kNoRun && target != run_target;
      if (__any_sync(kFullWarp, ends)) write_runs(ends);
      if (relevant) {
        const Part part = Part::of(__dmul_rn(w, values[0]));
        if (target == run_target) {
          run.merge<F>(part);
        } else {
          run_target = target;
          run = part;
        }
      }
#pragma unroll
      for (int v = 0; v + 1 < kLeanRunBatch; ++v) {
        keys[v] = keys[v + 1];
        values[v] = values[v + 1];
      }
    }
  }
  write_runs(run_target != kNoRun);
  store.template flush<F>();
}

}  // namespace gpuolap::gpu
