// The gpu H-tree as its kernels see it: the aggregate's device layout, a
// level's arrays, and the searches the update and query kernels share
// (htree_gpu.cu, query_kernels.cu). Device code: included by .cu files only.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "htree/htree.hpp"

namespace gpuolap::htree {

// Aggregate's layout without its host initializers, for device code.
struct DevAgg {
  unsigned long long count;
  double sum, min, max;
};
static_assert(sizeof(DevAgg) == sizeof(Aggregate) && offsetof(DevAgg, sum) == offsetof(Aggregate, sum) &&
              offsetof(DevAgg, min) == offsetof(Aggregate, min) && offsetof(DevAgg, max) == offsetof(Aggregate, max));

__host__ __device__ __forceinline__ DevAgg empty_agg() { return {0ull, 0.0, HUGE_VAL, -HUGE_VAL}; }

struct MergeAgg {
  __host__ __device__ __forceinline__ DevAgg operator()(const DevAgg& a, const DevAgg& b) const {
    return {a.count + b.count, a.sum + b.sum, a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max};
  }
};

// One level as the query and update kernels read it.
struct LevelView {
  const std::uint32_t* key;
  const std::uint32_t* parent;
  const std::uint32_t* first_child;
  const std::uint32_t* child_count;
  const DevAgg* aggregate;
  const std::uint32_t* side_links;
  const std::uint32_t* header_key;
  const std::uint32_t* header_count;
  const std::uint32_t* header_first;
  const std::uint32_t* first_leaf;  // the first leaf row below each node (leaf rows are sorted by path)
  std::uint32_t nodes;
  std::uint32_t headers;
};

// The lower bound of key among keys[lo, hi).
__device__ __forceinline__ std::uint32_t lower_bound(const std::uint32_t* keys, std::uint32_t lo, std::uint32_t hi,
                                                     std::uint32_t key) {
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Where an online query's side-link list is: the deepest instantiated
// level's header entry for the query's value (count 0: none).
struct SideLinkList {
  int deepest, shallowest;
  std::uint32_t first, count;
};
__device__ __forceinline__ SideLinkList side_link_list(const std::uint32_t* c, int m, const LevelView* levels) {
  SideLinkList s{m - 1, 0, 0, 0};
  while (s.deepest > 0 && c[s.deepest] == kAny) --s.deepest;
  while (s.shallowest < s.deepest && c[s.shallowest] == kAny) ++s.shallowest;
  const LevelView& l = levels[s.deepest];
  const std::uint32_t h = lower_bound(l.header_key, 0, l.headers, c[s.deepest]);
  if (h < l.headers && l.header_key[h] == c[s.deepest]) {
    s.first = l.header_first[h];
    s.count = l.header_count[h];
  }
  return s;
}

// Whether side-link node `node` of level f matches the instantiated
// dimensions above it (walking up to the shallowest one only).
__device__ __forceinline__ bool matches_above(const std::uint32_t* c, const LevelView* levels, int f, int shallowest,
                                              std::uint32_t node) {
  std::uint32_t up = levels[f].parent[node];
  for (int j = f - 1; j >= shallowest; --j) {
    if (c[j] != kAny && levels[j].key[up] != c[j]) return false;
    up = levels[j].parent[up];
  }
  return true;
}

}  // namespace gpuolap::htree
