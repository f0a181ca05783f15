#pragma once
// Runs of equal keys in rows sorted by a 64-bit key, reduced with the keys
// read once: each run's state for every aggregate slot and its key, stored
// compactly in key order. The library path (slot_reduce_by_key.cuh) reads
// the keys once to find the runs, then once more per word of each state (a
// CUB reduce-by-key each); CUB's reduce-by-key is bound by its work per
// item, not by bandwidth (about 125 us for 25 M items on an H200, whatever
// the value's width), so the passes add up: 256 us for the sales-flat
// cube's finest cells with SUM and COUNT(*). Here the keys are read once
// and each aggregate's values once (floor: 400 MB at 4.4 TB/s, about
// 90 us). Measured there: 169 us (the marking pass with COUNT(*) 95, the
// SUM 69, the heads 5; bench/results/h200-cube-one-pass-split-2026-11-29.md),
// so the cube takes this path by default (`--sorted-runs one-pass`).
//
// A block takes a tile of kRunsTileRows consecutive rows, a warp 512 of
// them, and each lane 16 consecutive rows of its warp's. What a lane reads
// goes through shared memory: the warp loads 32 consecutive rows at a time
// (coalesced) and each lane then reads its 16 from there.
//   1. mark_sorted_runs (tiles handed out in order by an atomic counter):
//      the lane flags the rows that start a run and counts them; a warp
//      scan, a block scan over the warps and the decoupled look-back over
//      the tiles before (tile_look_back.cuh) give the lane the id of its
//      first run; the runs' keys are stored, and per lane its flags and
//      first id (8 bytes per 16 rows);
//   2. reduce_runs_of_slot, a launch per aggregate, compiled for its kind,
//      value type, NULLs and count (FixedSlot): the lane walks its rows in
//      registers: a run that starts and ends among them is stored at once;
//      one segmented scan over the warp's lanes joins the runs that cross
//      lanes: the lane holding a run's next start stores it, the run open
//      at the warp's end is stored by its last lane (as its first part
//      when it goes on);
//   3. a warp's head (its rows before its first start, which belong to a
//      run begun in an earlier warp) is kept per warp and merged
//      atomically by merge_warp_heads after the reductions: nothing waits
//      inside a pass.
// History, measured on an H200 (ncu, 2026-11-29; the 25 M sorted rows of
// the sales-flat cube, SUM of a double and COUNT(*), 1.42 M runs), against
// CUB's 256 us: the same steps as one kernel, the aggregates in a loop
// that read each one's kind per row, took 542 us: 186 M warp instructions,
// 238 a row, issued at 1.4 a cycle (instruction-bound, not memory-bound:
// DRAM at 17 %). Switching on the kind per aggregate inside that kernel
// made one function of every kind's code, 80 registers and spills; a
// kernel per aggregate gives each kind its own small one (24-46 registers).
// Every run is stored by one plain store, plus one atomic merge per warp
// boundary it crosses. Double sums of runs that cross a warp boundary are
// added in no fixed order there (as every atomic path of the cube is).
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_context.cuh"
#include "groupby/gpu/ordered_kernels.cuh"
#include "groupby/gpu/tile_look_back.cuh"

