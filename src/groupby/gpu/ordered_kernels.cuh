#pragma once
// The kernels of ordered aggregation on the GPU (ordered_gpu.cu launches
// them). The paper's terms in CUDA's: a work item is a thread, a work group
// a block, the "local size" threads per block, the "intent" (chunk) the rows
// one thread walks, in order, one after the other.
//
// A row "starts a group" when its key tuple differs from the row before
// (flag 1; row 0 always starts). A row's group id is the inclusive prefix
// sum of the flags minus one. The paper's pipeline, kernel by kernel:
//   map          flags[i]
//   partial      per chunk, the inclusive prefix of the flags (pps) and the
//                chunk's total
//   offsets      the exclusive prefix of the chunk totals
//   add          ps[i] = pps[i] + offset of i's chunk - 1 (the group id)
//   aggregate    one of the four variants, atomics into the groups' slots
// The paper computes the offsets inside kernel 1 by having every chunk add
// its total atomically to every offset to its right: O(chunks^2) atomics,
// harmless at its 2^15 rows, hopeless at 2^30. Here kernel 1's offsets are
// a block scan of its chunks' totals plus, in the block that finishes last,
// a scan of the blocks' totals (one kernel still, as the paper's tables
// say). The 1-kernel architecture instead finds each tile's offset by a
// decoupled look-back (Merrill & Garland, as CUB's single-pass scans do).
#include <cuda_runtime.h>

#include <cstdint>

#include "groupby/aggregate_state.hpp"
#include "groupby/group_keys.hpp"

namespace gpuolap::groupby::gpu {

// The aggregates' slots and where their groups' states live: bits[g],
// high[g] (integer sums) and counts[g] (where the slot keeps a count).
struct DeviceAggregates {
  int count = 0;
  AggregateSlot slot[kMaxAggregates];
  std::uint64_t* bits[kMaxAggregates] = {};
  std::uint64_t* high[kMaxAggregates] = {};
  std::uint64_t* counts[kMaxAggregates] = {};
};

// Each group's keys, written by the thread that sees the group's first row.
struct DeviceGroupKeys {
  void* values[kMaxKeys] = {};
  std::uint8_t* nulls[kMaxKeys] = {};
};

// Thread-private states of up to N aggregates, indexed only by unrolled
// loops so that they stay in registers (kernels instantiated for a smaller
// N hold fewer registers).
template <int N = kMaxAggregates>
struct States {
  AggregateState s[N];
};

template <int N>
__device__ __forceinline__ void reset(const DeviceAggregates& A, States<N>& st) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) st.s[a] = identity_state(A.slot[a]);
}

template <int N>
__device__ __forceinline__ void add(const DeviceAggregates& A, States<N>& st, std::size_t row) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) add_row(A.slot[a], st.s[a], row);
}

// Writes the identity into group g's slots (before atomics may add to them).
__device__ __forceinline__ void init_group(const DeviceAggregates& A, std::uint32_t g) {
#pragma unroll
  for (int a = 0; a < kMaxAggregates; ++a)
    if (a < A.count) {
      const AggregateState id = identity_state(A.slot[a]);
      A.bits[a][g] = id.bits;
      if (A.high[a]) A.high[a][g] = 0;
      if (A.counts[a]) A.counts[a][g] = 0;
    }
}

// Stores a state as group g's value (the group's first or only writer).
template <int N>
__device__ __forceinline__ void store_group(const DeviceAggregates& A, std::uint32_t g, const States<N>& st) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) {
      A.bits[a][g] = st.s[a].bits;
      if (A.high[a]) A.high[a][g] = st.s[a].high;
      if (A.counts[a]) A.counts[a][g] = st.s[a].count;
    }
}

