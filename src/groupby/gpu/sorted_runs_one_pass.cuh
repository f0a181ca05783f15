#pragma once
// Runs of equal keys in rows sorted by a 64-bit key, reduced in one pass:
// each run's state for every aggregate slot and its key, stored compactly
// in key order. The library path (slot_reduce_by_key.cuh) reads the keys
// once to find the runs, then once more per word of each state (a CUB
// reduce-by-key each); CUB's reduce-by-key is bound by its work per item,
// not by bandwidth (about 125 us for 25 M items on an H200, whatever the
// value's width), so the passes add up: 256 us for the sales-flat cube's
// finest cells with SUM and COUNT(*). This kernel was written to read the
// rows once (floor: 400 MB at 4.4 TB/s, about 90 us). It is correct, and
// slower than CUB (below), so the cube takes it only when asked
// (`--sorted-runs one-pass`). Not yet known, for want of a profile: where
// its time goes. Suspects: the generic aggregate (a switch on the kind per
// row and aggregate), the state's three words in the scans, 72 registers.
//
// Here a block takes a tile of kRunsTileRows consecutive rows (tiles
// handed out in order by an atomic counter), a warp 512 of them, and each
// lane 16 consecutive rows of its warp's. What a lane reads goes through
// shared memory: the warp loads 32 consecutive rows at a time (coalesced)
// and each lane then reads its 16 from there.
//   1. the lane flags the rows that start a run and counts them; a warp
//      scan, a block scan over the warps and the decoupled look-back over
//      the tiles before (tile_look_back.cuh) give the lane the id of its
//      first run, and the runs' keys are stored;
//   2. aggregate by aggregate, the lane walks its rows in registers: a run
//      that starts and ends among them is stored at once; one segmented
//      scan over the warp's lanes joins the runs that cross lanes: the lane
//      holding a run's next start stores it, the run open at the warp's end
//      is stored by its last lane (as its first part when it goes on);
//   3. a warp's head (its rows before its first start, which belong to a
//      run begun in an earlier warp) is kept per warp and merged
//      atomically by a second, small kernel, after every first part is
//      stored: nothing waits inside the pass.
// Measured on an H200 (ncu, 2026-11-29), the 25 M sorted rows of the
// sales-flat cube (SUM of a double and COUNT(*), 1.42 M runs), against
// CUB's 256 us: this form took 542 us; lanes reading their 16 rows
// straight from global memory (a warp's load touching 32 cache lines, the
// aggregates unrolled together, 64 registers) 436 us; warps taking 32 rows
// a step, a row a lane, with a segmented scan per step, 1,304 us.
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

// One aggregate's state moved up the lanes: only the words it uses.
__device__ __forceinline__ AggregateState shfl_up_state(const DeviceAggregates& A, int a, const AggregateState& st,
                                                        int d) {
  AggregateState o = st;
  o.bits = __shfl_up_sync(0xffffffffu, st.bits, d);
  if (A.high[a]) o.high = __shfl_up_sync(0xffffffffu, st.high, d);
  if (A.counts[a]) o.count = __shfl_up_sync(0xffffffffu, st.count, d);
  return o;
}

__device__ __forceinline__ void store_state(const DeviceAggregates& A, int a, std::uint32_t g, const AggregateState& st) {
  A.bits[a][g] = st.bits;
  if (A.high[a]) A.high[a][g] = st.high;
  if (A.counts[a]) A.counts[a][g] = st.count;
}

