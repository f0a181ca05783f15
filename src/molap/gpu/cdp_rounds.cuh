#pragma once
// The CDP kernels' host side (thesis §4.3): each parent grid's rounds of
// pages, D (the parents' page scans), the device runtime's pending-launch
// limit and the memory it takes (thesis fig. 5.5), and the counters the
// parents record, summed over a query's inputs and windows.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/runtime/device_buffer.cuh"
#include "gpuolap/gpu_options.hpp"
#include "molap/gpu/cdp_kernels.hpp"

namespace gpuolap::gpu {

class CdpRounds {
 public:
  // A new query: its counters start at zero.
  void begin_query();
  // Clears the device counters before an attempt's kernels.
  void clear_counters(cudaStream_t stream);
  // The parent grid over one input: `sync_every` pages a round (0: all).
  void launch(StoreKind store, Preagg preagg, int fields, int grid, int block, bool hybrid, ChildGrid child_grid,
              int sync_every, const KernelInput& in, const DeviceMap& map, const TargetTable& t, cudaStream_t stream);
  // Adds the attempt's device counters to the query's; throws on a failed
  // launch or a page whose pairs overflow the kernel's 4-byte counts.
  void collect(cudaStream_t stream);
  // The query's counters, saved before an attempt and put back when it is retried.
  struct Totals {
    unsigned long long at[kCdpStatCount] = {};
  };
  const Totals& totals() const { return totals_; }
  void restore(const Totals& t) { totals_ = t; }
  void release() { ends_ = {}; }

  int sync_every() const { return sync_every_; }      // of the last launch (0: none)
  uint64_t rounds() const { return rounds_; }         // parent grids of the query (1 + tail launches)
  uint64_t ends_bytes() const { return ends_bytes_; }  // D of the query (thesis eq. 5.1)
  uint64_t pending_limit() const { return pending_limit_; }
  int64_t pending_pool_bytes() const { return pending_pool_bytes_; }  // -1: not measured

 private:
  // Reserves `needed` pending launches, measuring the memory the runtime takes.
  void reserve_pending_launches(size_t needed, int grid, uint64_t per_round, cudaStream_t stream);

  DeviceBuffer<uint32_t> ends_;
  DeviceBuffer<unsigned long long> stats_;
  Totals totals_;
  uint64_t ends_bytes_ = 0;
  uint64_t rounds_ = 0;
  size_t pending_limit_ = 0;  // the device's pending-launch limit at the last launch
  // Device memory the runtime took for pending launches: free memory before
  // the limit was set, less after the first query that launched under it
  // (CUDA 13 reserves nothing at cudaDeviceSetLimit).
  size_t free_before_limit_ = 0;
  bool pool_measured_ = true;
  int64_t pending_pool_bytes_ = -1;
  int sync_every_ = 0;
};

}  // namespace gpuolap::gpu
