#pragma once
// The source-based aggregation kernel (thesis §4.2): a grid-stride loop over
// the (prefiltered) source cells, one thread per cell, each thread walking its
// cell's target cells — the cartesian product of its dimensions' target
// lists — and adding w·v to each through a store, after optional warp
// pre-aggregation. Templated on the store (where targets accumulate), the
// pre-aggregation method and the fields kept.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/primitives/target_store.cuh"
#include "molap/gpu/aggregate_kernels.hpp"
#include "molap/planning/device_map.hpp"

namespace gpuolap::gpu {

// The map when it fits in constant memory. Each translation unit that
// includes this header has its own copy (aggregate_kernels.cu, and the CDP
// kernels' cdp_kernels.cu, a separately linked device program), and uploads
// to it through its own upload function.
namespace {
__constant__ uint8_t c_map[kConstantMapBytes];
}

// Reads element i of a map array, from constant or global memory.
template <typename T>
__device__ inline T map_read(const DeviceMap& m, uint32_t byte_offset, uint32_t i) {
  if (m.in_constant) return reinterpret_cast<const T*>(c_map + byte_offset)[i];
  return __ldg(reinterpret_cast<const T*>(m.global + byte_offset) + i);
}

// A cell's walk over its targets, one digit per dimension: at[d] indexes the
// base's target list [begin[d], end[d]) of dimension d (D bounds the map's
// dimensions). The target and weight at the digits: the weight is multiplied
// in dimension order, as on the CPU, so min and max are bit-identical;
// __dmul_rn keeps the compiler from fusing.
template <int D>
__device__ __forceinline__ void digits_target(const DeviceMap& map, const uint32_t (&at)[D], uint64_t& target,
                                              double& weight) {
  target = 0;
  weight = 1.0;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    if (d < map.dims) {
      target += uint64_t{map_read<uint32_t>(map, map.positions_at[d], at[d])} * map.stride[d];
      weight = __dmul_rn(weight, map_read<double>(map, map.weights_at[d], at[d]));
    }
  }
}

// The next target's digits (an odometer: the last dimension moves fastest);
// after the last target they wrap round to the first.
template <int D>
__device__ __forceinline__ void step_digits(const DeviceMap& map, uint32_t (&at)[D], const uint32_t (&begin)[D],
                                            const uint32_t (&end)[D]) {
  bool carried = true;
#pragma unroll
  for (int d = D - 1; d >= 0; --d) {
    if (d < map.dims && carried) {
      if (++at[d] < end[d]) carried = false;
      else at[d] = begin[d];
    }
  }
}

// A lane's contribution at its walk's digits (the target, and the value
// times the target's weight, on the sums' grid), the digits then stepped to
// the next target; the identity for a lane without one.
template <int F, int D>
__device__ __forceinline__ Part walk_contribution(bool valid, const DeviceMap& map, uint32_t (&at)[D],
                                                  const uint32_t (&begin)[D], const uint32_t (&end)[D], double value,
                                                  const SumGrid& grid, uint64_t& target) {
  target = 0;
  if (!valid) return Part::identity();
  double w;
  digits_target<D>(map, at, target, w);
  step_digits<D>(map, at, begin, end);
  return Part::of<F>(value, w, grid);
}


// One source cell: walk its targets (the cartesian product of its
// dimensions' target lists), pre-aggregate across the warp, add. All lanes
// of a warp call this together; `present` is false for lanes past the end.
// D bounds the map's dimensions; Single: every base has at most one target,
// so there is no walk.
template <class Store, Preagg P, int F, int D, bool Single>
__device__ __forceinline__ void aggregate_cell(bool present, uint64_t key, double value, const DeviceMap& map,
                                               Store& store, unsigned copy) {
  if constexpr (Single) {
    bool relevant = present && value == value;  // NaN: no value for this measure
    uint64_t target = 0;
    double w = 1.0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      if (d < map.dims && relevant) {
        const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
        const uint32_t at = map_read<uint32_t>(map, map.offsets_at[d], b);
        if (at == map_read<uint32_t>(map, map.offsets_at[d], b + 1)) {
          relevant = false;
        } else {
          target += uint64_t{map_read<uint32_t>(map, map.positions_at[d], at)} * map.stride[d];
          w = __dmul_rn(w, map_read<double>(map, map.weights_at[d], at));
        }
      }
    }
    const Part part = relevant ? Part::of<F>(value, w, store.t.grid) : Part::identity();
    const unsigned first_lane_count = __shfl_sync(kFullWarp, relevant ? 1u : 0u, 0);
    contribute<P, F>(relevant, target, part, first_lane_count, store, copy);
    return;
  }
  uint32_t at[D], begin[D], end[D];
  unsigned count = present && value == value ? 1u : 0u;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    if (d < map.dims && count) {
      const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
      begin[d] = at[d] = map_read<uint32_t>(map, map.offsets_at[d], b);
      end[d] = map_read<uint32_t>(map, map.offsets_at[d], b + 1);
      count *= end[d] - begin[d];
    }
  }
  const unsigned most = __reduce_max_sync(kFullWarp, count);
  const unsigned first_lane_count = __shfl_sync(kFullWarp, count, 0);
  for (unsigned j = 0; j < most; ++j) {
    const bool valid = j < count;
    uint64_t target;
    const Part part = walk_contribution<F, D>(valid, map, at, begin, end, value, store.t.grid, target);
    contribute<P, F>(valid, target, part, first_lane_count, store, copy);
  }
}

