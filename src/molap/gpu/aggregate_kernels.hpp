#pragma once
// Host entry points of the aggregation kernels (aggregate_kernels.cu), so
// the engine's host code needs no kernel templates.
#include <cuda_runtime.h>

#include <cstdint>

#include "molap/planning/device_map.hpp"
#include "gpuolap/gpu_options.hpp"

namespace gpuolap::gpu {

struct TargetTable;
struct Cell;

// The cells a kernel over the facts visits.
struct KernelInput {
  const uint64_t* keys;
  const double* values;
  const uint32_t* cells;  // prefiltered cell indices, or nullptr for every cell
  uint64_t n;             // cells to visit
  // The thread-run kernel's page skipping (fused prefilter: cells is null):
  // when not null, the kernel visits only these pages of `page_size` cells
  // (ascending, page_size a multiple of its step), dealt evenly to its warps.
  const uint32_t* pages = nullptr;
  uint64_t page_count = 0;
  uint64_t page_size = 0;
};

struct LaunchShape {
  int grid;
  int block;
  size_t shared_bytes;  // dynamic shared memory (shared store)
  cudaStream_t stream;
  bool lean;            // map.single and at most kFewDims dimensions: the lean kernel
};

// Copies the map's arrays into constant memory (at most kConstantMapBytes).
void upload_constant_map(const void* bytes, size_t n, cudaStream_t stream);

// Launches the aggregation kernel for a store, pre-aggregation and field set.
void launch_aggregate(StoreKind store, Preagg preagg, int fields, const LaunchShape& shape,
                      const KernelInput& input, const DeviceMap& map, const TargetTable& table);

// The thread-run kernel (Preagg::run) over a lean map.
void launch_lean_run(StoreKind store, int fields, const LaunchShape& shape, const KernelInput& input,
                     const LeanMap& map, const TargetTable& table);
int lean_run_blocks_per_sm(StoreKind store, int fields, int dims, int block, size_t shared_bytes);

// Phase 2 of two-phase aggregation (hash or dense store). From phase 1's
// dense store of the class tuples (its `fields`): cells[x], the merged cell
// of tuple x (written only where it is not empty), and counts[x], its
// targets (0 when empty). Then, with ends = the inclusive prefix sums of
// counts, a grid-stride loop over the ends[n - 1] (tuple, target) pairs,
// read on the device (the host need not wait for them); when `pairs` is
// not null, the expansion writes their number there (mapped host memory:
// no copy of its own).
void launch_count_expansions(const TargetTable& tuples, int fields, const ExpandMap& map, Cell* cells,
                             uint64_t* counts, cudaStream_t stream);
void launch_expand(StoreKind store, int fields, const LaunchShape& shape, const Cell* cells, const uint64_t* ends,
                   uint64_t n, const ExpandMap& map, const TargetTable& table, uint64_t* pairs);

// The work list (work_list_kernel.cuh) over cells [offset, offset + n) of
// the input: counts[i], the fan-out of cell offset + i; then, with ends =
// the inclusive prefix sums of counts, one thread per (cell, target) pair.
void launch_count_fan_out(const KernelInput& input, uint64_t offset, uint64_t n, const DeviceMap& map,
                          uint64_t* counts, cudaStream_t stream);
void launch_work_list(StoreKind store, Preagg preagg, int fields, const LaunchShape& shape, const KernelInput& input,
                      uint64_t offset, uint64_t n, const uint64_t* ends, const DeviceMap& map,
                      const TargetTable& table);
int work_list_blocks_per_sm(StoreKind store, Preagg preagg, int fields, bool few_dims, int block,
                            size_t shared_bytes);

// Blocks of `block` threads that fit on one multiprocessor at once (few_dims:
// the map has at most kFewDims dimensions, whose kernels are built apart).
int resident_blocks_per_sm(StoreKind store, Preagg preagg, int fields, bool lean, bool few_dims, int block,
                           size_t shared_bytes);

}  // namespace gpuolap::gpu