// The rows' values read at sorted position i are row order[i] (or i with
// no order); `rows`' slots say where, `out` where the runs' states go (and
// which words a state uses).
__global__ void __launch_bounds__(kRunsBlock, 3) reduce_sorted_runs(const std::uint64_t* keys, std::size_t n,
                                                                 const std::uint32_t* order, DeviceAggregates rows,
                                                                 DeviceAggregates out, std::uint64_t* out_keys,
                                                                 TileState ts, WarpHeads heads) {
  __shared__ unsigned s_tile;
  __shared__ std::uint32_t s_warp_first[kRunsWarps];  // each warp's count of starts, then its first run id
  __shared__ std::uint64_t s_words[kRunsWarps][kStagedWords];
  __shared__ std::uint8_t s_nulls[kRunsWarps][kStagedWords];
  constexpr unsigned kAll = 0xffffffffu;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) s_tile = atomicAdd(ts.next_tile, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const std::size_t seg = (std::size_t{tile} * kRunsWarps + warp) * kRunsWarpRows;  // the warp's first row
  const int seg_rows = seg < n ? static_cast<int>(min(std::size_t{kRunsWarpRows}, n - seg)) : 0;
  const int first = lane * kRunsLaneRows;  // the lane's first row, in the warp's
  std::uint64_t* words = s_words[warp];
  std::uint8_t* nulls = s_nulls[warp];

  // 1. The keys, staged; which of the lane's rows start a run (row 0
  // always does); the lane's first run id; the runs' keys.
  for (int r = lane; r < kRunsWarpRows; r += 32) words[staged_at(r)] = r < seg_rows ? keys[seg + r] : 0;
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
  const bool started = flags != 0;
  // The lane's rows before its first start (all of them without one).
  const int lead_rows = started ? __ffs(flags) - 1 : max(0, min(kRunsLaneRows, seg_rows - first));
  const int last = seg_rows > 0 ? (seg_rows - 1) / kRunsLaneRows : -1;  // the warp's last lane with rows
  const std::uint32_t lane_last_id = lane_first_id + lane_starts - 1;     // the run open after the lane's rows
  const std::size_t w = std::size_t{tile} * kRunsWarps + warp;
  // The warp's head: the rows before its first start (its every row
  // without one), unless its first row starts a run.
  if (lane == 0) heads.run[w] = seg_rows > 0 && !(flags & 1u) ? warp_first_id - 1 : kNoHead;

  // 2. Aggregate by aggregate.
  for (int a = 0; a < out.count; ++a) {
    const AggregateSlot& slot = rows.slot[a];
    const bool values = reads_values(slot);
    if (values || slot.nulls) {
      __syncwarp();  // every lane has read the last words
      for (int r = lane; r < seg_rows; r += 32) {
        const std::size_t row = order ? order[seg + r] : seg + r;
        const bool null = slot.nulls && slot.nulls[row];
        nulls[staged_at(r)] = null;
        if (values) words[staged_at(r)] = null ? 0 : value_word(slot, row);
      }
      __syncwarp();
    }
    const AggregateState identity = identity_state(slot);
    AggregateState run = identity, lead = identity;
#pragma unroll
    for (int i = 0; i < kRunsLaneRows; ++i) {
      if (first + i < seg_rows) {
        if ((flags >> i) & 1u) {
          if (i == lead_rows) lead = run;  // the lane's first start
          else store_state(out, a, lane_first_id + __popc(flags & ((1u << i) - 1)) - 1, run);
          run = identity;
        }
        const int at = staged_at(first + i);
        add_word(slot, run, values ? words[at] : 0, slot.nulls && nulls[at] != 0);
      }
    }
    if (!started) lead = run;
    // Across the lanes: `pass` is, per lane, the run open after its rows,
    // merged back to the nearest lane with a start (cut: there is one).
    AggregateState pass = run;
    bool cut = started;
    for (int d = 1; d < 32; d <<= 1) {
      const AggregateState up = shfl_up_state(out, a, pass, d);
      const bool up_cut = __shfl_up_sync(kAll, cut, d);
      if (lane >= d && !cut) {
        AggregateState joined = up;
        merge_state(slot, joined, pass);
        pass = joined;
      }
      if (lane >= d) cut = cut || up_cut;
    }
    AggregateState into = shfl_up_state(out, a, pass, 1);  // the run open before the lane
    const bool into_cut = __shfl_up_sync(kAll, cut, 1) && lane > 0;
    if (lane == 0) into = identity;
    if (started && (lane > 0 || lead_rows > 0)) {
      // The lane's first start ends the run open before it.
      merge_state(slot, into, lead);
      if (into_cut) store_state(out, a, lane_first_id - 1, into);
      else heads.states[w * out.count + a] = into;  // begun before the warp: the head
    }
    if (lane == last) {
      if (cut) store_state(out, a, lane_last_id, pass);  // begun in this warp: whole, or its first part
      else heads.states[w * out.count + a] = pass;  // no start in the warp: every row is the head
    }
  }
}

// Each warp's head merged into its run (stored whole or as its first part
// by the pass, which has ended).
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
// memory) ends holding their number. Queued on the context's stream; its
// scratch holds the tiles' look-back words and the warps' heads.
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
  // together), each tile's last start, the heads' runs and states.
  const std::size_t status_bytes = aligned((tiles + 1) * sizeof(unsigned long long));
  const std::size_t last_start_bytes = aligned(tiles * sizeof(int));
  const std::size_t run_bytes = aligned(warps * sizeof(std::uint32_t));
  const std::size_t state_bytes = warps * std::max(rows.count, 1) * sizeof(AggregateState);
  char* base = static_cast<char*>(ctx.scratch(status_bytes + last_start_bytes + run_bytes + state_bytes));
  auto* status = reinterpret_cast<unsigned long long*>(base);
  TileState ts{status, reinterpret_cast<int*>(base + status_bytes), nullptr,
               reinterpret_cast<unsigned*>(status + tiles), count};
  WarpHeads heads{reinterpret_cast<std::uint32_t*>(base + status_bytes + last_start_bytes),
                  reinterpret_cast<AggregateState*>(base + status_bytes + last_start_bytes + run_bytes)};
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(status, 0, (tiles + 1) * sizeof(unsigned long long), s));
  reduce_sorted_runs<<<static_cast<unsigned>(tiles), kRunsBlock, 0, s>>>(keys, n, order, rows, out, out_keys, ts,
                                                                         heads);
  GPUOLAP_CHECK_LAUNCH("reduce_sorted_runs");
  merge_warp_heads<<<static_cast<unsigned>((warps + 255) / 256), 256, 0, s>>>(heads, warps, out);
  GPUOLAP_CHECK_LAUNCH("merge_warp_heads");
}

}  // namespace gpuolap::groupby::gpu
