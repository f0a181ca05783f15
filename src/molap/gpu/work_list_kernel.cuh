#pragma once
// The work list (issue 5's non-CDP answer to uneven fan-out): what a modern
// engineer tries before dynamic parallelism. Over a segment of the source
// cells, count each cell's targets and take their inclusive prefix sums
// (CUB); then the (source, target) pairs are dealt out evenly, a run of
// consecutive pairs per thread. A warp's lanes do equal work however
// unevenly the cells fan out (M3: 2 or 1,001 targets per fact), where the
// source kernel's lanes wait for the widest cell of their warp.
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

// Pairs per thread and tile: each thread takes a run of consecutive pairs.
constexpr int kWorkListRun = 8;

// ends: the inclusive prefix sums of the segment's counts (its last entry,
// read here, is the segment's pair count, so the host need not wait for it).
//
// Each block takes a contiguous range of tiles of blockDim.x * kWorkListRun
// consecutive pairs. Per tile, thread 0 finds the tile's range of sources by
// galloping from the previous tile's last source (they follow each other,
// mostly a few places apart); a binary search of the whole segment per tile,
// behind the barrier, left M3's warps waiting there 62 % of their stalled
// cycles. Each thread then takes a run of kWorkListRun consecutive pairs:
// it searches only the tile's sources for the first and reaches the others
// by stepping its cell's targets as the source kernel does (an odometer),
// moving on to the next cell where one ends. A pair costs a step, not a
// search and a division per dimension, and every lane of a warp has the
// same number of pairs (but in the last, partial tile), however unevenly
// the cells fan out. The loop over a run makes the same number of passes in
// every lane, so the warp-wide pre-aggregation's shuffles stay convergent.
// D bounds the map's dimensions.
template <class Store, Preagg P, int F, int D>
__global__ void work_list_kernel(KernelInput in, uint64_t offset, uint64_t n, const uint64_t* ends, DeviceMap map,
                                 Store store) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);
  __shared__ uint64_t tile_sources[2];
  const uint64_t total = n ? ends[n - 1] : 0;
  const uint64_t tile = uint64_t{blockDim.x} * kWorkListRun;
  const uint64_t tiles = (total + tile - 1) / tile;
  // Block b's tiles: an even share, the first tiles % gridDim.x blocks one more.
  const uint64_t share = tiles / gridDim.x, extra = tiles % gridDim.x;
  const uint64_t k_begin = share * blockIdx.x + (blockIdx.x < extra ? blockIdx.x : extra);
  const uint64_t k_end = k_begin + share + (blockIdx.x < extra ? 1 : 0);
  const unsigned copy = static_cast<unsigned>((uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) %
                                              (store.t.copies ? store.t.copies : 1));
  // Thread 0: every source before `from` ends at or before the next tile's first pair.
  uint64_t from = threadIdx.x == 0 && k_begin < k_end ? upper_bound(ends, 0, n, k_begin * tile) : 0;
  for (uint64_t k = k_begin; k < k_end; ++k) {
    const uint64_t base = k * tile;
    const uint64_t last = (base + tile < total ? base + tile : total) - 1;
    if (threadIdx.x == 0) {
      tile_sources[0] = gallop_upper_bound(ends, from, n, base);
      from = gallop_upper_bound(ends, tile_sources[0], n, last);
      tile_sources[1] = from + 1;
    }
    __syncthreads();
    const uint64_t sources_end = tile_sources[1];
    const uint64_t first = base + uint64_t{threadIdx.x} * kWorkListRun;
    // The run's cell: its number, first and past-the-last pair, key, value and digits.
    uint64_t source = tile_sources[0], start = 0, stop = 0, key = 0;
    double value = 0.0;
    uint32_t at[D], begin[D], end[D];
    const auto enter = [&](uint64_t i) {
      start = source ? ends[source - 1] : 0;
      stop = ends[source];
      const uint64_t cell = in.cells ? in.cells[offset + source] : offset + source;
      key = in.keys[cell];
      value = in.values[cell];
      pair_digits<D>(map, key, i - start, at, begin, end);
    };
    if (first <= last) {
      source = upper_bound(ends, tile_sources[0], sources_end, first);
      enter(first);
    }
#pragma unroll 1
    for (int r = 0; r < kWorkListRun; ++r) {
      const uint64_t i = first + r;
      const bool valid = i <= last;
      if (valid && i >= stop) {  // past the cell's last pair: the next cell with pairs
        source = gallop_upper_bound(ends, source + 1, sources_end, i);
        enter(i);
      }
      uint64_t target;
      const Part part = walk_contribution<F, D>(valid, map, at, begin, end, value, store.t.grid, target);
      // The thesis' shuffle stride is the fan-out N of lane 0's cell. With
      // runs, lanes N apart are 8 N pairs apart, so the strided shuffle finds
      // fewer equal targets than in the thesis' layout; it only ever merges
      // equal targets, so the answer is the same (auto takes none here).
      const unsigned first_count = static_cast<unsigned>(__shfl_sync(kFullWarp, valid ? stop - start : 0ull, 0));
      contribute<P, F>(valid, target, part, first_count, store, copy);
    }
    __syncthreads();  // tile_sources is rewritten for the next tile
  }
  store.template flush<F>();
}

}  // namespace gpuolap::gpu
