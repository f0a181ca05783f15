#pragma once
// The block-cooperative kernel (past the paper): one pass, coalesced, and
// one plain store per group.
//
// A tile of local_size x intent rows is cut into one segment of 32 x intent
// rows per warp. A warp walks its segment in steps of 128 consecutive rows:
// lane l takes rows 4l..4l+3 of the step, so the warp's loads cover one
// contiguous stretch (the paper's thread-per-chunk order does not: a warp's
// 32 loads there are `intent` rows apart). A lane first reduces its 4 rows'
// runs in registers: a run that starts and ends among them is stored at
// once. What crosses lanes goes through one segmented scan over the warp
// (shuffles): each lane learns the state of the run open before its rows,
// completes the run its first start ends, and the run open at lane 31
// carries into the next step.
//
// Nothing waits for the identity to be written first: a run that starts in
// a segment is stored once, whole or (when it goes on past the segment) as
// its first part. Only a segment's head, the rows before its first start,
// belongs to a group begun earlier: it is added atomically, one atomic per
// warp, after the group's first part is known to be written (the earlier
// warps of the tile passed the barrier, or the earlier tile is `ready`,
// tile_look_back.cuh).
//
// Pass 1 reads the keys, keeps each row's "starts a group" flag in a
// register (so intent <= 32: 8 steps x 4 rows) and counts them; a block scan
// gives each warp its first group id and the warp look-back the tile's.
// Pass 2 reads the values, and the keys only of rows that start a group.
#include "groupby/gpu/ordered_kernels.cuh"
#include "groupby/gpu/tile_look_back.cuh"
#include "groupby/gpu/warp_states.cuh"

