#pragma once
// The kernels of cube creation on the GPU (cube_gpu.cu launches them). The
// aggregate states and their device updates are ordered aggregation's
// (groupby/gpu/ordered_kernels.cuh): a group there is a cell here.
//
// Cells of a set live either in a dense cube (one state per possible key,
// with a `filled` byte) or as compact arrays (keys ascending, one state
// each). Rows and cells reach them four ways here (and the lattice's and
// gpu-expand's runs of rows through CUB, groupby/gpu/slot_reduce_by_key.cuh):
//   atomics      a thread per row merges into the dense cube (gpu-naive,
//                the lattice's finest set from unsorted rows)
//   runs         keys sorted; a border where a key differs from the one
//                before, found through a tile staged in shared memory; the
//                borders' prefix sum numbers the runs; then a thread per
//                chunk of positions, an atomic where a run or chunk ends
//                (gpu-sorted, the paper's form; the coarser sets a sort
//                makes)
//   warp runs    a parent's cells into a dense set (the lattice), read
//                coalesced: a warp takes 128 consecutive cells, reduces runs
//                of equal child cells in registers and across its lanes,
//                and merges each run atomically once
//   gather       a dense cube's filled cells into compact arrays
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "cube/coded_table.hpp"
#include "groupby/gpu/ordered_kernels.cuh"
#include "groupby/gpu/warp_states.cuh"

namespace gpuolap::cube::gpu {

using groupby::gpu::DeviceAggregates;
using groupby::gpu::States;
constexpr int kStates = static_cast<int>(groupby::kMaxAggregates);

// One set's dense cube as a target of atomics, with the projection of the
// source's keys to the set's keys.
struct DenseTarget {
  Projection projection;
  DeviceAggregates cells;
  std::uint8_t* filled = nullptr;
};

template <int N = kStates>
__device__ __forceinline__ void load_cell(const DeviceAggregates& A, std::uint32_t c, States<N>& st) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) {
      st.s[a].bits = A.bits[a][c];
      st.s[a].high = A.high[a] ? A.high[a][c] : 0;
      st.s[a].count = A.counts[a] ? A.counts[a][c] : 0;
    }
}

template <int N = kStates>
__device__ __forceinline__ void merge_cell(const DeviceAggregates& A, States<N>& into, const States<N>& from) {
#pragma unroll
  for (int a = 0; a < N; ++a)
    if (a < A.count) groupby::merge_state(A.slot[a], into.s[a], from.s[a]);
}

// Identities into cells [0, n) of a dense cube; no cell filled.
__global__ void init_cells(DeviceAggregates A, std::uint8_t* filled, std::uint64_t n) {
  for (std::uint64_t c = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; c < n; c += std::uint64_t{gridDim.x} * blockDim.x) {
    groupby::gpu::init_group(A, static_cast<std::uint32_t>(c));
    filled[c] = 0;
  }
}

// gpu-naive (and the lattice's finest set from unsorted rows): a thread per
// row, its state merged atomically into the cell of every target.
__global__ void rows_into_dense(const std::uint64_t* keys, std::size_t rows, DeviceAggregates row_slots,
                                const DenseTarget* targets, int target_count) {
  for (std::size_t row = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; row < rows;
       row += std::size_t{gridDim.x} * blockDim.x) {
    States<kStates> st;
    groupby::gpu::reset(row_slots, st);
    groupby::gpu::add(row_slots, st, row);
    const std::uint64_t key = keys[row];
    for (int t = 0; t < target_count; ++t) {
      const DenseTarget& target = targets[t];
      const auto c = static_cast<std::uint32_t>(target.projection(key));
      groupby::gpu::atomic_merge(target.cells, c, st);
      target.filled[c] = 1;
    }
  }
}

