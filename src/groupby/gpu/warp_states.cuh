#pragma once
// Aggregate states across a warp's lanes: shuffled whole (only the words a
// slot uses travel) and merged. The block-cooperative kernel's segmented
// warp scan and the cube's warp-reduced runs (cube/gpu/cube_kernels.cuh)
// are built from these.
#include "groupby/gpu/ordered_kernels.cuh"

namespace gpuolap::groupby::gpu {

template <int N>
__device__ __forceinline__ States<N> shfl_states(const DeviceAggregates& A, const States<N>& st, int src) {
  States<N> o;
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) {
      o.s[a].bits = __shfl_sync(0xffffffffu, st.s[a].bits, src);
      o.s[a].high = A.high[a] ? __shfl_sync(0xffffffffu, st.s[a].high, src) : 0;
      o.s[a].count = A.counts[a] ? __shfl_sync(0xffffffffu, st.s[a].count, src) : 0;
    }
  return o;
}

// Only the words a state uses travel: `high` for integer sums, `count`
// where the slot keeps one (a double SUM moves one word, not three).
template <int N>
__device__ __forceinline__ States<N> shfl_up_states(const DeviceAggregates& A, const States<N>& st, int d) {
  States<N> o = st;
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) {
      o.s[a].bits = __shfl_up_sync(0xffffffffu, st.s[a].bits, d);
      if (A.high[a]) o.s[a].high = __shfl_up_sync(0xffffffffu, st.s[a].high, d);
      if (A.counts[a]) o.s[a].count = __shfl_up_sync(0xffffffffu, st.s[a].count, d);
    }
  return o;
}

// `later` merged after `earlier`, returned.
template <int N>
__device__ __forceinline__ States<N> merged(const DeviceAggregates& A, States<N> earlier, const States<N>& later) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) merge_state(A.slot[a], earlier.s[a], later.s[a]);
  return earlier;
}

// The segmented inclusive scan over a warp's lanes (every lane must call
// it): each lane's `value` merged after those of the lanes before it, back
// to the nearest lane whose `cut` is set (a lane that starts a segment).
// On return `cut` says whether the lane or one before it cuts.
template <int N>
__device__ __forceinline__ States<N> warp_segmented_scan(const DeviceAggregates& A, States<N> value, bool& cut) {
  const int lane = threadIdx.x & 31;
  for (int d = 1; d < 32; d <<= 1) {
    const States<N> up = shfl_up_states(A, value, d);
    const bool up_cut = __shfl_up_sync(0xffffffffu, cut, d);
    if (lane >= d && !cut) value = merged(A, up, value);
    if (lane >= d) cut = cut || up_cut;
  }
  return value;
}

}  // namespace gpuolap::groupby::gpu
