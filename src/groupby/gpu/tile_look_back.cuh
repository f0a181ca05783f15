#pragma once
// Tiles in order without a grid-wide barrier: the decoupled look-back
// (Merrill & Garland, "Single-pass Parallel Prefix Scan with Decoupled
// Look-back", as CUB's single-pass scans do). Each tile publishes its own
// count of group starts at once, then the count of every tile up to and
// including it when it knows it; a tile finds the count before it by
// reading its predecessors' words until one holds an inclusive count.
//
// Besides the counts, the one-pass kernels need to know which tile a group
// that continues into them started in (to wait until that tile has written
// the group's first value): the nearest predecessor with a start, found on
// the way back, or, past a tile with an inclusive count, that tile's
// `last_start`.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpuolap::groupby::gpu {

struct TileState {
  unsigned long long* status;  // per tile, 0 until published (the word below)
  int* last_start;             // per tile, with kTilePrefix: the last tile up to it with a group start (-1: none)
  int* ready;                  // per tile, 1 once its groups' slots hold values
  unsigned int* next_tile;     // the tile counter
  std::uint32_t* group_count;  // written by the last tile
};

// A tile's word: status (2 bits) | its own count (30 bits) | the inclusive
// count (32 bits, with kTilePrefix).
constexpr std::uint64_t kTileAggregate = 1;
constexpr std::uint64_t kTilePrefix = 2;

__device__ __forceinline__ std::uint64_t tile_status(std::uint64_t w) { return w >> 62; }
__device__ __forceinline__ std::uint32_t tile_own(std::uint64_t w) { return static_cast<std::uint32_t>((w >> 32) & 0x3fffffffu); }
__device__ __forceinline__ std::uint32_t tile_inclusive(std::uint64_t w) { return static_cast<std::uint32_t>(w); }

__device__ __forceinline__ void publish_tile(const TileState& ts, std::size_t tile, std::uint64_t status,
                                             std::uint64_t own, std::uint64_t inclusive) {
  __threadfence();
  atomicExch(ts.status + tile, static_cast<unsigned long long>((status << 62) | (own << 32) | (inclusive & 0xffffffffu)));
}

// Waits until tile p has published, and returns its word.
__device__ __forceinline__ std::uint64_t read_tile(const TileState& ts, long p) {
  std::uint64_t w;
  do {
    w = *(volatile unsigned long long*)(ts.status + p);
  } while (tile_status(w) == 0);
  return w;
}

__device__ __forceinline__ void wait_ready(const int* ready, int tile) {
  while (*(volatile const int*)(ready + tile) == 0) {
  }
  __threadfence();
}

// The look-back by a whole warp, 32 predecessors at a time: every lane of
// the calling warp must call it. Publishes tile `tile`'s count and returns
// the count before it; *head_tile gets the last tile before it with a group
// start (-1: none).
__device__ __forceinline__ std::uint32_t warp_look_back(const TileState& ts, unsigned tile, std::uint32_t tile_starts,
                                                        int* head_tile) {
  const int lane = threadIdx.x & 31;
  if (tile == 0) {
    if (lane == 0) {
      ts.last_start[0] = tile_starts ? 0 : -1;
      publish_tile(ts, 0, kTilePrefix, tile_starts, tile_starts);
    }
    *head_tile = -1;
    return 0;
  }
  if (lane == 0) publish_tile(ts, tile, kTileAggregate, tile_starts, 0);
  std::uint32_t before = 0;
  int head = -1;
  for (long top = static_cast<long>(tile) - 1;; top -= 32) {
    // Lane 31 reads the nearest predecessor; a tile before tile 0 counts as
    // an inclusive count of 0 with no start.
    const long p = top - (31 - lane);
    const std::uint64_t w = p >= 0 ? read_tile(ts, p) : (kTilePrefix << 62);
    const unsigned prefixes = __ballot_sync(0xffffffffu, tile_status(w) == kTilePrefix);
    const int stop = prefixes ? 31 - __clz(prefixes) : -1;  // the nearest inclusive count
    std::uint32_t part = lane > stop ? tile_own(w) : lane == stop ? tile_inclusive(w) : 0;
    for (int d = 16; d > 0; d >>= 1) part += __shfl_xor_sync(0xffffffffu, part, d);
    before += part;
    const unsigned starts = __ballot_sync(0xffffffffu, lane > stop && tile_own(w) > 0);
    if (head < 0 && starts) head = static_cast<int>(top - (31 - (31 - __clz(starts))));
    if (stop >= 0) {
      __threadfence();  // last_start was written before the word that says PREFIX
      const int last = (lane == stop && p >= 0) ? *(volatile int*)(ts.last_start + p) : -1;
      const int stop_last = __shfl_sync(0xffffffffu, last, stop);
      if (head < 0) head = stop_last;
      break;
    }
  }
  if (lane == 0) {
    ts.last_start[tile] = tile_starts ? static_cast<int>(tile) : head;
    publish_tile(ts, tile, kTilePrefix, tile_starts, before + tile_starts);
  }
  *head_tile = head;
  return before;
}

}  // namespace gpuolap::groupby::gpu
