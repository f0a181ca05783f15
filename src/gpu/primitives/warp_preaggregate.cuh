#pragma once
// Warp pre-aggregation: before the atomic update, lanes of a warp that hold
// contributions to the same target merge them so that one lane writes.
// Every function is called by all 32 lanes together (full mask); lanes
// without a contribution pass valid = false and take part with the identity,
// so partial warps and uneven target counts need no special masks.
//
//   lane0  (Eichel, thesis §4.2.1): lanes compare their target with the
//          first lane holding one; the matches merge into it.
//   stride (thesis §4.3.4, listing 3): lane l compares with lane l mod N,
//          N = the first lane's target count (if N <= 31); each of the
//          first N lanes collects its residue class.
//   match  (__match_any_sync): lanes with equal targets form groups, each
//          merged into its lowest lane.
//   run    (past the thesis; lean maps only, lean_run_kernel.cuh): each
//          thread first merges its successive facts of equal target in
//          registers, and the warp merges the runs that end together with lane0.
#include <cuda_runtime.h>

#include "accumulate.cuh"
#include "gpuolap/gpu_options.hpp"  // Preagg

namespace gpuolap::gpu {

constexpr unsigned kFullWarp = 0xffffffffu;

// Moves the kept fields of a part between lanes with `shuffle`, one of the
// __shfl*_sync intrinsics bound to its lane argument.
template <int F, class Shuffle>
__device__ inline Part shuffle_fields(const Part& p, Shuffle shuffle) {
  Part q = p;
  if (F & kSum) q.sum = shuffle(p.sum);
  if (F & kExact) q.exact = DeviceSum{{shuffle(p.exact.word[0]), shuffle(p.exact.word[1]), shuffle(p.exact.word[2])}};
  if (F & kCount) q.count = shuffle(p.count);
  if (F & kMin) q.min = shuffle(p.min);
  if (F & kMax) q.max = shuffle(p.max);
  return q;
}

template <int F>
__device__ inline Part shuffle_part(const Part& p, int src) {
  return shuffle_fields<F>(p, [src](auto v) { return __shfl_sync(kFullWarp, v, src); });
}

template <int F>
__device__ inline Part shuffle_xor_part(const Part& p, int lane_mask) {
  return shuffle_fields<F>(p, [lane_mask](auto v) { return __shfl_xor_sync(kFullWarp, v, lane_mask); });
}

// Merges into each lane the parts of the lanes in its `group` mask (lanes
// outside every group contribute nothing). All lanes loop over the lanes of
// `members`, the union of the groups, so the shuffles stay convergent.
template <int F>
__device__ inline Part gather_group(const Part& own, unsigned group, unsigned members, const SumGrid& g) {
  Part total = Part::identity();
  for (unsigned rest = members; rest;) {
    const int src = __ffs(rest) - 1;
    rest &= rest - 1;
    const Part p = shuffle_part<F>(own, src);
    if (group & (1u << src)) total.merge<F>(p, g);
  }
  return total;
}

// Returns whether this lane must write `part` (which may now be merged).
// `stride` is only read by Preagg::stride: the first lane's target count;
// `g`, the exact sums' grid, only with kExact.
template <Preagg P, int F>
__device__ inline bool warp_preaggregate(bool valid, uint64_t target, Part& part, unsigned stride,
                                         const SumGrid& g) {
  const int lane = threadIdx.x & 31;
  if constexpr (P == Preagg::none) {
    return valid;
  } else if constexpr (P == Preagg::lane0) {
    const unsigned holders = __ballot_sync(kFullWarp, valid);
    if (holders == 0) return false;
    const int leader = __ffs(holders) - 1;
    const uint64_t leader_target = __shfl_sync(kFullWarp, target, leader);
    const bool merged = valid && target == leader_target;
    // Butterfly over the warp: every lane ends with the merge of the matches.
    Part m = merged ? part : Part::identity();
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) m.merge<F>(shuffle_xor_part<F>(m, offset), g);
    if (lane == leader) part = m;
    return valid && (!merged || lane == leader);
  } else if constexpr (P == Preagg::stride) {
    if (stride == 0 || stride > 31) return valid;
    const int reference = lane % static_cast<int>(stride);
    const uint64_t reference_target = __shfl_sync(kFullWarp, target, reference);
    const bool reference_valid = __shfl_sync(kFullWarp, valid, reference);
    const bool merged = valid && reference_valid && target == reference_target;
    const unsigned joined = __ballot_sync(kFullWarp, merged);
    if (__popc(joined) <= static_cast<int>(stride)) return valid;  // nobody beyond the references merged
    // Lane r < stride collects the merged lanes of its residue class.
    unsigned group = 0;
    if (lane < static_cast<int>(stride) && merged)
      for (int l = lane; l < 32; l += static_cast<int>(stride)) group |= joined & (1u << l);
    const Part collected = gather_group<F>(merged ? part : Part::identity(), group, joined, g);
    if (group) part = collected;
    return valid && (!merged || lane < static_cast<int>(stride));
  } else {
    // Lanes without a contribution get distinct keys (targets are < 2^63).
    const uint64_t key = valid ? target : ~0ull - static_cast<uint64_t>(lane);
    const unsigned peers = __match_any_sync(kFullWarp, key);
    const unsigned shared = __ballot_sync(kFullWarp, valid && __popc(peers) > 1);
    if (shared == 0) return valid;
    const bool leader = valid && lane == __ffs(peers) - 1;
    const Part collected = gather_group<F>(part, (leader && __popc(peers) > 1) ? peers : 0u, shared, g);
    if (leader && __popc(peers) > 1) part = collected;
    return valid && (leader || __popc(peers) == 1);
  }
}

}  // namespace gpuolap::gpu
