#pragma once
// Target stores: where an operator's updates accumulate, keyed by a dense
// target number in a window [first, first + targets) (an area's target
// cells, a GROUP BY's group ids). Any kernel can use them: it binds the
// store once per block, calls contribute() (warp pre-aggregation, then one
// update per distinct target) with all lanes together, and flushes the
// store at the end of the block.
//
//   HashStore    open addressing with linear probing (thesis §4.2.2), for
//                areas too large for a slot per target
//   DenseStore   a slot per (copy, target)
//   SharedStore  block-private replicas in shared memory, flushed into one
//                dense copy in global memory
// Global stores spread a target over `copies` slots (the thesis' parallel
// hash functions): a lane writes copy (global thread id % copies), and the
// compaction (compaction.hpp) merges them.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/primitives/accumulate.cuh"
#include "gpu/primitives/warp_preaggregate.cuh"

namespace gpuolap::gpu {

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
  unsigned long long* exact;    // kExact: three words a slot, word k of slot s at exact[k * slots + s]
  SumGrid grid;                 // kExact: the grid the sums are on (contributions are put on it)
};

// Slot s's exact sum (its words in the grid's form, read as an ExactSum).
__device__ inline ExactSum exact_at(const TargetTable& t, uint64_t s) {
  return DeviceSum{{t.exact[s], t.exact[t.slots + s], t.exact[2 * t.slots + s]}}.exact(t.grid);
}

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
    if (F & kExact) c.exact.merge(exact_at(t, slot));
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
  const bool adds = warp_preaggregate<P, F>(valid, target, part, stride, store.t.grid) && in_window(store.t, target);
  if (adds) store.template add<F>(target, copy, part);
  count_updates(store.t, adds);
}

template <int F>
__device__ inline void add_to_slot(const TargetTable& t, uint64_t slot, const Part& p) {
  if (F & kSum) atomicAdd(&t.sum[slot], p.sum);
  if (F & kExact)
    atomic_add_words(&t.exact[slot], &t.exact[t.slots + slot], &t.exact[2 * t.slots + slot], p.exact, t.grid);
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
// Shared-memory bytes of a block's shared store of `slots` slots (targets x
// replicas) for a field set: SharedStore::bind's layout.
inline size_t shared_store_bytes(int fields, uint64_t slots) {
  size_t per_slot = 0;
  if (fields & kSum) per_slot += 8;
  if (fields & kExact) per_slot += 24;
  if (fields & kMin) per_slot += 8;
  if (fields & kMax) per_slot += 8;
  if (fields & kCount) per_slot += 4;
  return per_slot * slots;
}

struct SharedStore {
  TargetTable t;
  double* sum;
  unsigned* count;
  unsigned long long* min;
  unsigned long long* max;
  uint64_t base;      // this thread's replica: replica * targets
  unsigned long long* exact = nullptr;  // three words a slot: word k of slot i at exact[k * n + i]
  uint64_t n = 0;                       // slots: targets x replicas

  static constexpr long long kUntouchedSum = static_cast<long long>(0x8000000000000000ull);  // -0.0

  template <int F>
  __device__ void bind(uint8_t* smem) {
    // Layout (shared_store_bytes): 8-byte fields first, then counts; each
    // array holds `replicas` copies of the targets.
    uint8_t* p = smem;
    n = t.targets * t.replicas;
    if (F & kExact) { exact = reinterpret_cast<unsigned long long*>(p); p += 24 * n; }
    if (F & kSum) { sum = reinterpret_cast<double*>(p); p += 8 * n; }
    if (F & kMin) { min = reinterpret_cast<unsigned long long*>(p); p += 8 * n; }
    if (F & kMax) { max = reinterpret_cast<unsigned long long*>(p); p += 8 * n; }
    if (F & kCount) { count = reinterpret_cast<unsigned*>(p); p += 4 * n; }
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
      if (F & kSum) sum[i] = (F & kCount) ? 0.0 : __longlong_as_double(kUntouchedSum);
      if (F & kExact) exact[i] = exact[n + i] = exact[2 * n + i] = 0;
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
    if (F & kExact) atomic_add_words(&exact[i], &exact[n + i], &exact[2 * n + i], p.exact, t.grid);
    if (F & kCount) atomicAdd(&count[i], p.count);
    if (F & kMin) atomicMin(&min[i], static_cast<unsigned long long>(p.min));
    if (F & kMax) atomicMax(&max[i], static_cast<unsigned long long>(p.max));
  }
  template <int F>
  __device__ void flush() {
    __syncthreads();
    for (uint64_t x = threadIdx.x; x < t.targets; x += blockDim.x) {
      Part p = Part::identity();
      bool any = false;
      for (unsigned r = 0; r < t.replicas; ++r) {
        const uint64_t i = uint64_t{r} * t.targets + x;
        if (!is_touched<F>(i)) continue;
        any = true;
        Part q = Part::identity();
        if (F & kSum) q.sum = sum[i];
        if (F & kExact) q.exact = DeviceSum{{exact[i], exact[n + i], exact[2 * n + i]}};
        if (F & kCount) q.count = count[i];
        if (F & kMin) q.min = min[i];
        if (F & kMax) q.max = max[i];
        p.merge<F>(q, t.grid);
      }
      if (!any) continue;
      if (!(F & kCount) && !t.touched[x]) t.touched[x] = 1;
      add_to_slot<F>(t, x, p);
    }
  }
};

}  // namespace gpuolap::gpu
