#pragma once
// The thread-run kernel (past the thesis) for maps with one target per base
// (LeanMap). Facts are sorted by key, and each warp takes one contiguous
// range of them, lane l every 32nd fact from l on (loads stay coalesced), so
// a thread's successive facts share a target for as long as the data does
// (B1's single target, B2's month and channel classes: 146 K facts). Each
// thread merges such facts in registers and writes only when its target
// changes; where many lanes end runs of the first ending lane's target
// together (neighbouring lanes cross a target boundary together), those
// merge across the warp first (lane0 pre-aggregation). The map's positions
// sit in shared memory where they fit. Pages without a relevant cell (their
// base-id ranges tell) are not read: the warps share the others evenly
// (KernelInput::pages).
#include "aggregate_kernel.cuh"

namespace gpuolap::gpu {

// No run yet (LeanMap targets are below it).
constexpr uint32_t kNoRun = kNoPosition;

// Ending runs of at least this many lanes on one target merge across the
// warp before they write: a merge costs some 30 instructions (a butterfly
// of shuffles), each lane more on one address one more round of the
// compare-and-swap loop (some 6). On the H100, 2, 6 and 12 gave M2's and
// M3's phase 1 the same times (0.17 and 0.50 ms); never merging took B3's
// from 1.96 to 2.72 ms (its lanes cross class boundaries together).
constexpr int kLeanMergeLanes = 6;

// A key's target: the sum of its dimensions' parts, or kNoRun when some
// dimension's base is outside the area.
// No early exit: the dimensions' loads go out together instead of each
// waiting for the one before (every base id has an entry).
template <int D>
__device__ __forceinline__ uint32_t lean_target(const LeanMap& map, const uint32_t* positions, uint64_t key) {
  uint32_t target = 0;
  bool inside = true;
#pragma unroll
  for (int d = 0; d < D; ++d) {
    const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
    const uint32_t part = positions[map.first[d] + b];  // position x stride
    inside = inside && part != kNoPosition;
    target += part;
  }
  return inside ? target : kNoRun;
}

// D: the map's dimensions, exactly (a loop over unused slots would still
// issue its predicated instructions). At most 64 registers (blocks of up to
// 1024 threads): a shared store that leaves room for one block per
// multiprocessor then still keeps 32 warps resident. B3's phase 1 (four
// dimensions, 7,680 exact class-tuple sums in 215 KB) took 72 registers and
// ran in one block of 512 threads: 25 % occupancy, 46 % of memory
// throughput (ncu), 2.9 ms against B1's 1.5.
template <class Store, int F, int D>
__global__ void __launch_bounds__(1024) lean_run_kernel(KernelInput in, LeanMap map, Store store) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);
  const uint32_t* positions = reinterpret_cast<const uint32_t*>(map.global + map.positions_at);
  if (map.positions_in_shared) {
    uint32_t* local = reinterpret_cast<uint32_t*>(smem + map.shared_at);
    for (uint32_t i = threadIdx.x; i < map.entries; i += blockDim.x) local[i] = positions[i];
    __syncthreads();
    positions = local;
  }

  const uint64_t threads = uint64_t{gridDim.x} * blockDim.x;
  const unsigned copy = static_cast<unsigned>((uint64_t{blockIdx.x} * blockDim.x + threadIdx.x) %
                                              (store.t.copies ? store.t.copies : 1));
  const unsigned lane = threadIdx.x & 31;
  uint32_t run_target = kNoRun;
  Part run = Part::identity();
  // Writes the runs of the lanes that pass `ends` (all lanes call it). When
  // many of them hold the first one's target (lanes crossing a target
  // boundary together: B2's classes, B3's), they merge first (lane-0
  // pre-aggregation); otherwise each writes its own. M2 and M3 end a run at
  // almost every fact (the component varies fastest) with a few lanes on
  // the same class tuple: there a warp-wide merge per fact costs more
  // instructions than the few retries of those lanes' compare-and-swap
  // loops save.
  auto write_runs = [&](bool ends) {
    const unsigned enders = __ballot_sync(kFullWarp, ends);
    if (enders == 0) return;
    const int first = __ffs(enders) - 1;
    // (Every lane shuffles and votes: no short-circuit may skip them.)
    const uint32_t first_target = __shfl_sync(kFullWarp, run_target, first);
    const bool with_first = ends && run_target == first_target;
    const unsigned merging = __ballot_sync(kFullWarp, with_first);
    const bool merge = __popc(merging) >= kLeanMergeLanes;
    Part out = run;
    if (merge) {
      // Butterfly: every lane ends with the merge of the first lane's target.
      Part m = with_first ? run : Part::identity();
#pragma unroll
      for (int offset = 16; offset > 0; offset >>= 1) m.merge<F>(shuffle_xor_part<F>(m, offset), store.t.grid);
      if (with_first) {
        out = m;
        ends = static_cast<int>(lane) == first;  // the merged runs write once
      }
    }
    const bool adds = ends && in_window(store.t, run_target);  // not another chunk's
    if (adds) store.template add<F>(run_target, copy, out);
    count_updates(store.t, adds);
  };

  // A warp's share: a contiguous range of the cells, or of the listed
  // pages' cells. A batch lies on one page (the share and the page size are
  // multiples of the step).
  const uint64_t span = in.pages ? in.page_count * in.page_size : in.n;
  const uint64_t warps = threads / 32;
  // A block's warps take shares far apart (warp w of block b the share
  // w x blocks + b): the warps sharing a block's store then work on
  // different parts of the key space, mostly on different targets, and
  // seldom make each other's compare-and-swap loops retry. With neighbouring
  // shares, M3's 32 warps of a block all added to one plant's few class
  // tuples at once (5.2 rounds of the loop per update).
  const uint64_t warp = uint64_t{threadIdx.x / 32} * gridDim.x + blockIdx.x;
  const uint64_t per_warp = ((span + warps - 1) / warps + kLeanRunStep - 1) / kLeanRunStep * kLeanRunStep;
  const uint64_t begin = warp * per_warp;
  const uint64_t end = begin + per_warp < span ? begin + per_warp : span;
  for (uint64_t first = begin; first < end; first += kLeanRunStep) {
    const uint64_t page_start = in.pages ? uint64_t{in.pages[first / in.page_size]} * in.page_size : 0;
    uint64_t keys[kLeanRunBatch];
    double values[kLeanRunBatch];
#pragma unroll
    for (int u = 0; u < kLeanRunBatch; ++u) {
      const uint64_t i = first + static_cast<uint64_t>(u) * 32 + lane;
      const uint64_t cell = in.pages ? page_start + i % in.page_size : in.cells ? in.cells[i] : i;
      keys[u] = 0;
      values[u] = __longlong_as_double(0x7ff8000000000000ll);  // NaN: no fact
      if (i < end && (!in.pages || cell < in.n)) {  // the last page may be partial
        keys[u] = in.keys[cell];
        values[u] = in.values[cell];
      }
    }
    // Not unrolled (write_runs is large): shift the batch instead of
    // indexing it, so it stays in registers.
#pragma unroll 1
    for (int u = 0; u < kLeanRunBatch; ++u) {
      const uint32_t target = lean_target<D>(map, positions, keys[0]);
      const bool relevant = target != kNoRun && values[0] == values[0];
      double w = 1.0;
      // Most maps weigh nothing: one uniform branch skips the weights.
      if (map.weighted) {
#pragma unroll
        for (int d = 0; d < D; ++d) {
          // In dimension order, as on the CPU (a weight of 1 changes nothing).
          if (relevant && map.weights_at[d] != kNoWeights) {
            const uint32_t b = static_cast<uint32_t>((keys[0] >> map.shift[d]) & map.mask[d]);
            w = __dmul_rn(w, reinterpret_cast<const double*>(map.global + map.weights_at[d])[b]);
          }
        }
      }
      write_runs(relevant && run_target != kNoRun && target != run_target);
      if (relevant) {
        // One path for all lanes: a new run starts empty, then every fact adds.
        if (target != run_target) {
          run_target = target;
          run = Part::identity();
        }
        run.add<F>(values[0], w, store.t.grid);
      }
#pragma unroll
      for (int v = 0; v + 1 < kLeanRunBatch; ++v) {
        keys[v] = keys[v + 1];
        values[v] = values[v + 1];
      }
    }
  }
  write_runs(run_target != kNoRun);
  store.template flush<F>();
}

}  // namespace gpuolap::gpu