namespace gpuolap::groupby::gpu {

constexpr int kRunsBlock = 256;
constexpr int kRunsWarps = kRunsBlock / 32;
constexpr int kRunsLaneRows = 16;
constexpr int kRunsWarpRows = 32 * kRunsLaneRows;
constexpr std::size_t kRunsTileRows = std::size_t{kRunsWarpRows} * kRunsWarps;
constexpr std::uint32_t kNoHead = 0xffffffffu;
// A warp's staged words: its 512 rows, a word of padding after every 16,
// so that lane l reading row 16l + i and lane l + 1 reading row 16l + 16 + i
// fall in different banks.
constexpr int kStagedWords = kRunsWarpRows + kRunsWarpRows / kRunsLaneRows;
__device__ __forceinline__ int staged_at(int r) { return r + r / kRunsLaneRows; }

// Per warp of the pass: the run its head belongs to (kNoHead: none), and
// the head's state for each aggregate (`count` a warp).
struct WarpHeads {
  std::uint32_t* run;
  AggregateState* states;
};

// A slot whose kind, value type, NULLs and kept count are fixed at compile
// time. The state functions of aggregate_state.hpp, inlined with a slot
// made by of(), fold their switches on it, so that a row costs the few
// instructions of its own aggregate: the single kernel this replaced read
// the kind per row and executed 238 instructions a row (ncu on an H200,
// 2026-11-29).
// AVG runs as SUM (they differ only in the count, which Counted keeps).
template <AggregateKind K, ValueType T, bool Nullable, bool Counted>
struct FixedSlot {
  static constexpr bool kIntegerSum = K == AggregateKind::Sum && T != ValueType::Double;
  static constexpr bool kReadsValues = K != AggregateKind::CountStar && K != AggregateKind::Count;
  static constexpr bool kNullable = Nullable;
  static constexpr bool kCounted = Counted;
  __device__ __forceinline__ static AggregateSlot of(const AggregateSlot& s) {
    AggregateSlot f = s;
    f.kind = K;
    f.type = T;
    if constexpr (!Nullable) f.nulls = nullptr;
    return f;
  }
};

template <AggregateKind K, ValueType T, class F>
inline void with_nulls_and_count(bool nullable, bool counted, F& f) {
  if (nullable) {
    if (counted) f(FixedSlot<K, T, true, true>{});
    else f(FixedSlot<K, T, true, false>{});
  } else {
    if (counted) f(FixedSlot<K, T, false, true>{});
    else f(FixedSlot<K, T, false, false>{});
  }
}

template <AggregateKind K, class F>
inline void with_type(const AggregateSlot& s, bool counted, F& f) {
  const bool nullable = s.nulls != nullptr;
  switch (s.type) {
    case ValueType::Int32: with_nulls_and_count<K, ValueType::Int32>(nullable, counted, f); break;
    case ValueType::Int64: with_nulls_and_count<K, ValueType::Int64>(nullable, counted, f); break;
    case ValueType::Double: with_nulls_and_count<K, ValueType::Double>(nullable, counted, f); break;
  }
}

// Calls f(FixedSlot<...>{}) for slot s, whose state keeps a count when
// `counted`: the host picks the reduction kernel of each aggregate once.
template <class F>
inline void with_fixed_slot(const AggregateSlot& s, bool counted, F&& f) {
  switch (s.kind) {
    case AggregateKind::CountStar: f(FixedSlot<AggregateKind::CountStar, ValueType::Int64, false, false>{}); break;
    case AggregateKind::Count:  // reads no values: their type does not matter
      with_nulls_and_count<AggregateKind::Count, ValueType::Int64>(s.nulls != nullptr, counted, f);
      break;
    case AggregateKind::Sum:
    case AggregateKind::Avg: with_type<AggregateKind::Sum>(s, counted, f); break;
    case AggregateKind::Min: with_type<AggregateKind::Min>(s, counted, f); break;
    case AggregateKind::Max: with_type<AggregateKind::Max>(s, counted, f); break;
  }
}

// One aggregate's state moved up the lanes: only the words it uses.
template <class Fixed>
__device__ __forceinline__ AggregateState shfl_up_state(const AggregateState& st, int d) {
  AggregateState o = st;
  o.bits = __shfl_up_sync(0xffffffffu, st.bits, d);
  if constexpr (Fixed::kIntegerSum) o.high = __shfl_up_sync(0xffffffffu, st.high, d);
  if constexpr (Fixed::kCounted) o.count = __shfl_up_sync(0xffffffffu, st.count, d);
  return o;
}

// Where one aggregate's run states go (DeviceAggregates' words of slot
// `a`), and where its part of a warp's head goes.
struct SlotOut {
  std::uint64_t* bits;
  std::uint64_t* high;
  std::uint64_t* counts;
  int a;
  int count;  // the aggregates
};

template <class Fixed>
__device__ __forceinline__ void store_state(const SlotOut& o, std::uint32_t g, const AggregateState& st) {
  o.bits[g] = st.bits;
  if constexpr (Fixed::kIntegerSum) o.high[g] = st.high;
  if constexpr (Fixed::kCounted) o.counts[g] = st.count;
}

// Per lane of the pass (a lane: kRunsLaneRows consecutive rows), written
// by mark_sorted_runs for the reductions: which of its rows start a run
// (bit i: its row i), and the id of the run its first start begins.
struct LaneMarks {
  std::uint32_t* flags;
  std::uint32_t* first_id;
};

// Where a warp's rows are, for the lanes of its pass.
struct WarpRows {
  int lane;
  int first;        // the lane's first row, in the warp's
  int seg_rows;     // the warp's rows
  std::size_t seg;  // the warp's first row
  std::size_t w;    // the warp, in the pass
};

__device__ __forceinline__ WarpRows warp_rows(std::size_t w, std::size_t n) {
  const std::size_t seg = w * kRunsWarpRows;
  return {static_cast<int>(threadIdx.x & 31), static_cast<int>(threadIdx.x & 31) * kRunsLaneRows,
          seg < n ? static_cast<int>(min(std::size_t{kRunsWarpRows}, n - seg)) : 0, seg, w};
}

// One aggregate's runs over a warp's rows, in the code of its kind
// (Fixed), given each lane's `flags` and `first_id` (mark_sorted_runs) and
// its rows' values staged in `words` and NULL flags in `nulls` where the
// kind reads them: each lane's runs reduced in registers, the runs that
// cross lanes joined by a segmented scan over the warp, every run stored
// once, and the warp's head kept for merge_warp_heads. Every lane of the
// warp calls it.
template <class Fixed>
__device__ __forceinline__ void reduce_lane_runs(const WarpRows& R, std::uint32_t flags, std::uint32_t first_id,
                                                 const AggregateSlot& slot, const std::uint64_t* words,
                                                 const std::uint8_t* nulls, const SlotOut& o,
                                                 AggregateState* head_states) {
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = R.lane, first = R.first, seg_rows = R.seg_rows;
  const bool started = flags != 0;
  // The lane's rows before its first start (all of them without one).
  const int lead_rows = started ? __ffs(flags) - 1 : max(0, min(kRunsLaneRows, seg_rows - first));
  const AggregateState identity = identity_state(slot);
  AggregateState run = identity, lead = identity;
#pragma unroll
  for (int i = 0; i < kRunsLaneRows; ++i) {
    if (first + i < seg_rows) {
      if ((flags >> i) & 1u) {
        if (i == lead_rows) lead = run;  // the lane's first start
        else store_state<Fixed>(o, first_id + __popc(flags & ((1u << i) - 1)) - 1, run);
        run = identity;
      }
      const int at = staged_at(first + i);
      bool null = false;
      if constexpr (Fixed::kNullable) null = nulls[at] != 0;
      add_word(slot, run, Fixed::kReadsValues ? words[at] : 0, null);
    }
  }
  if (!started) lead = run;
  // Across the lanes: `pass` is, per lane, the run open after its rows,
  // merged back to the nearest lane with a start (cut: there is one).
  AggregateState pass = run;
  bool cut = started;
  for (int d = 1; d < 32; d <<= 1) {
    const AggregateState up = shfl_up_state<Fixed>(pass, d);
    const bool up_cut = __shfl_up_sync(kAll, cut, d);
    if (lane >= d && !cut) {
      AggregateState joined = up;
      merge_state(slot, joined, pass);
      pass = joined;
    }
    if (lane >= d) cut = cut || up_cut;
  }
  AggregateState into = shfl_up_state<Fixed>(pass, 1);  // the run open before the lane
  const bool into_cut = __shfl_up_sync(kAll, cut, 1) && lane > 0;
  if (lane == 0) into = identity;
  if (started && (lane > 0 || lead_rows > 0)) {
    // The lane's first start ends the run open before it.
    merge_state(slot, into, lead);
    if (into_cut) store_state<Fixed>(o, first_id - 1, into);
    else head_states[R.w * o.count + o.a] = into;  // begun before the warp: the head
  }
  const int last = seg_rows > 0 ? (seg_rows - 1) / kRunsLaneRows : -1;  // the warp's last lane with rows
  if (lane == last) {
    const std::uint32_t last_id = first_id + __popc(flags) - 1;  // the run open after the lane's rows
    if (cut) store_state<Fixed>(o, last_id, pass);  // begun in this warp: whole, or its first part
    else head_states[R.w * o.count + o.a] = pass;   // no start in the warp: every row is the head
  }
}

using CountStarSlot = FixedSlot<AggregateKind::CountStar, ValueType::Int64, false, false>;

// Step 2 (see the top) for one aggregate, in the code of its kind (Fixed):
// the rows' values staged (row order[i] at sorted position i, or i with no
// order), then reduce_lane_runs. Block b takes the rows of tile b of
// mark_sorted_runs (tiles are in row order there too).
template <class Fixed>
__global__ void __launch_bounds__(kRunsBlock) reduce_runs_of_slot(std::size_t n, const std::uint32_t* order,
                                                                  AggregateSlot input, SlotOut o, LaneMarks marks,
                                                                  AggregateState* head_states) {
  __shared__ std::uint64_t s_words[Fixed::kReadsValues ? kRunsWarps : 1][kStagedWords];
  __shared__ std::uint8_t s_nulls[Fixed::kNullable ? kRunsWarps : 1][kStagedWords];
  const AggregateSlot slot = Fixed::of(input);
  const int warp = threadIdx.x >> 5;
  const WarpRows R = warp_rows(std::size_t{blockIdx.x} * kRunsWarps + warp, n);
  std::uint64_t* words = s_words[Fixed::kReadsValues ? warp : 0];
  std::uint8_t* nulls = s_nulls[Fixed::kNullable ? warp : 0];
  const std::uint32_t flags = marks.flags[R.w * 32 + R.lane];
  const std::uint32_t first_id = marks.first_id[R.w * 32 + R.lane];
  if constexpr (Fixed::kReadsValues || Fixed::kNullable) {
#pragma unroll
    for (int k = 0; k < kRunsLaneRows; ++k) {
      const int r = R.lane + 32 * k;
      if (r < R.seg_rows) {
        const std::size_t row = order ? order[R.seg + r] : R.seg + r;
        bool null = false;
        if constexpr (Fixed::kNullable) {
          null = slot.nulls[row] != 0;
          nulls[staged_at(r)] = null;
        }
        if constexpr (Fixed::kReadsValues) words[staged_at(r)] = null ? 0 : value_word(slot, row);
      }
    }
    __syncwarp();
  }
  reduce_lane_runs<Fixed>(R, flags, first_id, slot, words, nulls, o, head_states);
}

// Step 1 (see the top), one launch for every aggregate: the keys staged;
// which of each lane's rows start a run (row 0 always does); the lane's
// first run id, by a warp scan, a block scan over the warps and the
// look-back over the tiles before; the runs' keys stored; each warp's head
// run (kNoHead: its first row starts one); *ts.group_count by the last tile.
// A COUNT(*) (`count_star`, unless its bits are null) needs only the
// flags, so its runs are reduced here too, saving it a launch (34 us of
// the 25 M sorted rows of sales-flat on an H200, for 12 MB of marks).
__global__ void __launch_bounds__(kRunsBlock) mark_sorted_runs(const std::uint64_t* keys, std::size_t n,
                                                               std::uint64_t* out_keys, TileState ts,
                                                               std::uint32_t* head_runs, LaneMarks marks,
                                                               SlotOut count_star, AggregateState* head_states) {
  __shared__ unsigned s_tile;
  __shared__ std::uint32_t s_warp_first[kRunsWarps];  // each warp's count of starts, then its first run id
  __shared__ std::uint64_t s_words[kRunsWarps][kStagedWords];
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) s_tile = atomicAdd(ts.next_tile, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const std::size_t w = std::size_t{tile} * kRunsWarps + warp;
  const std::size_t seg = w * kRunsWarpRows;  // the warp's first row
  const int seg_rows = seg < n ? static_cast<int>(min(std::size_t{kRunsWarpRows}, n - seg)) : 0;
  const int first = lane * kRunsLaneRows;  // the lane's first row, in the warp's
  std::uint64_t* words = s_words[warp];

#pragma unroll
  for (int k = 0; k < kRunsLaneRows; ++k) {
    const int r = lane + 32 * k;
    words[staged_at(r)] = r < seg_rows ? keys[seg + r] : 0;
  }
  __syncwarp();
  std::uint32_t flags = 0;
  {
    std::uint64_t prev = lane > 0 ? words[staged_at(first - 1)] : seg > 0 && seg < n ? keys[seg - 1] : 0;
#pragma unroll
    for (int i = 0; i < kRunsLaneRows; ++i) {
      const std::uint64_t key = words[staged_at(first + i)];
      if (first + i < seg_rows && (seg + first + i == 0 || key != prev)) flags |= 1u << i;
      prev = key;
    }
  }
  const std::uint32_t lane_starts = __popc(flags);
  std::uint32_t lane_inclusive = lane_starts;
  for (int d = 1; d < 32; d <<= 1) {
    const std::uint32_t up = __shfl_up_sync(kAll, lane_inclusive, d);
    if (lane >= d) lane_inclusive += up;
  }
  if (lane == 31) s_warp_first[warp] = lane_inclusive;
  __syncthreads();
  if (warp == 0) {
    const std::uint32_t own = lane < kRunsWarps ? s_warp_first[lane] : 0;
    std::uint32_t inclusive = own;
    for (int d = 1; d < kRunsWarps; d <<= 1) {
      const std::uint32_t up = __shfl_up_sync(kAll, inclusive, d);
      if (lane >= d) inclusive += up;
    }
    const std::uint32_t tile_starts = __shfl_sync(kAll, inclusive, kRunsWarps - 1);
    int head_tile;  // not needed: heads are merged after the pass
    const std::uint32_t before = warp_look_back(ts, tile, tile_starts, &head_tile);
    if (lane < kRunsWarps) s_warp_first[lane] = before + inclusive - own;
    const std::size_t tiles = (n + kRunsTileRows - 1) / kRunsTileRows;
    if (lane == 0 && tile == tiles - 1) *ts.group_count = before + tile_starts;
  }
  __syncthreads();
  const std::uint32_t warp_first_id = s_warp_first[warp];
  const std::uint32_t lane_first_id = warp_first_id + lane_inclusive - lane_starts;
  {
    std::uint32_t id = lane_first_id;
    for (std::uint32_t f = flags; f; f &= f - 1) out_keys[id++] = words[staged_at(first + __ffs(f) - 1)];
  }
  marks.flags[w * 32 + lane] = flags;
  marks.first_id[w * 32 + lane] = lane_first_id;
  if (lane == 0) head_runs[w] = seg_rows > 0 && !(flags & 1u) ? warp_first_id - 1 : kNoHead;
  if (count_star.bits)
    reduce_lane_runs<CountStarSlot>(warp_rows(w, n), flags, lane_first_id, CountStarSlot::of(AggregateSlot{}),
                                    nullptr, nullptr, count_star, head_states);
}

// Each warp's head merged into its run (stored whole or as its first part
// by the reductions, which have ended).
__global__ inline void merge_warp_heads(WarpHeads heads, std::size_t warps, DeviceAggregates out) {
  const std::size_t w = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (w >= warps) return;
  const std::uint32_t run = heads.run[w];
  if (run == kNoHead) return;
  for (int a = 0; a < out.count; ++a) atomic_merge_slot(out, a, run, heads.states[w * out.count + a]);
}

// The runs of sorted `keys` (n), counted into *count (device memory).
__global__ inline void count_run_starts(const std::uint64_t* keys, std::size_t n, std::uint32_t* count) {
  std::uint32_t starts = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    starts += i == 0 || keys[i] != keys[i - 1] ? 1 : 0;
  for (int d = 16; d > 0; d >>= 1) starts += __shfl_xor_sync(0xffffffffu, starts, d);
  if ((threadIdx.x & 31) == 0 && starts) atomicAdd(count, starts);
}

// The number of runs of sorted `keys` (n), read on the host (it waits).
// `count`: a device word it uses.
inline std::uint32_t count_runs(gpuolap::gpu::DeviceContext& ctx, const std::uint64_t* keys, std::size_t n,
                                std::uint32_t* count) {
  const cudaStream_t s = ctx.stream();
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, s));
  if (n) {
    const std::size_t blocks = std::min<std::size_t>((n + 1023) / 1024, std::size_t(ctx.multiprocessors()) * 8);
    count_run_starts<<<static_cast<unsigned>(blocks), 256, 0, s>>>(keys, n, count);
    GPUOLAP_CHECK_LAUNCH("count_run_starts");
  }
  std::uint32_t r = 0;
  GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&r, count, sizeof r, cudaMemcpyDeviceToHost, s));
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
  return r;
}

