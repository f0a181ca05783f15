#pragma once
// The GPU form of ordered aggregation on one device: the input's columns
// (uploaded, or already on the device), the pipelines of every architecture,
// and the buffers they use, grown and kept between calls (the operator's
// own pool). ordered_gpu.cu holds the paper's architectures and the
// one-pass kernels, cub_baselines.cu the CUB baselines.
#include <array>
#include <cstdint>

#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/pinned_buffer.cuh"
#include "gpu/runtime/stage_clock.cuh"
#include "groupby/gpu/ordered_kernels.cuh"
#include "groupby/ordered_internal.hpp"

namespace gpuolap::groupby::gpu {

class OrderedRunner {
 public:
  explicit OrderedRunner(int device) : ctx_(device) {}

  // Runs `plan` over `input`, whose column pointers are host memory (then
  // uploaded, timed as "upload") or, with options.input_on_device, device
  // memory; options.download says whether the groups come back.
  OrderedResult run(const OrderedInput& input, const OrderedPlan& plan, const OrderedGpuOptions& options);

  gpuolap::gpu::DeviceContext& context() { return ctx_; }

 private:
  // The input with every pointer on the device.
  OrderedInput upload(const OrderedInput& input, gpuolap::gpu::StageClock& clock);
  // Output buffers for up to `rows` groups; fills A and key_out.
  void prepare_outputs(const OrderedInput& input, std::size_t rows, DeviceAggregates& A, DeviceGroupKeys& key_out);
  // The architectures; each leaves the group count in group_count_[0].
  void run_paper(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                 const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock);
  void run_one_pass(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                    const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock);
  void run_cub(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
               const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock);
  template <class Count>
  void run_cub_with(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                    const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock, Count n);
  OrderedResult download(const OrderedInput& input, const DeviceAggregates& A, const DeviceGroupKeys& key_out,
                         gpuolap::gpu::StageClock& clock, bool groups_too);

  gpuolap::gpu::DeviceContext ctx_;
  // Uploaded input columns: keys, then values; values and NULL flags.
  std::array<DeviceBuffer<std::uint8_t>, kMaxKeys + kMaxAggregates> in_values_, in_nulls_;
  // The prefix sums' arrays.
  DeviceBuffer<std::uint8_t> flags_;
  DeviceBuffer<std::uint32_t> pps_, ps_, chunk_total_, chunk_offset_, block_total_, block_offset_;
  DeviceBuffer<std::uint32_t> group_count_;  // [0]: groups; [1]: blocks done
  // The one-pass kernels' tile states.
  DeviceBuffer<unsigned long long> tile_status_;
  DeviceBuffer<int> tile_last_start_, tile_ready_;
  DeviceBuffer<unsigned int> next_tile_;
  // Outputs, one slot per possible group.
  std::array<DeviceBuffer<std::uint64_t>, kMaxAggregates> bits_, high_, counts_;
  std::array<DeviceBuffer<std::uint8_t>, kMaxKeys> key_values_, key_nulls_;
  // The groups come back through here, grown and kept: a copy into fresh
  // pageable memory goes through the driver's staging and faults every page
  // (15 M groups took 239 ms to come back against a 0.4 ms kernel).
  PinnedBuffer download_;
  // The last download's host time: the groups from the pinned buffer into
  // their result columns (the stage kHostColumnsStage).
  double host_columns_ms_ = 0;
};

// Calls f with the fastest key comparer that `keys` allows.
template <class F>
void with_keys(const KeySlots& keys, F&& f) {
  if (keys.count == 1 && !keys.key[0].nulls && keys.key[0].type == ValueType::Int32)
    f(OneKey<std::int32_t>{static_cast<const std::int32_t*>(keys.key[0].values)});
  else if (keys.count == 1 && !keys.key[0].nulls && keys.key[0].type == ValueType::Int64)
    f(OneKey<std::int64_t>{static_cast<const std::int64_t*>(keys.key[0].values)});
  else
    f(keys);
}

}  // namespace gpuolap::groupby::gpu
