#include "molap/gpu/cdp_rounds.cuh"

#include <algorithm>
#include <string>

#include "gpu/runtime/cuda_check.cuh"
#include "gpuolap/error.hpp"
#include "gpu/runtime/text.hpp"

namespace gpuolap::gpu {

void CdpRounds::begin_query() {
  totals_ = {};
  rounds_ = 0;
  ends_bytes_ = 0;
}

void CdpRounds::clear_counters(cudaStream_t stream) {
  stats_.reserve(kCdpStatCount);
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(stats_.data(), 0, kCdpStatCount * sizeof(unsigned long long), stream));
}

void CdpRounds::launch(StoreKind store, Preagg preagg, int fields, int grid, int block, bool hybrid,
                       ChildGrid child_grid, int sync_every, const KernelInput& in, const DeviceMap& map,
                       const TargetTable& t, cudaStream_t stream) {
  const uint64_t page_size = uint64_t{static_cast<unsigned>(grid)} * static_cast<unsigned>(block);
  const uint64_t pages = (in.n + page_size - 1) / page_size;
  sync_every_ = sync_every;
  const uint64_t per_round = sync_every_ > 0 ? std::min<uint64_t>(sync_every_, pages) : pages;
  CdpArgs a{};
  a.pages_per_round = per_round;
  a.rounds = (pages + per_round - 1) / per_round;
  rounds_ = std::max(rounds_, a.rounds);
  a.fixed_child_grid = child_grid == ChildGrid::fixed;
  a.hybrid = hybrid;
  a.stats = stats_.data();
  // D: 4 bytes per parent thread and page of a round (thesis eq. 5.1).
  ends_bytes_ = std::max(ends_bytes_, page_size * per_round * sizeof(uint32_t));
  try {
    ends_.reserve(page_size * per_round);
  } catch (const GpuOutOfMemory&) {
    // Not the target store's fault: splitting the area would not help.
    throw GpuError(text("gpu engine: D, the CDP parents' page scans, needs ", page_size * per_round * 4,
                        " bytes of device memory; --sync-every k bounds it to grid x block x k x 4 bytes"));
  }
  a.ends = ends_.data();
  // Each block launches at most one child per page of a round, and the
  // round one tail launch: reserve that many pending launches.
  reserve_pending_launches(static_cast<size_t>(grid) * per_round + 2, grid, per_round, stream);
  launch_cdp(store, preagg, fields, LaunchShape{grid, block, 0, stream, false}, in, map, t, a);
}

void CdpRounds::reserve_pending_launches(size_t needed, int grid, uint64_t per_round, cudaStream_t stream) {
  // The limit is the device's, not this engine's: another engine may have
  // set it lower since.
  GPUOLAP_CUDA_CHECK(cudaDeviceGetLimit(&pending_limit_, cudaLimitDevRuntimePendingLaunchCount));
  if (needed <= pending_limit_) return;
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream));
  size_t free_before = 0, total = 0;
  GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
  const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, needed);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw GpuError(text("gpu engine: reserving ", needed, " pending child launches failed (", cudaGetErrorString(e),
                        "); --sync-every k bounds them to grid x k"));
  }
  // The runtime may grant fewer than asked for (an H200 with CUDA 13
  // granted 599,186 of 1.1 million), and launches past them fail.
  size_t granted = 0;
  GPUOLAP_CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitDevRuntimePendingLaunchCount));
  if (granted < needed)
    throw InputError(text("gpu engine: the CDP kernel may have ", needed, " child launches pending (", grid,
                          " parent blocks x ", per_round, " pages); this GPU's device runtime allows ", granted,
                          "; use --sync-every ", std::max<size_t>(1, (granted - 2) / grid), " or less"));
  pending_limit_ = needed;
  free_before_limit_ = free_before;
  pool_measured_ = false;
}

void CdpRounds::collect(cudaStream_t stream) {
  const std::vector<unsigned long long> s = stats_.download(kCdpStatCount, stream);
  for (int i = 0; i < kCdpStatCount; ++i) totals_.at[i] += s[i];
  if (!pool_measured_) {
    size_t free_now = 0, total = 0;
    GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free_now, &total));
    pending_pool_bytes_ = static_cast<int64_t>(free_before_limit_) - static_cast<int64_t>(free_now);
    pool_measured_ = true;
  }
  if (s[kLaunchFailures] > 0)
    throw GpuError(text("gpu engine: ", s[kLaunchFailures], " device-side kernel launches failed, the first with ",
                        cudaGetErrorName(static_cast<cudaError_t>(s[kFirstLaunchError])), " (",
                        cudaGetErrorString(static_cast<cudaError_t>(s[kFirstLaunchError])), ")"));
  if (s[kFanOutOverflow] > 0)
    throw InputError("gpu engine: a parent page's cells reach more than 2^32 - 1 targets, more than the CDP kernel's "
                     "4-byte counts hold; use --kernel work-list");
}

}  // namespace gpuolap::gpu