// out[i] = projection(keys[i]) (with `out` set); with `rows` set, rows[i] =
// i too (the values a sort of the keys carries along).
__global__ void project_keys(const std::uint64_t* keys, std::size_t n, Projection projection, std::uint64_t* out,
                             std::uint32_t* rows) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    if (out) out[i] = projection(keys[i]);
    if (rows) rows[i] = static_cast<std::uint32_t>(i);
  }
}

// gpu-expand: virtual row (set s, row r) at s * rows + r, keyed by the set's
// index above the set's key.
__global__ void expand_keys(const std::uint64_t* keys, std::size_t rows, const Projection* projections, int sets,
                            int key_bits, std::uint64_t* out, std::uint32_t* out_rows) {
  const std::size_t n = rows * sets;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t s = i / rows, r = i - s * rows;
    out[i] = (std::uint64_t{s} << key_bits) | projections[s](keys[r]);
    out_rows[i] = static_cast<std::uint32_t>(r);
  }
}

// flags[i] = 1 where key i differs from key i-1 (and at 0). Each key is read
// once: a block stages its tile and the key before it in shared memory (the
// paper's §2.3: comparing neighbours straight from global memory reads every
// key twice).
constexpr int kBorderBlock = 256;
__global__ void border_flags(const std::uint64_t* keys, std::size_t n, std::uint32_t* flags) {
  __shared__ std::uint64_t tile[kBorderBlock + 1];
  const std::size_t base = blockIdx.x * std::size_t{kBorderBlock};
  const std::size_t i = base + threadIdx.x;
  if (i < n) tile[threadIdx.x + 1] = keys[i];
  if (threadIdx.x == 0) tile[0] = base > 0 ? keys[base - 1] : 0;
  __syncthreads();
  if (i < n) flags[i] = i == 0 || tile[threadIdx.x] != tile[threadIdx.x + 1];
}

// The rows of a run: row slots over the table's columns, a row each.
struct RowSource {
  DeviceAggregates slots;
  const std::uint32_t* order;  // sorted position -> row; null: the rows in order
  __device__ __forceinline__ void add(States<kStates>& st, std::size_t i) const {
    groupby::gpu::add(slots, st, order ? order[i] : i);
  }
};
// The cells of a run: a parent's compact cells, merged.
struct CellSource {
  DeviceAggregates cells;
  const std::uint32_t* order;  // sorted position -> parent cell
  __device__ __forceinline__ void add(States<kStates>& st, std::size_t i) const {
    States<kStates> cell;
    load_cell(cells, order[i], cell);
    merge_cell(cells, st, cell);
  }
};

// Whether sorted key i starts a run: the flag the runs' scan adds up when
// no border kernel wrote the flags first (the scan reads each key and the
// one before; both come from the same cache lines).
struct KeyChanges {
  const std::uint64_t* keys;
  __host__ __device__ std::uint32_t operator()(std::size_t i) const { return i == 0 || keys[i] != keys[i - 1]; }
};

// The runs' states: run ids[i] (the inclusive prefix sum of the border
// flags) takes sorted position i, as compact cell ids[i] - 1. A thread walks
// `chunk` positions in order, keeps the current run's state in registers and
// merges it atomically into its cell where the run or the chunk ends; where
// the id changes a run starts, and that thread writes the run's key. The
// paper gives a run (an intersection) one thread, whose loop it later
// replaced by a parallel reduction: one thread took 1.6 s for the total's
// single run of 5 M rows on an H200. Here a run of length L costs
// L / chunk atomics.
template <class Source>
__global__ void aggregate_run_chunks(const std::uint64_t* sorted_keys, const std::uint32_t* ids, std::size_t n, int chunk,
                                     Source source, DeviceAggregates out, std::uint64_t* out_keys) {
  const std::size_t first = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) * chunk;
  if (first >= n) return;
  const std::size_t last = min(first + chunk, n);
  States<kStates> st;
  groupby::gpu::reset(out, st);
  std::uint32_t previous = first == 0 ? 0 : ids[first - 1];
  std::uint32_t current = ids[first];
  for (std::size_t i = first; i < last; ++i) {
    const std::uint32_t id = ids[i];
    if (id != current) {
      groupby::gpu::atomic_merge(out, current - 1, st);
      groupby::gpu::reset(out, st);
      current = id;
    }
    if (id != previous) out_keys[id - 1] = sorted_keys[i];
    previous = id;
    source.add(st, i);
  }
  groupby::gpu::atomic_merge(out, current - 1, st);
}