// Adds state `s` of aggregate a into group g's slot atomically.
__device__ __forceinline__ void atomic_merge_slot(const DeviceAggregates& A, int a, std::uint32_t g,
                                                  const AggregateState& s) {
  using ull = unsigned long long;
  const AggregateSlot& slot = A.slot[a];
  ull* bits = reinterpret_cast<ull*>(A.bits[a] + g);
  switch (slot.kind) {
    case AggregateKind::CountStar:
    case AggregateKind::Count:
      atomicAdd(bits, static_cast<ull>(s.bits));
      break;
    case AggregateKind::Sum:
    case AggregateKind::Avg:
      if (slot.type == ValueType::Double) {
        atomicAdd(reinterpret_cast<double*>(bits), bits_double(s.bits));
      } else {
        // 128 bits as two words: the carry out of the low word goes to the
        // high one. Exact in any order of the atomics.
        const ull old = atomicAdd(bits, static_cast<ull>(s.bits));
        const ull carry = old + s.bits < old ? 1 : 0;
        atomicAdd(reinterpret_cast<ull*>(A.high[a] + g), static_cast<ull>(s.high) + carry);
      }
      break;
    case AggregateKind::Min:
      atomicMin(bits, static_cast<ull>(s.bits));
      break;
    case AggregateKind::Max:
      atomicMax(bits, static_cast<ull>(s.bits));
      break;
  }
  if (A.counts[a]) atomicAdd(reinterpret_cast<ull*>(A.counts[a] + g), static_cast<ull>(s.count));
}

// Adds a state into group g's slots atomically.
template <int N>
__device__ __forceinline__ void atomic_merge(const DeviceAggregates& A, std::uint32_t g, const States<N>& st) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) atomic_merge_slot(A, a, g, st.s[a]);
}

__device__ __forceinline__ void write_keys(const KeySlots& keys, const DeviceGroupKeys& out, std::uint32_t g,
                                           std::size_t row) {
  for (int k = 0; k < keys.count; ++k) {
    const KeySlot& s = keys.key[k];
    if (s.type == ValueType::Int32) static_cast<std::int32_t*>(out.values[k])[g] = static_cast<const std::int32_t*>(s.values)[row];
    else static_cast<std::uint64_t*>(out.values[k])[g] = static_cast<const std::uint64_t*>(s.values)[row];
    if (s.nulls) out.nulls[k][g] = s.nulls[row];
  }
}

// A single integer key without NULLs: the common case, compared without the
// general tuple loop.
template <class T>
struct OneKey {
  const T* values;
  __device__ __forceinline__ bool starts(std::size_t i) const { return i == 0 || values[i] != values[i - 1]; }
};

// Group g's keys from row `row`: a single key straight, a tuple by the
// general loop over its columns.
template <class T>
__device__ __forceinline__ void write_group_keys(const OneKey<T>& key, const KeySlots&, const DeviceGroupKeys& out,
                                                 std::uint32_t g, std::size_t row) {
  static_cast<T*>(out.values[0])[g] = key.values[row];
}
__device__ __forceinline__ void write_group_keys(const KeySlots&, const KeySlots& keys, const DeviceGroupKeys& out,
                                                 std::uint32_t g, std::size_t row) {
  write_keys(keys, out, g, row);
}

// ---- Block scan for any block size (the paper's local size 1..1024) ----

// The exclusive prefix of `value` over the block's threads, and the block's
// total in `*total`. Every thread of the block must call it.
__device__ __forceinline__ std::uint32_t block_exclusive_scan(std::uint32_t value, std::uint32_t* total) {
  __shared__ std::uint32_t warp_sums[32];
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  const int lanes_here = min(32, static_cast<int>(blockDim.x) - warp * 32);
  const unsigned mask = lanes_here == 32 ? 0xffffffffu : (1u << lanes_here) - 1;
  std::uint32_t inclusive = value;
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t up = __shfl_up_sync(mask, inclusive, d);
    if (lane >= d && lane < lanes_here) inclusive += up;
  }
  if (lane == lanes_here - 1) warp_sums[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const unsigned wmask = warps == 32 ? 0xffffffffu : (1u << warps) - 1;
    if (lane < warps) {
      std::uint32_t w = warp_sums[lane];
      for (int d = 1; d < 32; d <<= 1) {
        const std::uint32_t up = __shfl_up_sync(wmask, w, d);
        if (lane >= d) w += up;
      }
      warp_sums[lane] = w;  // inclusive over warps
    }
  }
  __syncthreads();
  const std::uint32_t before_warp = warp ? warp_sums[warp - 1] : 0;
  *total = warp_sums[warps - 1];
  __syncthreads();  // warp_sums is reused by the next call
  return before_warp + inclusive - value;
}

// ---- The paper's prefix-sum kernels ----

