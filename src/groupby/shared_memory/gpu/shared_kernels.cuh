// The kernels of the shared-memory operators (shared_aggregation.hpp).
//
// Every kernel but CUB's uses the static partitioning the placement
// optimizer assumes: block b owns rows [b R, (b+1) R) and its threads take
// them blockDim at a time (kUnroll such steps loaded before any update, so
// that enough loads are in flight to stream the column), warp w taking 32
// consecutive rows. A block's state lives in dynamic shared memory:
//   8-byte arrays first (sum, then the ordered keys of min and max), then
//   the 4-byte counts, each `slots` long.
// A row's slot is   (lane mod copies) x stride + code
// (one copy: copies 1; naive replicas: copies k, stride C rounded up to 32
// plus 1, so that copies of a code sit in different banks; the paper's
// placement: copies 1, the code being the placement's slot). At the end the
// block merges each slot into the global result of its value: slot_value[s]
// when given (the placement), else s mod stride.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "gpu/primitives/target_store.cuh"
#include "groupby/aggregate_state.hpp"  // order_bits: MIN/MAX as unsigned words
#include "groupby/shared_memory/placement.hpp"

namespace gpuolap::groupby::shared_gpu {

constexpr int kUnroll = 4;
constexpr unsigned kFullMask = 0xFFFFFFFFu;

struct GroupedArgs {
  const std::uint32_t* codes;
  const void* values;
  std::uint64_t rows;
  std::uint64_t rows_per_block;
  std::uint32_t groups;             // C: slot v < C is copy 0 of value v
  std::uint32_t slots;
  std::uint32_t copies;
  std::uint32_t stride;
  const std::uint32_t* slot_value;  // null: value = slot mod stride
  unsigned long long* count;        // per value
  void* sum;                        // double or unsigned long long (int32 values: two's complement)
  unsigned long long* min_key;
  unsigned long long* max_key;
};

// The running sum of a value type: doubles add as doubles (in shared
// memory a compare-and-swap loop on sm_90), 4-byte integers as 64-bit
// integers (exact).
template <typename V>
struct SumOf {
  using type = unsigned long long;
  __device__ static type of(V x) { return static_cast<unsigned long long>(static_cast<long long>(x)); }
};
template <>
struct SumOf<void> {
  using type = unsigned long long;
};
template <>
struct SumOf<double> {
  using type = double;
  __device__ static double of(double x) { return x; }
};

// MIN/MAX keys: the ordered words ordered aggregation uses (NaN above +inf).
__device__ inline unsigned long long order_key(double x) { return order_bits(x); }
__device__ inline unsigned long long order_key(std::int32_t x) { return order_bits(std::int64_t{x}); }

// The block's state in shared memory.
template <typename V, bool MinMax>
struct SharedState {
  using Sum = typename SumOf<V>::type;
  Sum* sum;
  unsigned long long* lo;
  unsigned long long* hi;
  unsigned* count;

