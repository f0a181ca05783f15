#pragma once
// Host entry points of the CUDA Dynamic Parallelism kernels (thesis §4.3),
// compiled apart (cdp_kernels.cu: relocatable device code linked with the
// device runtime), so the rest of the engine stays whole-program code.
#include <cuda_runtime.h>

#include <cstdint>

#include "aggregate_kernels.hpp"

namespace gpuolap::gpu {

// What the parent grid records (device counters, read after the query).
enum CdpStat : int {
  kChildKernels,      // child grids launched (thesis table 5.7)
  kChildBlocks,       // their blocks
  kDirectPages,       // hybrid: block pages the parent aggregated itself
  kHandedPages,       // pages whose targets children wrote
  kLaunchFailures,    // device-side launches that failed (child or tail)
  kFirstLaunchError,  // the cudaError_t of the first failure
  kFanOutOverflow,    // a page's pairs passed 2^32 - 1 (the thesis' 4-byte counts)
  kCdpStatCount,
};

// Children merged into one launch by the hybrid at most (successive pages
// of a parent block that all hand off): their scans share the child's
// shared memory, 4 bytes per parent thread and page.
constexpr int kMergePages = 8;
// Threads per child block: a dynamic child grid has ceil(pairs / 256)
// blocks; a fixed one is one block of 1024 that loops (thesis §5.5.1).
constexpr int kChildBlock = 256;
constexpr int kFixedChildBlock = 1024;

struct CdpArgs {
  // D of the thesis: per parent block, pages_per_round pages of blockDim.x
  // uint32 inclusive prefix sums of the page's fan-outs.
  uint32_t* ends;
  // Pages a block handles per parent grid. With explicit synchronisation
  // every k pages (--sync-every k), the grid then tail-launches the next
  // round, which the device runtime starts only after this grid and all its
  // children are done, so the next round may reuse D; otherwise all pages.
  uint64_t pages_per_round;
  uint64_t rounds;
  bool fixed_child_grid;
  bool hybrid;  // per page: write directly when the fan-outs are even, else hand off
  unsigned long long* stats;  // kCdpStatCount counters
};

// Parent block sizes with a compiled CUB block scan.
bool cdp_block_supported(int block);

// Launches the first round of the parent grid (shape.grid x shape.block)
// for a hash or dense store, pre-aggregation none, lane0, stride or match.
void launch_cdp(StoreKind store, Preagg preagg, int fields, const LaunchShape& shape, const KernelInput& input,
                const DeviceMap& map, const TargetTable& table, const CdpArgs& args);

// The CDP program's own copy of the constant map (see aggregate_kernel.cuh).
void upload_cdp_constant_map(const void* bytes, size_t n, cudaStream_t stream);

}  // namespace gpuolap::gpu