// 5-kernel, kernel 1: the flags.
template <class Keys>
__global__ void map_flags(Keys keys, std::size_t n, std::uint8_t* flags) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    flags[i] = keys.starts(i) ? 1 : 0;
}

// 5-kernel, kernel 2: per chunk, the inclusive prefix of the flags and its total.
static __global__ void partial_prefix(const std::uint8_t* flags, std::size_t n, int intent, std::size_t chunks,
                               std::uint32_t* pps, std::uint32_t* chunk_total) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= chunks) return;
  const std::size_t begin = c * intent, end = min(n, begin + intent);
  std::uint32_t run = 0;
  for (std::size_t i = begin; i < end; ++i) pps[i] = run += flags[i];
  chunk_total[c] = run;
}

// 3- and 2-kernel, kernel 1: flags, partial prefix, and the offsets: each
// chunk's offset inside its block (a block scan), each block's total, and,
// in the block that finishes last, the blocks' offsets and the group count.
template <class Keys>
__global__ void __launch_bounds__(1024) fused_prefix(Keys keys, std::size_t n, int intent, std::size_t chunks, std::uint32_t* pps,
                             std::uint32_t* chunk_offset, std::uint32_t* block_total, std::uint32_t* block_offset,
                             unsigned int* blocks_done, std::uint32_t* group_count) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  std::uint32_t run = 0;
  if (c < chunks) {
    const std::size_t begin = c * intent, end = min(n, begin + intent);
    for (std::size_t i = begin; i < end; ++i) pps[i] = run += keys.starts(i) ? 1 : 0;
  }
  std::uint32_t total;
  const std::uint32_t before = block_exclusive_scan(run, &total);
  if (c < chunks) chunk_offset[c] = before;
  __shared__ bool last;
  if (threadIdx.x == 0) {
    block_total[blockIdx.x] = total;
    __threadfence();
    last = atomicAdd(blocks_done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The last block scans every block's total, blockDim at a time.
  std::uint32_t carry = 0;
  for (std::size_t base = 0; base < gridDim.x; base += blockDim.x) {
    const std::size_t b = base + threadIdx.x;
    const std::uint32_t t = b < gridDim.x ? *(volatile std::uint32_t*)(block_total + b) : 0;
    std::uint32_t sum;
    const std::uint32_t ex = block_exclusive_scan(t, &sum);
    if (b < gridDim.x) block_offset[b] = carry + ex;
    carry += sum;
  }
  if (threadIdx.x == 0) *group_count = carry;
}

// The group ids of the rows: from ps (5- and 3-kernel) or from pps and the
// offsets (2-kernel, which never writes ps). A chunk's `base` is what is
// added to its pps; starts(i) says whether row i starts a group.
struct PsIds {
  const std::uint32_t* ps;
  __device__ std::uint32_t base(std::size_t) const { return 0; }
  __device__ std::uint32_t at(std::size_t i, std::uint32_t) const { return ps[i]; }
  __device__ bool starts(std::size_t i, int) const { return i == 0 || ps[i] != ps[i - 1]; }
};
struct PpsIds {
  const std::uint32_t* pps;
  const std::uint32_t* chunk_offset;
  const std::uint32_t* block_offset;  // null: chunk_offset is already global (5-kernel)
  std::size_t chunks_per_block;
  __device__ std::uint32_t base(std::size_t chunk) const {
    return chunk_offset[chunk] + (block_offset ? block_offset[chunk / chunks_per_block] : 0) - 1;
  }
  __device__ std::uint32_t at(std::size_t i, std::uint32_t base) const { return pps[i] + base; }
  // pps restarts at every chunk: its first row's pps is its own flag.
  __device__ bool starts(std::size_t i, int intent) const {
    return i % intent == 0 ? pps[i] != 0 : pps[i] != pps[i - 1];
  }
};

// 5- and 3-kernel, kernel 4 / 2: ps = pps + the chunk's offset - 1.
static __global__ void add_offsets(PpsIds ids, std::size_t n, int intent, std::size_t chunks, std::uint32_t* ps) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c >= chunks) return;
  const std::uint32_t base = ids.base(c);
  const std::size_t begin = c * intent, end = min(n, begin + intent);
  for (std::size_t i = begin; i < end; ++i) ps[i] = ids.at(i, base);
}

