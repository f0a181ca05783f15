// A child among its siblings: the search step of an on-popular-path query
// (Algorithm 3), host and device code.
//
// A node's children are a sorted run of unique keys. A binary search reads
// one key per step, each read waiting for the one before: on a GPU thread,
// which does not run ahead of a compare as a CPU core does, that is a
// memory latency a step (7 of them among 40 children, then one more to
// check the key found). Here the keys are probed kChildProbes at a time, reads
// that do not wait on each other, so that their latencies overlap: each
// round cuts the run to one of kChildProbes parts, and a run of kChildProbes keys
// or fewer is read whole (40 children: 2 rounds; one child: 1 read).
#pragma once

#include <cstdint>

#include "htree/key_packing.hpp"  // GPUOLAP_HTREE_HD

namespace gpuolap::htree {

constexpr std::uint32_t kChildProbes = 8;

// The index in [lo, hi) of the key equal to `key` among the sorted unique
// keys[lo, hi), or hi when there is none.
GPUOLAP_HTREE_HD std::uint32_t find_child(const std::uint32_t* keys, std::uint32_t lo, std::uint32_t hi,
                                          std::uint32_t key) {
  const std::uint32_t none = hi;
  // Every key of [lo, hi) that can equal `key` stays in it: keys[lo] <= key
  // (or lo is the first) and key < keys[hi] (or hi is the end).
  while (hi - lo > kChildProbes) {
    const std::uint64_t span = hi - lo;
    std::uint32_t below = 0;  // probes j = 1 .. kChildProbes - 1 whose key is <= key
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (std::uint32_t j = 1; j < kChildProbes; ++j)
      below += keys[lo + static_cast<std::uint32_t>(span * j / kChildProbes)] <= key;
    const std::uint32_t next_lo = below ? lo + static_cast<std::uint32_t>(span * below / kChildProbes) : lo;
    if (below + 1 < kChildProbes) hi = lo + static_cast<std::uint32_t>(span * (below + 1) / kChildProbes);
    lo = next_lo;
  }
  std::uint32_t found = none;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (std::uint32_t j = 0; j < kChildProbes; ++j)
    if (lo + j < hi && keys[lo + j] == key) found = lo + j;
  return found;
}

}  // namespace gpuolap::htree