// The lattice's dense sets from a parent's compact cells (in key order,
// *parent_count of them). Consecutive parent cells often share a child
// cell (a projection that keeps the parent's leading columns), so a warp
// takes a step of 128 consecutive cells, 4 per lane (lane l cells
// 4l..4l+3: each load of the warp covers one stretch of memory), reduces
// runs of equal child cells in registers and, through a segmented scan of
// the lanes (shuffles), across the lane; each run is merged atomically once
// per step. The thread per chunk of 8 cells it replaces read a warp's
// cells 8 apart and took 99-109 us for the 1.5 M finest cells of the
// sales-flat cube on an H200; this takes 54-57 us (ncu), about the rate of
// the atomics it must make where no two cells share a child (3 per cell for
// SUM of integers and COUNT(*)).
//
// The same kernel over sorted rows with run ids (stores for runs complete
// in a step, atomics for the rest) took 706 us for 25 M rows against 503
// for aggregate_run_chunks: 110 registers, a quarter of the warps resident,
// memory at 13 % (ncu); capped at 64 registers it spilled and took 561.
// Not kept for the rows.
constexpr int kCellsPerLane = 4;
constexpr int kDenseRunsBlock = 256;

struct DenseRuns {
  const std::uint64_t* parent_keys;
  const std::uint32_t* parent_count;
  DeviceAggregates parent;
  DenseTarget target;
  __device__ __forceinline__ std::uint32_t child(std::size_t i) const {
    return static_cast<std::uint32_t>(target.projection(parent_keys[i]));
  }
  template <int N>
  __device__ __forceinline__ void add(States<N>& st, std::size_t i) const {
    States<N> cell;
    load_cell(parent, static_cast<std::uint32_t>(i), cell);
    merge_cell(parent, st, cell);
  }
  template <int N>
  __device__ __forceinline__ void merge(std::uint32_t c, const States<N>& st) const {
    groupby::gpu::atomic_merge(target.cells, c, st);
    target.filled[c] = 1;
  }
};

// One set of a wave: the lattice's dense sets whose parents are computed
// go into one launch (cells_into_dense_wave), their dense cubes laid end to
// end in one allocation, and are compacted together (compaction_counts,
// gather_wave). A small set's kernel is a latency-bound chain of about
// 2,500 dependent instructions per warp whatever the set's size (ncu on an
// H200: 10-19 us each, half of it waiting on instruction fetch), so sets
// launched one by one paid it once each; a wave pays it once.
struct DenseJob {
  DenseRuns runs;           // the parent's cells, and the set's dense cube (from `offset` of the wave's)
  std::size_t bound = 0;    // at most this many parent cells
  std::uint64_t offset = 0; // the set's first cell in the wave's dense cubes
  unsigned first_block = 0; // the job's blocks of cells_into_dense_wave: [first_block, + blocks)
  unsigned blocks = 0;
  DeviceAggregates out;     // the set's compact cells
  std::uint64_t* out_keys = nullptr;
  std::uint32_t* out_count = nullptr;
  std::uint32_t first_selected = 0;  // its first filled cell among the wave's (compaction_counts)
};

// Copied as bytes: into page-locked memory on the host, by words into
// shared memory in the kernel.
static_assert(std::is_trivially_copyable_v<DenseJob> && sizeof(DenseJob) % 4 == 0);