  __device__ SharedState(unsigned char* smem, std::uint32_t slots) {
    unsigned char* p = smem;
    sum = reinterpret_cast<Sum*>(p);
    if constexpr (!std::is_void_v<V>) p += std::size_t{8} * slots;
    lo = reinterpret_cast<unsigned long long*>(p);
    hi = lo + slots;
    if constexpr (MinMax) p += std::size_t{16} * slots;
    count = reinterpret_cast<unsigned*>(p);
  }
  __device__ void clear(std::uint32_t slots) {
    for (std::uint32_t s = threadIdx.x; s < slots; s += blockDim.x) {
      count[s] = 0;
      if constexpr (!std::is_void_v<V>) sum[s] = 0;
      if constexpr (MinMax) {
        lo[s] = ~0ull;
        hi[s] = 0;
      }
    }
  }
  // One row, or (warp aggregation) `n` rows of one slot whose sum is `x`.
  template <typename X>
  __device__ void add(std::uint32_t slot, unsigned n, X x, unsigned long long lo_key, unsigned long long hi_key) {
    atomicAdd(&count[slot], n);
    if constexpr (!std::is_void_v<V>) atomicAdd(&sum[slot], x);
    if constexpr (MinMax) {
      atomicMin(&lo[slot], lo_key);
      atomicMax(&hi[slot], hi_key);
    }
  }
  // The copies folded into copy 0 (slot v of value v) in shared memory,
  // then each group into its global result, one atomic per field: one
  // global update per group and block, not per copy.
  __device__ void merge(const GroupedArgs& a) {
    for (std::uint32_t s = a.groups + threadIdx.x; s < a.slots; s += blockDim.x) {
      const unsigned n = count[s];
      if (n == 0) continue;
      const std::uint32_t v = a.slot_value ? a.slot_value[s] : s % a.stride;
      atomicAdd(&count[v], n);
      if constexpr (!std::is_void_v<V>) atomicAdd(&sum[v], sum[s]);
      if constexpr (MinMax) {
        atomicMin(&lo[v], lo[s]);
        atomicMax(&hi[v], hi[s]);
      }
    }
    __syncthreads();
    for (std::uint32_t v = threadIdx.x; v < a.groups; v += blockDim.x) {
      const unsigned n = count[v];
      if (n == 0) continue;
      atomicAdd(&a.count[v], static_cast<unsigned long long>(n));
      if constexpr (!std::is_void_v<V>) atomicAdd(static_cast<Sum*>(a.sum) + v, sum[v]);
      if constexpr (MinMax) {
        atomicMin(&a.min_key[v], lo[v]);
        atomicMax(&a.max_key[v], hi[v]);
      }
    }
  }
};

// The rows block b owns: [b R, min((b+1) R, rows)).
struct BlockRows {
  std::uint64_t begin, end;
};
__device__ inline BlockRows block_rows(std::uint64_t rows, std::uint64_t per_block) {
  const std::uint64_t begin = blockIdx.x * per_block;
  return {begin, begin + per_block < rows ? begin + per_block : rows};
}

// Loads kUnroll rows per thread of one step of the block's rows.
template <typename V>
struct Step {
  std::uint32_t code[kUnroll];
  V value[kUnroll];
  bool ok[kUnroll];
};

template <typename V>
__device__ inline void load_step(const GroupedArgs& a, std::uint64_t base, std::uint64_t end, Step<V>& st) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint64_t row = base + static_cast<std::uint64_t>(u) * blockDim.x + threadIdx.x;
    st.ok[u] = row < end;
    st.code[u] = st.ok[u] ? __ldcs(a.codes + row) : 0u;
    if constexpr (!std::is_void_v<V>) st.value[u] = st.ok[u] ? __ldcs(static_cast<const V*>(a.values) + row) : V{};
  }
}
template <>
struct Step<void> {
  std::uint32_t code[kUnroll];
  bool ok[kUnroll];
};
template <>
__device__ inline void load_step<void>(const GroupedArgs& a, std::uint64_t base, std::uint64_t end, Step<void>& st) {
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const std::uint64_t row = base + static_cast<std::uint64_t>(u) * blockDim.x + threadIdx.x;
    st.ok[u] = row < end;
    st.code[u] = st.ok[u] ? __ldcs(a.codes + row) : 0u;
  }
}

// One copy, naive replicas or the placement: each row updates its slot.
template <typename V, bool MinMax>
__global__ void grouped_shared_kernel(GroupedArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  SharedState<V, MinMax> state(smem, a.slots);
  state.clear(a.slots);
  __syncthreads();
  const auto [begin, end] = block_rows(a.rows, a.rows_per_block);
  const std::uint32_t offset = ((threadIdx.x & 31u) % a.copies) * a.stride;
  for (std::uint64_t base = begin; base < end; base += std::uint64_t{kUnroll} * blockDim.x) {
    Step<V> st;
    load_step<V>(a, base, end, st);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (!st.ok[u]) continue;
      if constexpr (std::is_void_v<V>) {
        atomicAdd(&state.count[st.code[u] + offset], 1u);
      } else {
        unsigned long long k = 0;
        if constexpr (MinMax) k = order_key(st.value[u]);
        state.add(st.code[u] + offset, 1u, SumOf<V>::of(st.value[u]), k, k);
      }
    }
  }
  __syncthreads();
  state.merge(a);
}

