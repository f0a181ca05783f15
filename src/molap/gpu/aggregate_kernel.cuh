#pragma once
// The source-based aggregation kernel (thesis §4.2): a grid-stride loop over
// the (prefiltered) source cells, one thread per cell, each thread walking its
// cell's target cells — the cartesian product of its dimensions' target
// lists — and adding w·v to each through a store, after optional warp
// pre-aggregation. Templated on the store (where targets accumulate), the
// pre-aggregation method and the fields kept.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/primitives/accumulate.cuh"
#include "molap/planning/device_map.hpp"
#include "gpu/primitives/warp_preaggregate.cuh"

namespace gpuolap::gpu {

// The map when it fits in constant memory. Each translation unit that
// includes this header has its own copy (aggregate_kernels.cu, and the CDP
// kernels' cdp_kernels.cu, a separately linked device program), and uploads
// to it through its own upload function.
namespace {
__constant__ uint8_t c_map[kConstantMapBytes];
}

// Global target storage, spread over `copies` slots per target (the thesis'
// parallel hash functions): a lane writes copy (global thread id % copies).
struct TargetTable {
  uint64_t* keys;  // hash store: target in a slot, kEmptyKey when free
  double* sum;
  unsigned long long* count;
  unsigned long long* min;
  unsigned long long* max;
  uint8_t* touched;        // dense stores: a slot has a contribution
  uint64_t slots;          // hash: capacity (a power of two); dense: targets * copies
  uint64_t first;          // the window of target numbers this store takes: [first, first + targets)
  uint64_t targets;        // (the whole area unless it is aggregated in chunks; others are skipped)
  unsigned copies;
  unsigned replicas;       // shared store: copies per block
  unsigned* overflow;      // hash: set when a probe went round the table
  unsigned long long* updates;  // when not null: counts the updates of the facts' kernel (thesis table 5.2)
};

// Merges the `copies` slots of dense target x into c (count, or else the
// touched flag, says which hold a contribution); false when none does.
template <int F>
__device__ inline bool merge_dense_copies(const TargetTable& t, uint64_t x, Cell& c) {
  bool any = false;
  for (unsigned k = 0; k < t.copies; ++k) {
    const uint64_t slot = uint64_t{k} * t.targets + x;
    const bool hit = (F & kCount) ? t.count[slot] > 0 : t.touched[slot] != 0;
    if (!hit) continue;
    any = true;
    if (F & kSum) c.sum += t.sum[slot];
    if (F & kCount) c.count += t.count[slot];
    if (F & kMin) c.min = t.min[slot] < c.min ? t.min[slot] : c.min;
    if (F & kMax) c.max = t.max[slot] > c.max ? t.max[slot] : c.max;
  }
  return any;
}

// Whether a target falls in the store's window of the area (a chunk's).
__device__ __forceinline__ bool in_window(const TargetTable& t, uint64_t target) {
  return target - t.first < t.targets;
}

// Adds the warp's updates to the count (all lanes call it together).
__device__ __forceinline__ void count_updates(const TargetTable& t, bool adds) {
  if (!t.updates) return;
  const unsigned n = __popc(__ballot_sync(kFullWarp, adds));
  if ((threadIdx.x & 31) == 0 && n) atomicAdd(t.updates, static_cast<unsigned long long>(n));
}

constexpr uint64_t kEmptyKey = ~0ull;

// Pre-aggregates the lanes' contributions across the warp (P), then the
// lanes left holding one add it to the store and the warp counts its
// updates. All lanes call it together; `stride` is Preagg::stride's.
template <Preagg P, int F, class Store>
__device__ __forceinline__ void contribute(bool valid, uint64_t target, Part part, unsigned stride, Store& store,
                                           unsigned copy) {
  // A target of another chunk's window is no update of this store's.
  const bool adds = warp_preaggregate<P, F>(valid, target, part, stride) && in_window(store.t, target);
  if (adds) store.template add<F>(target, copy, part);
  count_updates(store.t, adds);
}

template <int F>
__device__ inline void add_to_slot(const TargetTable& t, uint64_t slot, const Part& p) {
  if (F & kSum) atomicAdd(&t.sum[slot], p.sum);
  if (F & kCount) atomicAdd(&t.count[slot], static_cast<unsigned long long>(p.count));
  if (F & kMin) atomicMin(&t.min[slot], static_cast<unsigned long long>(p.min));
  if (F & kMax) atomicMax(&t.max[slot], static_cast<unsigned long long>(p.max));
}

__device__ inline uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

// Stores in global memory need no per-block set-up or flush.
struct GlobalStore {
  TargetTable t;
  template <int F>
  __device__ void bind(uint8_t*) {}
  template <int F>
  __device__ void flush() {}
};

// Open addressing with linear probing; copy c of a target hashes separately.
struct HashStore : GlobalStore {
  template <int F>
  __device__ void add(uint64_t target, unsigned copy, const Part& p) {
    if (target - t.first >= t.targets) return;  // another chunk's
    const uint64_t mask = t.slots - 1;
    uint64_t slot = mix64(target * t.copies + copy) & mask;
    for (uint64_t probes = 0; probes < t.slots; ++probes) {
      uint64_t seen = t.keys[slot];
      if (seen == kEmptyKey) {
        seen = atomicCAS(reinterpret_cast<unsigned long long*>(&t.keys[slot]), kEmptyKey, target);
        if (seen == kEmptyKey) seen = target;
      }
      if (seen == target) {
        add_to_slot<F>(t, slot, p);
        return;
      }
      slot = (slot + 1) & mask;
    }
    atomicExch(t.overflow, 1u);
  }
};

// One slot per (copy, target): no hashing when the area is small enough.
struct DenseStore : GlobalStore {
  template <int F>
  __device__ void add(uint64_t target, unsigned copy, const Part& p) {
    const uint64_t x = target - t.first;
    if (x >= t.targets) return;  // another chunk's
    const uint64_t slot = uint64_t{copy} * t.targets + x;
    if (!(F & kCount) && !t.touched[slot]) t.touched[slot] = 1;
    add_to_slot<F>(t, slot, p);
  }
};

// Block-private accumulators in shared memory, flushed to one dense copy in
// global memory when the block is done. With few targets, each warp (or
// group of warps) gets its own replica, so warps never contend for a slot
// (shared-memory double atomics are compare-and-swap loops on sm_90).
// A slot's own value says whether it has a contribution, so no byte or bit
// of shared memory and no instruction goes to marking it (M3's 27,968
// class tuples then leave room for the thread-run kernel's map): a count
// above 0; a min or max past its identity; a sum that is no longer -0.0,
// its initial value, as contributions of -0.0 are added as +0.0 (the sum
// of a target whose every contribution is -0.0 is then +0.0, equal to it,
// as two-phase aggregation already gives). Values and weights are finite;
// only a NaN contribution (weights whose product overflows, times a value
// of 0) could encode as a min's or max's identity and leave its slot
// looking untouched.
struct SharedStore {
  TargetTable t;
  double* sum;
  unsigned* count;
  unsigned long long* min;
  unsigned long long* max;
  uint64_t base;      // this thread's replica: replica * targets

