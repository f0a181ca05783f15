// The CDP-enabled aggregation kernel (thesis §4.3) and the thesis' future-
// work hybrid (§6), on CUDA 12+'s dynamic parallelism (CDP2).
//
// Parent (§4.3.2): the grid walks pages of gridDim.x * blockDim.x source
// cells; per page, each thread counts its cell's targets, the block scans
// the counts (CUB BlockScan), writes the inclusive sums to its slot of D in
// global memory, and one thread launches a child grid over the page's pairs.
// Child (§4.3.3): copies the page's sums into shared memory; each thread
// finds its source by an upper-bound search, skips to its target and adds
// it, after warp pre-aggregation (the thesis' strided shuffle, or another).
//
// What changed since the thesis (CUDA 6.5, CDP1):
//   - device-side cudaDeviceSynchronize is gone. The thesis synchronised
//     each parent block with its children every k launches so that D could
//     be reused. Here the grid stops after k pages per block and tail-
//     launches its next round (cudaStreamTailLaunch): the device runtime
//     starts it only once this grid and every child it launched are done,
//     so the next round reuses D. The synchronisation is grid-wide, not
//     per block.
//   - children go to cudaStreamFireAndForget, so the children of one block
//     run concurrently (CDP1's per-block NULL stream ran them in order).
//   - a launch past the pending-launch limit fails instead of spilling to
//     a slow virtual pool: the parent checks every launch and counts
//     failures, and the engine reports them as an error rather than
//     answering without those targets.
//
// Hybrid (thesis §6): per page, the block computes the mean and variance of
// its cells' fan-outs. Even pages (variance <= mean^2) are aggregated by the
// parent itself with the source kernel's loop; uneven ones — a few cells
// fanning out widely — are handed to children, and successive uneven pages
// of a block share one child launch (up to kMergePages).
//
// This file is compiled as relocatable device code and linked with the
// device runtime (cudadevrt) on its own.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

#include <climits>

#include "cdp_kernels.hpp"
#include "gpu/runtime/cuda_check.cuh"
#include "fan_out.cuh"