// Warp aggregation with one copy: the lanes of a warp holding one code find
// each other (__match_any_sync), the lowest of them sums the others' values
// through shuffles and makes one update for all.
template <typename V, bool MinMax>
__global__ void grouped_warp_kernel(GroupedArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  SharedState<V, MinMax> state(smem, a.slots);
  state.clear(a.slots);
  __syncthreads();
  const unsigned lane = threadIdx.x & 31u;
  const auto [begin, end] = block_rows(a.rows, a.rows_per_block);
  // Every lane of a warp runs every step (the shuffles need them all): the
  // loop bound is the block's, rows past `end` are marked not ok.
  for (std::uint64_t base = begin; base < end; base += std::uint64_t{kUnroll} * blockDim.x) {
    Step<V> st;
    load_step<V>(a, base, end, st);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint32_t key = st.ok[u] ? st.code[u] : 0xFFFFFFFFu;
      const unsigned peers = __match_any_sync(kFullMask, key);
      const unsigned leader = __ffs(peers) - 1;
      if constexpr (std::is_void_v<V>) {
        if (lane == leader && st.ok[u]) atomicAdd(&state.count[key], static_cast<unsigned>(__popc(peers)));
      } else {
        using Sum = typename SumOf<V>::type;
        Sum acc = SumOf<V>::of(st.value[u]);
        unsigned long long lo = 0, hi = 0;
        if constexpr (MinMax) lo = hi = order_key(st.value[u]);
        unsigned rest = peers & ~(1u << lane);
        const int rounds = __reduce_max_sync(kFullMask, static_cast<unsigned>(__popc(rest)));
        for (int r = 0; r < rounds; ++r) {
          const int src = rest ? __ffs(rest) - 1 : static_cast<int>(lane);
          const V y = __shfl_sync(kFullMask, st.value[u], src);
          if (rest) {
            acc += SumOf<V>::of(y);
            if constexpr (MinMax) {
              const unsigned long long k = order_key(y);
              lo = k < lo ? k : lo;
              hi = k > hi ? k : hi;
            }
            rest &= rest - 1;
          }
        }
        if (lane == leader && st.ok[u]) state.add(key, static_cast<unsigned>(__popc(peers)), acc, lo, hi);
      }
    }
  }
  __syncthreads();
  state.merge(a);
}

// The MOLAP engine's shared store (gpu/primitives/target_store.cuh) over
// the groups: t.replicas copies in shared memory, warp w writing copy
// w mod replicas, each warp's equal codes pre-aggregated by
// __match_any_sync; flushed into the global result (t's arrays) per block.
template <int F, typename V>
__global__ void grouped_target_store_kernel(GroupedArgs a, ::gpuolap::gpu::TargetTable t) {
  extern __shared__ __align__(16) unsigned char smem[];
  ::gpuolap::gpu::SharedStore store{t, nullptr, nullptr, nullptr, nullptr, 0};
  store.template bind<F>(smem);
  const auto [begin, end] = block_rows(a.rows, a.rows_per_block);
  for (std::uint64_t base = begin; base < end; base += std::uint64_t{kUnroll} * blockDim.x) {
    Step<V> st;
    load_step<V>(a, base, end, st);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      ::gpuolap::gpu::Part part{0.0, 1u, ::gpuolap::gpu::kMinIdentity, ::gpuolap::gpu::kMaxIdentity};
      if constexpr (!std::is_void_v<V>) part = ::gpuolap::gpu::Part::of(st.value[u]);
      ::gpuolap::gpu::contribute<Preagg::match, F>(st.ok[u], st.code[u], part, 0, store, 0);
    }
  }
  store.template flush<F>();
}

