#pragma once
// The one-pass kernels: the 1-kernel architecture the paper set aside for
// its barrier cost, and the block-cooperative kernel past the paper. Both
// read the rows in tiles of local_size x intent rows, handed out in order
// by an atomic counter, and find a tile's first group id by a decoupled
// look-back over the tiles before it: no grid-wide barrier, no pps array.
//
// The order of writes between tiles is the subtle part. A group's slots must
// hold a value before another tile adds to them atomically:
//   1-kernel           a tile sets the identity in the slots of the groups
//                      that start in it, then marks itself `ready`;
//   block-cooperative  a tile stores the state of every run that starts in
//                      it (complete runs once and for all, a run that goes on
//                      past the tile as its first part), then marks itself
//                      `ready`: most groups are written by one plain store.
// A tile whose first row continues a group waits until the tile where that
// group started is ready, then adds its part atomically. The look-back says
// which tile that is (the last one before with a group start). Waiting only
// on earlier tiles, which hold their tiles or have finished, cannot deadlock.
#include "groupby/gpu/ordered_kernels.cuh"
#include "groupby/gpu/tile_look_back.cuh"

namespace gpuolap::groupby::gpu {

// The scalar look-back of the 1-kernel (any block size): thread 0 of tile
// `tile` publishes the tile's count of group starts and walks back one tile
// at a time. Returns the count before the tile; *head_tile gets the last
// tile before it with a group start (-1: none).
__device__ __forceinline__ std::uint32_t look_back(const TileState& ts, unsigned tile, std::uint32_t tile_starts,
                                                   int* head_tile) {
  if (tile == 0) {
    ts.last_start[0] = tile_starts ? 0 : -1;
    publish_tile(ts, 0, kTilePrefix, tile_starts, tile_starts);
    *head_tile = -1;
    return 0;
  }
  publish_tile(ts, tile, kTileAggregate, tile_starts, 0);
  std::uint64_t before = 0;
  int head = -1;
  for (long p = static_cast<long>(tile) - 1; p >= 0; --p) {
    const std::uint64_t word = read_tile(ts, p);
    if (tile_status(word) == kTilePrefix) {
      before += tile_inclusive(word);
      __threadfence();  // last_start was written before the word that says PREFIX
      if (head < 0) head = *(volatile int*)(ts.last_start + p);
      break;
    }
    before += tile_own(word);
    if (head < 0 && tile_own(word)) head = static_cast<int>(p);
  }
  ts.last_start[tile] = tile_starts ? static_cast<int>(tile) : head;
  publish_tile(ts, tile, kTilePrefix, tile_starts, before + tile_starts);
  *head_tile = head;
  return static_cast<std::uint32_t>(before);
}

// What every one-pass tile does first: takes its tile, counts the group
// starts in each thread's chunk, scans them, and looks back. Returns false
// for a thread whose chunk is empty (it still took part in the scan).
struct TileStart {
  unsigned tile;
  std::size_t begin, end;        // this thread's rows
  std::uint32_t first_group;     // id of the first group starting in this chunk
  std::uint32_t chunk_starts;    // groups starting in this chunk
  bool continues;                // the tile's first row continues a group from an earlier tile
  int head_tile;                 // where that group started
};

template <class Keys>
__device__ __forceinline__ TileStart start_tile(const Keys& keys, std::size_t n, int intent, const TileState& ts) {
  __shared__ unsigned s_tile;
  __shared__ std::uint32_t s_before;
  __shared__ int s_head;
  if (threadIdx.x == 0) s_tile = atomicAdd(ts.next_tile, 1u);
  __syncthreads();
  TileStart t;
  t.tile = s_tile;
  const std::size_t tile_rows = std::size_t{blockDim.x} * intent;
  const std::size_t tile_begin = t.tile * tile_rows;
  t.begin = min(n, tile_begin + std::size_t{threadIdx.x} * intent);
  t.end = min(n, t.begin + intent);
  std::uint32_t starts = 0;
  for (std::size_t i = t.begin; i < t.end; ++i) starts += keys.starts(i) ? 1 : 0;
  std::uint32_t tile_starts;
  const std::uint32_t before_chunk = block_exclusive_scan(starts, &tile_starts);
  if (threadIdx.x == 0) {
    int head;
    s_before = look_back(ts, t.tile, tile_starts, &head);
    s_head = head;
    const std::size_t tiles = (n + tile_rows - 1) / tile_rows;
    if (t.tile == tiles - 1) *ts.group_count = s_before + tile_starts;
  }
  __syncthreads();
  t.first_group = s_before + before_chunk;
  t.chunk_starts = starts;
  t.continues = tile_begin < n && !keys.starts(tile_begin);
  t.head_tile = s_head;
  return t;
}

// The 1-kernel architecture: the paper's five steps in one kernel, with any
// of its four aggregation variants.
template <Variant V, class Keys>
__global__ void __launch_bounds__(1024) one_kernel(Keys keys, std::size_t n, int intent, DeviceAggregates A, KeySlots key_slots,
                           DeviceGroupKeys key_out, TileState ts) {
  const TileStart t = start_tile(keys, n, intent, ts);
  for (std::uint32_t g = 0; g < t.chunk_starts; ++g) init_group(A, t.first_group + g);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicExch(ts.ready + t.tile, 1);
    if (t.continues) wait_ready(ts.ready, t.head_tile);
  }
  __syncthreads();
  // Rows of the chunk before its first start belong to group first_group - 1.
  auto starts = [&](std::size_t i) { return keys.starts(i); };
  if (t.begin >= t.end) return;
  const std::uint32_t first_id = t.first_group - (keys.starts(t.begin) ? 0 : 1);
  if constexpr (V == Variant::DirectAtomics) {
    // "One thread per row" inside the tile: the block's threads take the
    // rows of their chunks one after the other, each row on its own.
    std::uint32_t g = first_id;
    for (std::size_t i = t.begin; i < t.end; ++i) {
      if (i > t.begin && keys.starts(i)) ++g;
      aggregate_rows<V>(A, key_slots, key_out, i, i + 1, g, starts);
    }
  } else {
    aggregate_rows<V>(A, key_slots, key_out, t.begin, t.end, first_id, starts);
  }
}

}  // namespace gpuolap::groupby::gpu
