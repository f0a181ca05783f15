#pragma once
// A source cell's targets one at a time: how many it has (its fan-out), and
// its j-th (target number, weight). The kernels that give each (source,
// target) pair its own thread — CDP children (cdp_kernels.cu), the hybrid's
// children and the work list (work_list_kernel.cuh) — find their pair with
// these instead of walking the cell's lists as the source kernel does.
#include <cuda_runtime.h>

#include <cstdint>

#include "aggregate_kernel.cuh"

namespace gpuolap::gpu {

// The product of the cell's list lengths: 0 when some dimension has no
// target for its base, or the measure has no value (NaN).
template <int D = kMaxDims>
__device__ inline uint64_t fan_out(const DeviceMap& map, uint64_t key, double value) {
  if (value != value) return 0;
  uint64_t n = 1;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    if (d < map.dims && n) {
      const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
      n *= map_read<uint32_t>(map, map.offsets_at[d], b + 1) - map_read<uint32_t>(map, map.offsets_at[d], b);
    }
  }
  return n;
}

// The digits of the cell's target j < fan_out, in the source kernel's order
// (the last dimension moves fastest): per dimension d, the position at[d]
// in the base's target list [begin[d], end[d]). D bounds the map's
// dimensions (kFewDims when it has at most that many: the loops shrink to
// what the map has). The digits come from 32-bit division whenever j fits,
// which is nearly always (a cell with 2^32 targets is an area of 2^32 cells).
template <int D>
__device__ __forceinline__ void pair_digits(const DeviceMap& map, uint64_t key, uint64_t j, uint32_t (&at)[D],
                                            uint32_t (&begin)[D], uint32_t (&end)[D]) {
  const bool narrow = j <= 0xffffffffull;
  uint32_t j32 = static_cast<uint32_t>(j);
#pragma unroll
  for (int d = D - 1; d >= 0; --d) {
    if (d < map.dims) {
      const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
      begin[d] = map_read<uint32_t>(map, map.offsets_at[d], b);
      end[d] = map_read<uint32_t>(map, map.offsets_at[d], b + 1);
      const uint32_t len = end[d] - begin[d];
      if (narrow) {
        const uint32_t q = j32 / len;
        at[d] = begin[d] + (j32 - q * len);
        j32 = q;
      } else {
        at[d] = begin[d] + static_cast<uint32_t>(j % len);
        j /= len;
      }
    }
  }
}

// Target j < fan_out of the cell and its weight.
template <int D = kMaxDims>
__device__ inline void nth_target(const DeviceMap& map, uint64_t key, uint64_t j, uint64_t& target, double& weight) {
  uint32_t at[D], begin[D], end[D];
  pair_digits<D>(map, key, j, at, begin, end);
  digits_target<D>(map, at, target, weight);
}

// The first index in [lo, hi) whose inclusive prefix sum exceeds i: the
// source of pair i (thesis appendix D's upper bound).
template <typename T>
__device__ inline uint64_t upper_bound(const T* ends, uint64_t lo, uint64_t hi, uint64_t i) {
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (ends[mid] <= i) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// upper_bound over [lo, n) when the answer is likely near lo: steps of
// doubling length, then a binary search within the last. Needs every end
// before lo to be at most i.
template <typename T>
__device__ inline uint64_t gallop_upper_bound(const T* ends, uint64_t lo, uint64_t n, uint64_t i) {
  uint64_t hi = lo, step = 1;
  while (hi < n && ends[hi] <= i) {
    lo = hi + 1;
    hi += step;
    step *= 2;
  }
  return upper_bound(ends, lo, hi < n ? hi : n, i);
}

// Adds pair (source, j) — or nothing, for lanes past the end — after warp
// pre-aggregation. All lanes call it together. `first_count` is the first
// lane's source's fan-out, the stride of the thesis' shuffle (listing 3):
// lanes a fan-out apart hold the same target index of neighbouring sources.
template <class Store, Preagg P, int F, int D = kMaxDims>
__device__ __forceinline__ void add_pair(bool valid, uint64_t key, double value, uint64_t j, unsigned first_count,
                                         const DeviceMap& map, Store& store, unsigned copy) {
  uint64_t target = 0;
  Part part = Part::identity();
  if (valid) {
    double w;
    nth_target<D>(map, key, j, target, w);
    part = Part::of<F>(value, w, store.t.grid);
  }
  contribute<P, F>(valid, target, part, first_count, store, copy);
}

}  // namespace gpuolap::gpu