// No shared memory: each row's atomics on its group's global result.
template <typename V, bool MinMax>
__global__ void grouped_global_kernel(GroupedArgs a) {
  const auto [begin, end] = block_rows(a.rows, a.rows_per_block);
  for (std::uint64_t base = begin; base < end; base += std::uint64_t{kUnroll} * blockDim.x) {
    Step<V> st;
    load_step<V>(a, base, end, st);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (!st.ok[u]) continue;
      const std::uint32_t g = st.code[u];
      atomicAdd(&a.count[g], 1ull);
      if constexpr (!std::is_void_v<V>) {
        using Sum = typename SumOf<V>::type;
        atomicAdd(static_cast<Sum*>(a.sum) + g, SumOf<V>::of(st.value[u]));
        if constexpr (MinMax) {
          const unsigned long long k = order_key(st.value[u]);
          atomicMin(&a.min_key[g], k);
          atomicMax(&a.max_key[g], k);
        }
      }
    }
  }
}

// ---- Q1: SUM(d1.b) over f JOIN d1 ----

struct JoinArgs {
  const std::uint32_t* keys;
  std::uint64_t rows;
  std::uint64_t rows_per_block;
  const void* dim;                  // d1.b by id, in global memory
  std::uint32_t dim_rows;
  std::uint32_t slots;              // shared copies; 0: read from global memory
  std::uint32_t copies;
  std::uint32_t stride;
  const std::uint32_t* slot_value;  // the placement's; null: slot mod stride
  bool keys_are_slots;              // the placement's column: every key names a slot
  unsigned long long* matched;
  void* sum;
};

template <typename V>
__global__ void join_kernel(JoinArgs a) {
  extern __shared__ __align__(16) unsigned char smem[];
  using Sum = typename SumOf<V>::type;
  V* column = reinterpret_cast<V*>(smem);
  const V* dim = static_cast<const V*>(a.dim);
  for (std::uint32_t s = threadIdx.x; s < a.slots; s += blockDim.x) {
    const std::uint32_t v = a.slot_value ? a.slot_value[s] : s % a.stride;
    column[s] = v < a.dim_rows ? dim[v] : V{};
  }
  __syncthreads();
  const auto [begin, end] = block_rows(a.rows, a.rows_per_block);
  const std::uint32_t offset = ((threadIdx.x & 31u) % (a.copies ? a.copies : 1u)) * a.stride;
  Sum acc = 0;
  unsigned long long matched = 0;
  for (std::uint64_t base = begin; base < end; base += std::uint64_t{kUnroll} * blockDim.x) {
    std::uint32_t k[kUnroll];
    bool ok[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint64_t row = base + static_cast<std::uint64_t>(u) * blockDim.x + threadIdx.x;
      ok[u] = row < end;
      k[u] = ok[u] ? __ldcs(a.keys + row) : 0u;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (!ok[u]) continue;
      if (a.keys_are_slots) {
        acc += SumOf<V>::of(column[k[u]]);
        ++matched;
      } else if (k[u] < a.dim_rows) {
        acc += SumOf<V>::of(a.slots ? column[k[u] + offset] : __ldg(dim + k[u]));
        ++matched;
      }
    }
  }
  // The block's sum: warps by shuffles, then the first warp.
  __shared__ Sum warp_sum[32];
  __shared__ unsigned long long warp_matched[32];
  for (int d = 16; d > 0; d >>= 1) {
    acc += __shfl_down_sync(kFullMask, acc, d);
    matched += __shfl_down_sync(kFullMask, matched, d);
  }
  if ((threadIdx.x & 31u) == 0) {
    warp_sum[threadIdx.x / 32] = acc;
    warp_matched[threadIdx.x / 32] = matched;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    Sum total = 0;
    unsigned long long m = 0;
    for (unsigned w = 0; w < blockDim.x / 32; ++w) total += warp_sum[w], m += warp_matched[w];
    atomicAdd(static_cast<Sum*>(a.sum), total);
    atomicAdd(a.matched, m);
  }
}

}  // namespace gpuolap::groupby::shared_gpu