// N: the aggregates held (at least the cells' count). A warp takes steps
// first_warp, first_warp + warps, ... of `runs`' parent cells (bound at
// most).
template <int N>
__device__ __forceinline__ void dense_runs_steps(const DenseRuns& runs, std::size_t bound, std::size_t first_warp,
                                                 std::size_t warps) {
  using groupby::gpu::merged;
  using groupby::gpu::reset;
  using groupby::gpu::shfl_up_states;
  using groupby::gpu::warp_segmented_scan;
  constexpr std::size_t kStep = 32 * kCellsPerLane;
  const DeviceAggregates& A = runs.target.cells;
  const std::size_t n = min(bound, std::size_t{*runs.parent_count});
  const int lane = threadIdx.x & 31;
  for (std::size_t step = first_warp; step * kStep < n; step += warps) {
    const std::size_t first = step * kStep + kCellsPerLane * lane;
    std::uint32_t ids[kCellsPerLane];
#pragma unroll
    for (int k = 0; k < kCellsPerLane; ++k) ids[k] = first + k < n ? runs.child(first + k) : 0;
    // The child of the cell before this lane's first: the lane before's
    // last (lane 0 starts a run in any case).
    const std::uint32_t before = __shfl_up_sync(0xffffffffu, ids[kCellsPerLane - 1], 1);
    // Lead: the cells before the lane's first run start (they belong to the
    // run open before the lane); tail: the run open at its end.
    States<N> lead, tail;
    reset(A, lead);
    reset(A, tail);
    bool lead_cells = false, started = false;
    std::uint32_t last_id = before;
#pragma unroll
    for (int k = 0; k < kCellsPerLane; ++k) {
      const std::size_t i = first + k;
      if (i >= n) break;
      if ((lane == 0 && k == 0) || ids[k] != last_id) {
        if (started) runs.merge(last_id, tail);
        started = true;
        reset(A, tail);
      }
      if (started) runs.add(tail, i);
      else {
        runs.add(lead, i);
        lead_cells = true;
      }
      last_id = ids[k];
    }
    // The segmented scan: a lane passes on its tail (cutting what came
    // before) or, without a start, its lead added to what came before.
    bool cut = started;
    const States<N> pass = warp_segmented_scan(A, started ? tail : lead, cut);
    // The run open before this lane (the lane before's inclusive value)
    // ends at the lane's first start.
    States<N> into = shfl_up_states(A, pass, 1);
    if (lane == 0) reset(A, into);
    if (started && (lane > 0 || lead_cells)) runs.merge(before, merged(A, into, lead));
    // The run open at the step's end, from its last lane with cells.
    const int last = static_cast<int>(min(std::size_t{31}, (n - 1 - step * kStep) / kCellsPerLane));
    if (lane == last) runs.merge(last_id, started ? tail : merged(A, into, lead));
  }
}


// The wave's jobs (job_count of them): a block finds its job by its index,
// copies the job's description into shared memory (read there by every
// lane, as a kernel parameter would be) and takes its share of the steps.
template <int N>
__global__ void __launch_bounds__(kDenseRunsBlock) cells_into_dense_wave(const DenseJob* jobs, int job_count) {
  __shared__ alignas(DenseJob) unsigned char raw[sizeof(DenseJob)];
  __shared__ int found;
  if (threadIdx.x == 0) {
    int lo = 0, hi = job_count - 1;  // the last job whose first block is at most this one
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (jobs[mid].first_block <= blockIdx.x) lo = mid;
      else hi = mid - 1;
    }
    found = lo;
  }
  __syncthreads();
  const auto* from = reinterpret_cast<const std::uint32_t*>(jobs + found);
  for (unsigned w = threadIdx.x; w < sizeof(DenseJob) / 4; w += blockDim.x) reinterpret_cast<std::uint32_t*>(raw)[w] = from[w];
  __syncthreads();
  const DenseJob& job = *reinterpret_cast<const DenseJob*>(raw);
  const unsigned block = blockIdx.x - job.first_block;
  dense_runs_steps<N>(job.runs, job.bound, (block * std::size_t{blockDim.x} + threadIdx.x) / 32,
                      std::size_t{job.blocks} * (blockDim.x / 32));
}