  static constexpr long long kUntouchedSum = static_cast<long long>(0x8000000000000000ull);  // -0.0

  template <int F>
  __device__ void bind(uint8_t* smem) {
    // Layout (shared_store_bytes): 8-byte fields first, then counts; each
    // array holds `replicas` copies of the targets.
    uint8_t* p = smem;
    const uint64_t n = t.targets * t.replicas;
    if (F & kSum) { sum = reinterpret_cast<double*>(p); p += 8 * n; }
    if (F & kMin) { min = reinterpret_cast<unsigned long long*>(p); p += 8 * n; }
    if (F & kMax) { max = reinterpret_cast<unsigned long long*>(p); p += 8 * n; }
    if (F & kCount) { count = reinterpret_cast<unsigned*>(p); p += 4 * n; }
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
      if (F & kSum) sum[i] = (F & kCount) ? 0.0 : __longlong_as_double(kUntouchedSum);
      if (F & kMin) min[i] = kMinIdentity;
      if (F & kMax) max[i] = kMaxIdentity;
      if (F & kCount) count[i] = 0;
    }
    base = uint64_t{(threadIdx.x / 32) % t.replicas} * t.targets;
    __syncthreads();
  }
  template <int F>
  __device__ bool is_touched(uint64_t i) const {
    if (F & kCount) return count[i] > 0;
    if (F & kSum) return __double_as_longlong(sum[i]) != kUntouchedSum;
    if (F & kMin) return min[i] != kMinIdentity;
    return max[i] != kMaxIdentity;
  }
  template <int F>
  __device__ void add(uint64_t target, unsigned, const Part& p) {
    const uint64_t x = target - t.first;
    if (x >= t.targets) return;  // another chunk's
    const uint64_t i = base + x;
    if (F & kSum) atomicAdd(&sum[i], (F & kCount) ? p.sum : __dadd_rn(p.sum, 0.0));  // -0.0 + 0.0 = +0.0
    if (F & kCount) atomicAdd(&count[i], p.count);
    if (F & kMin) atomicMin(&min[i], static_cast<unsigned long long>(p.min));
    if (F & kMax) atomicMax(&max[i], static_cast<unsigned long long>(p.max));
  }
  template <int F>
  __device__ void flush() {
    __syncthreads();
    for (uint64_t x = threadIdx.x; x < t.targets; x += blockDim.x) {
      Part p{0.0, 0u, kMinIdentity, kMaxIdentity};
      bool any = false;
      for (unsigned r = 0; r < t.replicas; ++r) {
        const uint64_t i = uint64_t{r} * t.targets + x;
        if (!is_touched<F>(i)) continue;
        any = true;
        Part q{0.0, 0u, kMinIdentity, kMaxIdentity};
        if (F & kSum) q.sum = sum[i];
        if (F & kCount) q.count = count[i];
        if (F & kMin) q.min = min[i];
        if (F & kMax) q.max = max[i];
        p.merge<F>(q);
      }
      if (!any) continue;
      if (!(F & kCount) && !t.touched[x]) t.touched[x] = 1;
      add_to_slot<F>(t, x, p);
    }
  }
};

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
// times the target's weight), the digits then stepped to the next target;
// the identity for a lane without one.
template <int D>
__device__ __forceinline__ Part walk_contribution(bool valid, const DeviceMap& map, uint32_t (&at)[D],
                                                  const uint32_t (&begin)[D], const uint32_t (&end)[D], double value,
                                                  uint64_t& target) {
  target = 0;
  if (!valid) return Part::identity();
  double w;
  digits_target<D>(map, at, target, w);
  step_digits<D>(map, at, begin, end);
  return Part::of(__dmul_rn(w, value));
}

struct KernelInput {
  const uint64_t* keys;
  const double* values;
  const uint32_t* cells;  // prefiltered cell indices, or nullptr for every cell
  uint64_t n;             // cells to visit
  // The thread-run kernel's page skipping (fused prefilter: cells is null):
  // when not null, the kernel visits only these pages of `page_size` cells
  // (ascending, page_size a multiple of its step), dealt evenly to its warps.
  const uint32_t* pages = nullptr;
  uint64_t page_count = 0;
  uint64_t page_size = 0;
};

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
    const Part part = relevant ? Part::of(__dmul_rn(w, value)) : Part::identity();
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
    const Part part = walk_contribution<D>(valid, map, at, begin, end, value, target);
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
    if (F & kCount) p.count = static_cast<unsigned>(c.count);
    if (F & kMin) p.min = encode_ordered(__dmul_rn(w, decode_ordered(w >= 0 ? c.min : c.max)));
    if (F & kMax) p.max = encode_ordered(__dmul_rn(w, decode_ordered(w >= 0 ? c.max : c.min)));
    store.template add<F>(target, copy, p);
  }
  store.template flush<F>();
}

}  // namespace gpuolap::gpu