// The runs of `keys` (n, sorted; the rows' values through `rows`, at
// order[i] or, with no order, i) reduced into `out`'s states and their
// keys into `out_keys` (room for every run), in key order; *count (device
// memory) ends holding their number. Queued on the context's stream: the
// marking pass, then a reduction per aggregate, then the heads' merge. Its
// scratch holds the tiles' look-back words, the lanes' marks and the
// warps' heads.
inline void reduce_runs_one_pass(gpuolap::gpu::DeviceContext& ctx, const std::uint64_t* keys, std::size_t n,
                                 const std::uint32_t* order, const DeviceAggregates& rows,
                                 const DeviceAggregates& out, std::uint64_t* out_keys, std::uint32_t* count) {
  const cudaStream_t s = ctx.stream();
  if (n == 0) {
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, s));
    return;
  }
  const std::size_t tiles = (n + kRunsTileRows - 1) / kRunsTileRows;
  const std::size_t warps = tiles * kRunsWarps;
  auto aligned = [](std::size_t bytes) { return (bytes + 255) & ~std::size_t{255}; };
  // Scratch: the tiles' status words and the tile counter (zeroed
  // together), each tile's last start, the lanes' marks, the heads' runs
  // and states.
  const std::size_t status_bytes = aligned((tiles + 1) * sizeof(unsigned long long));
  const std::size_t last_start_bytes = aligned(tiles * sizeof(int));
  const std::size_t marks_bytes = aligned(warps * 32 * sizeof(std::uint32_t));
  const std::size_t run_bytes = aligned(warps * sizeof(std::uint32_t));
  const std::size_t state_bytes = warps * std::max(rows.count, 1) * sizeof(AggregateState);
  char* at = static_cast<char*>(ctx.scratch(status_bytes + last_start_bytes + 2 * marks_bytes + run_bytes + state_bytes));
  auto take = [&at](std::size_t bytes) {
    char* p = at;
    at += bytes;
    return p;
  };
  auto* status = reinterpret_cast<unsigned long long*>(take(status_bytes));
  auto* last_start = reinterpret_cast<int*>(take(last_start_bytes));
  const LaneMarks marks{reinterpret_cast<std::uint32_t*>(take(marks_bytes)),
                        reinterpret_cast<std::uint32_t*>(take(marks_bytes))};
  auto* head_runs = reinterpret_cast<std::uint32_t*>(take(run_bytes));
  const WarpHeads heads{head_runs, reinterpret_cast<AggregateState*>(take(state_bytes))};
  const TileState ts{status, last_start, nullptr, reinterpret_cast<unsigned*>(status + tiles), count};
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(status, 0, (tiles + 1) * sizeof(unsigned long long), s));
  const auto blocks = static_cast<unsigned>(tiles);
  // The first COUNT(*) is reduced by the marking pass.
  int count_star = -1;
  for (int a = 0; a < out.count && count_star < 0; ++a)
    if (rows.slot[a].kind == AggregateKind::CountStar) count_star = a;
  const SlotOut no_slot{nullptr, nullptr, nullptr, 0, out.count};
  mark_sorted_runs<<<blocks, kRunsBlock, 0, s>>>(
      keys, n, out_keys, ts, head_runs, marks,
      count_star < 0 ? no_slot : SlotOut{out.bits[count_star], nullptr, nullptr, count_star, out.count},
      heads.states);
  GPUOLAP_CHECK_LAUNCH("mark_sorted_runs");
  for (int a = 0; a < out.count; ++a) {
    if (a == count_star) continue;
    const SlotOut o{out.bits[a], out.high[a], out.counts[a], a, out.count};
    with_fixed_slot(rows.slot[a], o.counts != nullptr, [&](auto fixed) {
      reduce_runs_of_slot<decltype(fixed)><<<blocks, kRunsBlock, 0, s>>>(n, order, rows.slot[a], o, marks,
                                                                        heads.states);
    });
    GPUOLAP_CHECK_LAUNCH("reduce_runs_of_slot");
  }
  merge_warp_heads<<<static_cast<unsigned>((warps + 255) / 256), 256, 0, s>>>(heads, warps, out);
  GPUOLAP_CHECK_LAUNCH("merge_warp_heads");
}

}  // namespace gpuolap::groupby::gpu