// The groups' slots set to the identity, for the atomics (the group count
// is read on the device: no round trip to the host).
static __global__ void init_groups(DeviceAggregates A, const std::uint32_t* group_count) {
  const std::uint32_t groups = *group_count;
  for (std::size_t g = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; g < groups; g += std::size_t{gridDim.x} * blockDim.x)
    init_group(A, static_cast<std::uint32_t>(g));
}

// ---- The aggregation variants (the paper's algorithms 3-6) ----

// How many runs a private array holds before it writes out what it has.
constexpr int kPrivateArrayRuns = 8;

// Walks rows [begin, end) and aggregates them the variant's way. `first_id`
// is row begin's group id; `starts(i)` says whether row i starts a group
// (the id then goes up by one). The chunk's first run may continue a group
// from before `begin` and its last run one past `end`: both are added
// atomically; the variants differ in the runs between.
template <Variant V, class StartsAt>
__device__ __forceinline__ void aggregate_rows(const DeviceAggregates& A, const KeySlots& keys,
                                               const DeviceGroupKeys& key_out, std::size_t begin, std::size_t end,
                                               std::uint32_t first_id, StartsAt starts) {
  States<> st;
  std::uint32_t g = first_id;
  if constexpr (V == Variant::DirectAtomics || V == Variant::ChunkedAtomics) {
    for (std::size_t i = begin; i < end; ++i) {
      const bool s = starts(i);
      if (s && i > begin) ++g;
      if (s) write_keys(keys, key_out, g, i);
      reset(A, st);
      add(A, st, i);
      atomic_merge(A, g, st);
    }
  } else if constexpr (V == Variant::PrivateVariable) {
    if (begin >= end) return;
    reset(A, st);
    for (std::size_t i = begin; i < end; ++i) {
      const bool s = starts(i);
      if (s && i > begin) {
        atomic_merge(A, g, st);
        reset(A, st);
        ++g;
      }
      if (s) write_keys(keys, key_out, g, i);
      add(A, st, i);
    }
    atomic_merge(A, g, st);
  } else {  // PrivateArray
    if (begin >= end) return;
    std::uint32_t group[kPrivateArrayRuns];
    States<> runs[kPrivateArrayRuns];
    group[0] = g;
    reset(A, runs[0]);
    int used = 1;  // runs held: runs[0..used), the last one open
    bool first_is_chunk_first = true;
    // Writes out the held runs but the open last one: the chunk's first run
    // atomically (it may continue a group from before), the others are
    // whole runs inside the chunk and are stored directly.
    auto flush_closed = [&]() {
      for (int r = 0; r < used - 1; ++r) {
        if (r == 0 && first_is_chunk_first) atomic_merge(A, group[r], runs[r]);
        else store_group(A, group[r], runs[r]);
      }
    };
    for (std::size_t i = begin; i < end; ++i) {
      const bool s = starts(i);
      if (s && i > begin) {
        if (used == kPrivateArrayRuns) {
          flush_closed();
          runs[0] = runs[used - 1];
          group[0] = group[used - 1];
          first_is_chunk_first = false;
          used = 1;
        }
        group[used] = ++g;
        reset(A, runs[used]);
        ++used;
      }
      if (s) write_keys(keys, key_out, g, i);
      add(A, runs[used - 1], i);
    }
    flush_closed();
    atomic_merge(A, group[used - 1], runs[used - 1]);  // the last run may go on
  }
}

// The aggregation kernel of the 5-, 3- and 2-kernel architectures: one
// thread per row (direct atomics) or per chunk of `intent` rows.
template <Variant V, class Ids>
__global__ void __launch_bounds__(1024) aggregate_kernel(DeviceAggregates A, KeySlots keys, DeviceGroupKeys key_out, Ids ids, std::size_t n,
                                 int intent) {
  const std::size_t t = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  auto starts = [&](std::size_t i) { return ids.starts(i, intent); };
  if constexpr (V == Variant::DirectAtomics) {
    if (t >= n) return;
    aggregate_rows<V>(A, keys, key_out, t, t + 1, ids.at(t, ids.base(t / intent)), starts);
  } else {
    const std::size_t begin = t * intent;
    if (begin >= n) return;
    aggregate_rows<V>(A, keys, key_out, begin, min(n, begin + intent), ids.at(begin, ids.base(t)), starts);
  }
}

}  // namespace gpuolap::groupby::gpu