namespace gpuolap::gpu {

namespace {

// Where a child's pairs come from: `entries` inclusive sums (in shared
// memory) over cells first_cell + (e / width) * step + e % width — one
// parent page (width = blockDim.x of the parent) or several successive ones
// (step = the parent's page size).
struct ChildArgs {
  const uint32_t* ends;
  uint32_t entries;
  uint32_t width;
  uint64_t first_cell;
  uint64_t step;
  uint32_t total;
};

__device__ inline void record_launch(const CdpArgs& a, cudaError_t error, unsigned long long blocks) {
  if (error == cudaSuccess) {
    atomicAdd(&a.stats[kChildKernels], 1ull);
    atomicAdd(&a.stats[kChildBlocks], blocks);
    return;
  }
  if (atomicAdd(&a.stats[kLaunchFailures], 1ull) == 0) a.stats[kFirstLaunchError] = static_cast<unsigned long long>(error);
}

// Dims bounds the map's dimensions (kFewDims for maps of at most that many:
// shorter loops, as for the source kernel and the work list).
template <class Store, Preagg P, int F, int Dims>
__global__ void __launch_bounds__(kFixedChildBlock) cdp_child(KernelInput in, DeviceMap map, Store store, ChildArgs c) {
  extern __shared__ uint32_t ends[];
  for (uint32_t e = threadIdx.x; e < c.entries; e += blockDim.x) ends[e] = c.ends[e];
  __syncthreads();
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const unsigned copy = static_cast<unsigned>(id % (store.t.copies ? store.t.copies : 1));
  // A fixed child grid (one block) loops; the bound is the same for all
  // threads of a block, so warps stay converged for pre-aggregation.
  for (uint64_t base = uint64_t{blockIdx.x} * blockDim.x; base < c.total; base += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t i = base + threadIdx.x;
    const bool valid = i < c.total;
    const uint32_t source = valid ? static_cast<uint32_t>(upper_bound(ends, 0, c.entries, i)) : 0;
    const uint32_t start = source ? ends[source - 1] : 0;
    const unsigned first_count = __shfl_sync(kFullWarp, valid ? ends[source] - start : 0u, 0);
    uint64_t key = 0;
    double value = 0.0;
    if (valid) {
      const uint64_t at = c.first_cell + uint64_t{source / c.width} * c.step + source % c.width;
      const uint64_t cell = in.cells ? in.cells[at] : at;
      key = in.keys[cell];
      value = in.values[cell];
    }
    add_pair<Store, P, F, Dims>(valid, key, value, i - start, first_count, map, store, copy);
  }
}

template <class Store, Preagg P, int F, int Dims>
__device__ void launch_child(const KernelInput& in, const DeviceMap& map, const Store& store, const CdpArgs& a,
                             const ChildArgs& c) {
  const unsigned blocks =
      a.fixed_child_grid ? 1u : static_cast<unsigned>((uint64_t{c.total} + kChildBlock - 1) / kChildBlock);
  const unsigned threads = a.fixed_child_grid ? kFixedChildBlock : kChildBlock;
  cdp_child<Store, P, F, Dims><<<blocks, threads, c.entries * sizeof(uint32_t), cudaStreamFireAndForget>>>(in, map, store, c);
  record_launch(a, cudaGetLastError(), blocks);
}

template <class Store, Preagg P, int F, int B, int Dims>
__global__ void __launch_bounds__(B) cdp_parent(KernelInput in, DeviceMap map, Store store, CdpArgs a, uint64_t round) {
  using Scan = cub::BlockScan<unsigned long long, B>;
  using Reduce = cub::BlockReduce<double, B>;
  __shared__ typename Scan::TempStorage scan_storage;
  __shared__ typename Reduce::TempStorage reduce_storage;
  __shared__ bool page_even;

  const uint64_t page_size = uint64_t{gridDim.x} * B;
  const uint64_t pages = (in.n + page_size - 1) / page_size;
  const uint64_t first_page = round * a.pages_per_round;
  const uint64_t end_page = first_page + a.pages_per_round < pages ? first_page + a.pages_per_round : pages;
  uint32_t* region = a.ends + uint64_t{blockIdx.x} * a.pages_per_round * B;
  const unsigned copy = static_cast<unsigned>((uint64_t{blockIdx.x} * B + threadIdx.x) %
                                              (store.t.copies ? store.t.copies : 1));

  // Pages scanned into D but not yet handed to a child (block-uniform).
  uint64_t slot = 0;             // next free page slot of the region
  uint32_t pending = 0;          // pages in the pending run
  uint64_t pending_first = 0;    // its first page
  unsigned long long pending_total = 0;
  auto hand_off = [&]() {
    if (pending == 0) return;
    __syncthreads();  // every thread's sums are in D (and were fenced)
    if (threadIdx.x == 0) {
      const ChildArgs c{region + (slot - pending) * B, pending * B, B,
                        pending_first * page_size + uint64_t{blockIdx.x} * B, page_size,
                        static_cast<uint32_t>(pending_total)};
      launch_child<Store, P, F, Dims>(in, map, store, a, c);
    }
    pending = 0;
    pending_total = 0;
  };

  for (uint64_t page = first_page; page < end_page; ++page) {
    const uint64_t i = page * page_size + uint64_t{blockIdx.x} * B + threadIdx.x;
    const bool present = i < in.n;
    uint64_t key = 0;
    double value = 0.0;
    if (present) {
      const uint64_t cell = in.cells ? in.cells[i] : i;
      key = in.keys[cell];
      value = in.values[cell];
    }
    const unsigned long long count = present ? fan_out<Dims>(map, key, value) : 0;
    unsigned long long sum, total;
    Scan(scan_storage).InclusiveSum(count, sum, total);
    if (a.hybrid) {
      const double squares = Reduce(reduce_storage).Sum(static_cast<double>(count) * static_cast<double>(count));
      if (threadIdx.x == 0) {
        // Even: variance <= mean^2, i.e. the mean of the squares <= 2 mean^2.
        // A partial last page counts only its present cells.
        const uint64_t start = page * page_size + uint64_t{blockIdx.x} * B;
        const double cells = static_cast<double>(in.n - start < B ? in.n - start : B);
        const double mean = static_cast<double>(total) / cells;
        page_even = total == 0 || !(squares / cells > 2.0 * mean * mean);
      }
      __syncthreads();
      if (page_even) {
        // A run of uneven pages ends here; this page is the parent's.
        hand_off();
        if (total) aggregate_cell<Store, P, F, Dims, false>(present, key, value, map, store, copy);
        if (threadIdx.x == 0 && total) atomicAdd(&a.stats[kDirectPages], 1ull);
        __syncthreads();  // scan and reduce storage are reused
        continue;
      }
    }
    if (total == 0) {
      __syncthreads();
      continue;
    }
    if (total > UINT_MAX || pending_total + total > UINT_MAX) {
      hand_off();
      if (total > UINT_MAX) {
        if (threadIdx.x == 0) atomicExch(&a.stats[kFanOutOverflow], 1ull);
        __syncthreads();
        continue;
      }
    }
    region[slot * B + threadIdx.x] = static_cast<uint32_t>(pending_total + sum);
    __threadfence();
    if (pending == 0) pending_first = page;
    ++pending;
    ++slot;
    pending_total += total;
    if (threadIdx.x == 0) atomicAdd(&a.stats[kHandedPages], 1ull);
    // Plain CDP launches a child per page; the hybrid merges successive
    // uneven pages (the next page may be even, or the last).
    if (!a.hybrid || pending == kMergePages || page + 1 == end_page) hand_off();
    __syncthreads();
  }
  hand_off();

  // The next round, once this grid and its children are done.
  if (round + 1 < a.rounds && blockIdx.x == 0 && threadIdx.x == 0) {
    cdp_parent<Store, P, F, B, Dims><<<gridDim.x, B, 0, cudaStreamTailLaunch>>>(in, map, store, a, round + 1);
    const cudaError_t error = cudaGetLastError();
    if (error != cudaSuccess && atomicAdd(&a.stats[kLaunchFailures], 1ull) == 0)
      a.stats[kFirstLaunchError] = static_cast<unsigned long long>(error);
  }
}

template <class Store, Preagg P, int F, int B>
void launch_parent(const LaunchShape& s, const KernelInput& in, const DeviceMap& map, const TargetTable& table,
                   const CdpArgs& a) {
  Store store{};
  store.t = table;
  if (map.dims <= kFewDims) cdp_parent<Store, P, F, B, kFewDims><<<s.grid, B, 0, s.stream>>>(in, map, store, a, 0);
  else cdp_parent<Store, P, F, B, kMaxDims><<<s.grid, B, 0, s.stream>>>(in, map, store, a, 0);
  GPUOLAP_CHECK_LAUNCH("cdp_parent");
}

template <class Store, Preagg P, int F>
void launch_block(const LaunchShape& s, const KernelInput& in, const DeviceMap& map, const TargetTable& table,
                  const CdpArgs& a) {
  switch (s.block) {
    case 128: return launch_parent<Store, P, F, 128>(s, in, map, table, a);
    case 256: return launch_parent<Store, P, F, 256>(s, in, map, table, a);
    case 512: return launch_parent<Store, P, F, 512>(s, in, map, table, a);
    default: return launch_parent<Store, P, F, 1024>(s, in, map, table, a);
  }
}

template <class Store, Preagg P>
void launch_fields(int fields, const LaunchShape& s, const KernelInput& in, const DeviceMap& map,
                   const TargetTable& table, const CdpArgs& a) {
  switch (fields) {
    case kExactFields: return launch_block<Store, P, kExactFields>(s, in, map, table, a);
    case kMinFields: return launch_block<Store, P, kMinFields>(s, in, map, table, a);
    default: return launch_block<Store, P, kMaxFields>(s, in, map, table, a);
  }
}

template <class Store>
void launch_preagg(Preagg preagg, int fields, const LaunchShape& s, const KernelInput& in, const DeviceMap& map,
                   const TargetTable& table, const CdpArgs& a) {
  switch (preagg) {
    case Preagg::none: return launch_fields<Store, Preagg::none>(fields, s, in, map, table, a);
    case Preagg::lane0: return launch_fields<Store, Preagg::lane0>(fields, s, in, map, table, a);
    case Preagg::stride: return launch_fields<Store, Preagg::stride>(fields, s, in, map, table, a);
    default: return launch_fields<Store, Preagg::match>(fields, s, in, map, table, a);
  }
}

}  // namespace

bool cdp_block_supported(int block) { return block == 128 || block == 256 || block == 512 || block == 1024; }

void launch_cdp(StoreKind store, Preagg preagg, int fields, const LaunchShape& shape, const KernelInput& input,
                const DeviceMap& map, const TargetTable& table, const CdpArgs& args) {
  if (store == StoreKind::hash) launch_preagg<HashStore>(preagg, fields, shape, input, map, table, args);
  else launch_preagg<DenseStore>(preagg, fields, shape, input, map, table, args);
}

void upload_cdp_constant_map(const void* bytes, size_t n, cudaStream_t stream) {
  GPUOLAP_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_map, bytes, n, 0, cudaMemcpyHostToDevice, stream));
}

}  // namespace gpuolap::gpu