namespace gpuolap::groupby::gpu {

constexpr int kRowsPerLane = 4;  // rows a lane takes per step

// N: the aggregates held (at least A.count).
// At most 512 threads a block, two blocks a multiprocessor: 64 registers a
// thread. It spills (ncu, 2^24 unique rows: 3.3 M local-memory requests, L2
// at 75 %), yet 128 registers (one block) measured slower on runs (2^28,
// runs of 16: 4.4 -> 5.5 ms; unique: 5.6 -> 5.1 ms): the scan's dependent
// shuffles need the warps that the registers would take.
template <int N, class Keys>
__global__ void __launch_bounds__(512, 2) block_cooperative(Keys keys, std::size_t n, int intent, DeviceAggregates A,
                                                          KeySlots key_slots, DeviceGroupKeys key_out, TileState ts) {
  __shared__ unsigned s_tile;
  __shared__ std::uint32_t s_before;
  __shared__ int s_head;
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (threadIdx.x == 0) s_tile = atomicAdd(ts.next_tile, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const int steps = intent / kRowsPerLane;
  const std::size_t step_rows = 32 * kRowsPerLane;
  const std::size_t tile_begin = std::size_t{tile} * blockDim.x * intent;
  const std::size_t seg_begin = min(n, tile_begin + warp * step_rows * steps);
  const std::size_t seg_end = min(n, seg_begin + step_rows * steps);

  // Pass 1: bit 4j+k of `flags` says whether row k of this lane in step j
  // starts a group.
  std::uint32_t flags = 0;
  std::uint32_t lane_starts = 0;
  for (int j = 0; j < steps; ++j) {
    const std::size_t row0 = seg_begin + j * step_rows + kRowsPerLane * lane;
#pragma unroll
    for (int k = 0; k < kRowsPerLane; ++k) {
      const std::size_t row = row0 + k;
      if (row < seg_end && keys.starts(row)) flags |= 1u << (kRowsPerLane * j + k);
    }
  }
  lane_starts = __popc(flags);
  const std::uint32_t seg_starts = __reduce_add_sync(0xffffffffu, lane_starts);
  std::uint32_t tile_starts;
  const std::uint32_t before_warp = block_exclusive_scan(lane == 0 ? seg_starts : 0, &tile_starts);
  const std::uint32_t warp_before = __shfl_sync(0xffffffffu, before_warp, 0);
  if (warp == 0) {
    int head;
    const std::uint32_t before = warp_look_back(ts, tile, tile_starts, &head);
    if (lane == 0) {
      s_before = before;
      s_head = head;
      const std::size_t tiles = (n + std::size_t{blockDim.x} * intent - 1) / (std::size_t{blockDim.x} * intent);
      if (tile == tiles - 1) *ts.group_count = before + tile_starts;
    }
  }
  __syncthreads();

  // Pass 2, step by step. The carry is the run open before the step (the
  // same in every lane): its state, whether it holds rows, whether it
  // started in this segment, and its group id.
  States<N> carry;
  reset(A, carry);
  bool carry_rows = false;
  bool carry_started_here = false;
  std::uint32_t carry_id = s_before + warp_before - 1;
  States<N> head;  // the segment's head: its rows before the first start
  bool has_head = false;
  for (int j = 0; j < steps && seg_begin + j * step_rows < seg_end; ++j) {
    const std::size_t row0 = seg_begin + j * step_rows + kRowsPerLane * lane;
    const unsigned f = (flags >> (kRowsPerLane * j)) & ((1u << kRowsPerLane) - 1);
    const int my_starts = __popc(f);
    // Group ids: the starts before this lane in the step.
    int before_lane = my_starts;
    for (int d = 1; d < 32; d <<= 1) {
      const int up = __shfl_up_sync(0xffffffffu, before_lane, d);
      if (lane >= d) before_lane += up;
    }
    before_lane -= my_starts;
    const unsigned lanes_with_starts = __ballot_sync(0xffffffffu, my_starts > 0);
    std::uint32_t id = carry_id + before_lane;  // the group of this lane's first row

    // In registers: the rows before the lane's first start (`lead`), runs
    // that start and end here (stored), and the run open at its end (`tail`).
    States<N> lead, tail;
    reset(A, lead);
    reset(A, tail);
    bool lead_rows = false, started = false;
#pragma unroll
    for (int k = 0; k < kRowsPerLane; ++k) {
      const std::size_t row = row0 + k;
      if (row >= seg_end) break;
      if ((f >> k) & 1u) {
        if (started) store_group(A, id, tail);
        started = true;
        ++id;
        reset(A, tail);
        write_group_keys(keys, key_slots, key_out, id, row);
      }
      if (started) add(A, tail, row);
      else {
        add(A, lead, row);
        lead_rows = true;
      }
    }
    // The segmented scan over the lanes: what each lane passes on is its
    // tail (cutting what came before) or, without a start, its lead added
    // to what came before. `into` ends as the run open before this lane.
    bool cut = started;
    const States<N> pass = warp_segmented_scan(A, started ? tail : lead, cut);
    // Exclusive: the lane before's inclusive value, after the carry when
    // no lane before cuts.
    States<N> into = shfl_up_states(A, pass, 1);
    const bool into_cut = __shfl_up_sync(0xffffffffu, cut, 1) && lane > 0;
    if (lane == 0) reset(A, into);
    if (!into_cut && carry_rows) into = merged(A, carry, into);
    const bool into_rows = lane > 0 || carry_rows;
    // Did the run open before this lane start in this segment?
    const bool into_started_here = (lanes_with_starts & ((1u << lane) - 1)) != 0 || carry_started_here;
    const std::uint32_t into_id = carry_id + before_lane;
    if (started) {
      // The lane's first start ends the run open before it.
      if (into_rows || lead_rows) {
        const States<N> closed = merged(A, into, lead);
        if (into_started_here) store_group(A, into_id, closed);
        else {
          head = closed;
          has_head = true;
        }
      }
    }
    // The run open after the step: the last lane's inclusive view.
    const int last = static_cast<int>(min(std::size_t{31}, (seg_end - 1 - (seg_begin + j * step_rows)) / kRowsPerLane));
    States<N> open = started ? tail : merged(A, into, lead);
    carry = shfl_states(A, open, last);
    carry_id = __shfl_sync(0xffffffffu, carry_id + before_lane + my_starts, last);
    carry_started_here = carry_started_here || (lanes_with_starts & (0xffffffffu >> (31 - last))) != 0;
    carry_rows = true;
  }
  if (carry_rows && lane == 0) {
    if (carry_started_here) store_group(A, carry_id, carry);
    else {
      head = carry;
      has_head = true;
    }
  }

  // The groups begun here are written; earlier heads may now add to them.
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicExch(ts.ready + tile, 1);
    const bool continues = tile_begin < n && !keys.starts(tile_begin);
    if (continues) wait_ready(ts.ready, s_head);
  }
  __syncthreads();
  if (has_head) atomic_merge(A, s_before + warp_before - 1, head);
}

}  // namespace gpuolap::groupby::gpu