template <class Store, Preagg P, int F, int D, bool Single>
__global__ void aggregate_kernel(KernelInput in, DeviceMap map, Store store) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);

  // Each thread loads a batch of cells before working on the first, so
  // more loads are in flight than one cell per thread allows.
  constexpr int kBatch = 4;
  const uint64_t threads = uint64_t{gridDim.x} * blockDim.x;
  const unsigned copy = static_cast<unsigned>((uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) %
                                              (store.t.copies ? store.t.copies : 1));
  // The loop bound is the same for every thread of a block, so warps stay
  // converged for the warp-wide pre-aggregation.
  for (uint64_t first = uint64_t{blockIdx.x} * blockDim.x * kBatch; first < in.n; first += threads * kBatch) {
    uint64_t keys[kBatch];
    double values[kBatch];
    bool present[kBatch];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const uint64_t i = first + static_cast<uint64_t>(u) * blockDim.x + threadIdx.x;
      present[u] = i < in.n;
      keys[u] = 0;
      values[u] = 0.0;
      if (present[u]) {
        const uint64_t cell = in.cells ? in.cells[i] : i;
        keys[u] = in.keys[cell];
        values[u] = in.values[cell];
      }
    }
    // Not unrolled (the body is large): shift the batch instead of indexing
    // it, so it stays in registers.
#pragma unroll 1
    for (int u = 0; u < kBatch; ++u) {
      aggregate_cell<Store, P, F, D, Single>(present[0], keys[0], values[0], map, store, copy);
#pragma unroll
      for (int v = 0; v + 1 < kBatch; ++v) {
        keys[v] = keys[v + 1];
        values[v] = values[v + 1];
        present[v] = present[v + 1];
      }
    }
  }
  store.template flush<F>();
}

// Phase 2 of two-phase aggregation: every non-empty class-tuple cell adds
// its aggregate, times each target's weight w, to its targets. A negative
// w swaps min and max; rounding is monotone, so the results are exact.
//
// The (tuple, target) pairs form a work list: `ends` holds the inclusive
// prefix sums of each tuple's target count, and thread i takes pair i, so
// the work is spread evenly however unevenly the tuples fan out (M3's
// 27,968 tuples reach from 1 to thousands of targets each).

// Class of tuple x in dimension d, and where its target list starts and ends.
__device__ inline void class_list(const ExpandMap& em, int d, uint64_t x, uint32_t& begin, uint32_t& end) {
  const uint32_t cls = static_cast<uint32_t>((x / em.class_stride[d]) % em.class_count[d]);
  const uint32_t* offsets = reinterpret_cast<const uint32_t*>(em.global + em.offsets_at[d]);
  begin = offsets[cls];
  end = offsets[cls + 1];
}

template <class Store, int F>
__global__ void expand_kernel(const Cell* cells, const uint64_t* ends, uint64_t n, ExpandMap em, Store store,
                              uint64_t* pairs) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);
  const uint64_t total = n ? ends[n - 1] : 0;
  const uint64_t threads = uint64_t{gridDim.x} * blockDim.x;
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (id == 0 && pairs) *pairs = total;
  const unsigned copy = static_cast<unsigned>(id % (store.t.copies ? store.t.copies : 1));
  for (uint64_t i = id; i < total; i += threads) {
    // The tuple: the first whose end is past i.
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
      const uint64_t mid = (lo + hi) / 2;
      if (ends[mid] <= i) lo = mid + 1;
      else hi = mid;
    }
    const uint64_t x = lo;
    uint64_t j = i - (x ? ends[x - 1] : 0);
    // Pair j of the tuple's lists, the last dimension moving fastest.
    uint32_t at[kMaxDims];
#pragma unroll
    for (int d = kMaxDims - 1; d >= 0; --d) {
      if (d < em.dims) {
        uint32_t begin, end;
        class_list(em, d, x, begin, end);
        const uint32_t len = end - begin;
        at[d] = begin + static_cast<uint32_t>(j % len);
        j /= len;
      }
    }
    // Weights multiply in dimension order, as on the CPU.
    uint64_t target = 0;
    double w = 1.0;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d < em.dims) {
        target += uint64_t{reinterpret_cast<const uint32_t*>(em.global + em.positions_at[d])[at[d]]} * em.target_stride[d];
        w = __dmul_rn(w, reinterpret_cast<const double*>(em.global + em.weights_at[d])[at[d]]);
      }
    }
    const Cell c = cells[x];
    Part p = Part::identity();
    if (F & kSum) p.sum = __dmul_rn(w, c.sum);
    if (F & kExact) {
      ExactSum scaled;
      scaled.add_scaled(c.exact, w, store.t.grid);  // exactly Σ(v·w)
      p.exact = DeviceSum::of(scaled, store.t.grid);
    }
    if (F & kCount) p.count = static_cast<unsigned>(c.count);
    if (F & kMin) p.min = encode_ordered(__dmul_rn(w, decode_ordered(w >= 0 ? c.min : c.max)));
    if (F & kMax) p.max = encode_ordered(__dmul_rn(w, decode_ordered(w >= 0 ? c.max : c.min)));
    store.template add<F>(target, copy, p);
  }
  store.template flush<F>();
}

}  // namespace gpuolap::gpu
