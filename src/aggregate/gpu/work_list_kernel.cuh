#pragma once
// The work list (issue 5's non-CDP answer to uneven fan-out): what a modern
// engineer tries before dynamic parallelism. Over a segment of the source
// cells, count each cell's targets, take their inclusive prefix sums (CUB),
// then give every (source, target) pair its own thread. A warp's lanes do
// equal work however unevenly the cells fan out (M3: 2 or 1,001 targets per
// fact), where the source kernel's lanes wait for the widest cell of their
// warp.
#include "fan_out.cuh"

namespace gpuolap::gpu {

// counts[i] = fan-out of cell offset + i of the input, for i < n.
__global__ void count_fan_out_kernel(KernelInput in, uint64_t offset, uint64_t n, DeviceMap map, uint64_t* counts) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t at = offset + i;
    const uint64_t cell = in.cells ? in.cells[at] : at;
    counts[i] = fan_out(map, in.keys[cell], in.values[cell]);
  }
}

// ends: the inclusive prefix sums of the segment's counts (its last entry,
// read here, is the segment's pair count, so the host need not wait for it).
// Each block takes tiles of blockDim.x consecutive pairs; one thread finds
// the tile's range of sources, and every thread searches only that range.
// (Two variants that spread a warp's pairs apart — lane l taking pairs 32 l
// + k, or the tile transposed — hung the random-cube test on the GPU; the
// cause was not found. See bench/README.md.)
template <class Store, Preagg P, int F>
__global__ void work_list_kernel(KernelInput in, uint64_t offset, uint64_t n, const uint64_t* ends, DeviceMap map,
                                 Store store) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);
  __shared__ uint64_t tile_sources[2];
  const uint64_t total = n ? ends[n - 1] : 0;
  const uint64_t tile = blockDim.x;
  const unsigned copy = static_cast<unsigned>((uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) %
                                              (store.t.copies ? store.t.copies : 1));
  for (uint64_t base = blockIdx.x * tile; base < total; base += uint64_t{gridDim.x} * tile) {
    const uint64_t last = (base + tile < total ? base + tile : total) - 1;
    if (threadIdx.x == 0) {
      tile_sources[0] = upper_bound(ends, 0, n, base);
      tile_sources[1] = upper_bound(ends, tile_sources[0], n, last) + 1;
    }
    __syncthreads();
    const uint64_t i = base + threadIdx.x;
    const bool valid = i <= last;
    uint64_t source = tile_sources[0];
    if (valid) source = upper_bound(ends, tile_sources[0], tile_sources[1], i);
    const uint64_t start = source ? ends[source - 1] : 0;
    const unsigned first_count =
        static_cast<unsigned>(__shfl_sync(kFullWarp, valid ? ends[source] - start : 0ull, 0));
    uint64_t key = 0;
    double value = 0.0;
    if (valid) {
      const uint64_t at = offset + source;
      const uint64_t cell = in.cells ? in.cells[at] : at;
      key = in.keys[cell];
      value = in.values[cell];
    }
    add_pair<Store, P, F>(valid, key, value, i - start, first_count, map, store, copy);
    __syncthreads();  // tile_sources is rewritten for the next tile
  }
  store.template flush<F>();
}

}  // namespace gpuolap::gpu