__global__ void set_count(std::uint32_t* count, std::uint32_t value) { *count = value; }

__global__ void init_compact_cells(DeviceAggregates A, std::uint32_t n) {
  const std::size_t c = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (c < n) groupby::gpu::init_group(A, static_cast<std::uint32_t>(c));
}

// The job whose dense cells hold wave cell c: the last whose offset is at
// most c.
__device__ __forceinline__ int job_of_cell(const DenseJob* jobs, int job_count, std::uint64_t c) {
  int lo = 0, hi = job_count - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (jobs[mid].offset <= c) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// The first of index[0, n) (ascending) that is at least c, or n: a warp
// probes 32 places at once, so the range shrinks 33-fold a round (4 rounds
// for a million cells) where a binary search makes 20 dependent loads.
__device__ __forceinline__ std::uint32_t warp_first_at_least(const std::uint32_t* index, std::uint32_t n,
                                                             std::uint64_t c) {
  const unsigned lane = threadIdx.x & 31;
  std::uint32_t lo = 0, hi = n;  // the answer is in [lo, hi]
  while (hi > lo) {
    const std::uint32_t span = hi - lo;
    // Lane l probes the last place of the l-th of 32 even parts (or, in a
    // span of at most 32, place lo + l itself).
    const std::uint32_t at = span <= 32 ? lo + lane : lo + static_cast<std::uint32_t>(std::uint64_t{span} * (lane + 1) / 33);
    const bool probe = at < hi;
    const unsigned above = __ballot_sync(0xffffffffu, probe && index[at] >= c);
    const unsigned probed = __ballot_sync(0xffffffffu, probe);
    if (above == 0) {  // every probe below c: past the last one probed
      const int last = 31 - __clz(probed);
      lo = __shfl_sync(0xffffffffu, at, last) + 1;
      if (span <= 32) return hi;
    } else {
      const int first = __ffs(above) - 1;
      hi = __shfl_sync(0xffffffffu, at, first);
      if (span <= 32) return hi;
      if (first > 0) lo = __shfl_sync(0xffffffffu, at, first - 1) + 1;
    }
  }
  return lo;
}

// Each job's count of filled cells and where they start among the wave's
// (`index`, ascending, *count of them): a warp per job.
__global__ void compaction_counts(DenseJob* jobs, int job_count, const std::uint32_t* index, const std::uint32_t* count) {
  const int j = static_cast<int>((blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) / 32);
  if (j >= job_count) return;  // a whole warp
  const std::uint32_t n = *count;
  const std::uint32_t first = warp_first_at_least(index, n, jobs[j].offset);
  const std::uint32_t next = j + 1 < job_count ? warp_first_at_least(index, n, jobs[j + 1].offset) : n;
  if ((threadIdx.x & 31) == 0) {
    jobs[j].first_selected = first;
    *jobs[j].out_count = next - first;
  }
}

// The wave's filled cells, listed by `index` (ascending; *count of them),
// each into its job's compact cells, keyed by its index in the job's cube.
__global__ void gather_wave(const DenseJob* jobs, int job_count, const std::uint32_t* index, const std::uint32_t* count,
                            DeviceAggregates dense) {
  const std::size_t g = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (g >= *count) return;
  const std::uint32_t c = index[g];
  const DenseJob& job = jobs[job_count == 1 ? 0 : job_of_cell(jobs, job_count, c)];
  const auto at = static_cast<std::uint32_t>(g - job.first_selected);
  States<kStates> st;
  load_cell(dense, c, st);
  groupby::gpu::store_group(job.out, at, st);
  job.out_keys[at] = c - job.offset;
}

}  // namespace gpuolap::cube::gpu
