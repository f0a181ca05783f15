// The GPU form of ordered aggregation: upload, the architectures' kernel
// sequences, and the download; and the operator's entry point.
#include <cub/cub.cuh>

#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "gpu/runtime/cuda_check.cuh"
#include "gpuolap/error.hpp"
#include "groupby/gpu/ordered_runner.cuh"
#include "groupby/gpu/block_cooperative.cuh"
#include "groupby/gpu/one_pass_kernels.cuh"

namespace gpuolap::groupby {
namespace gpu {
namespace {

unsigned grid_for(std::size_t items, int block) {
  return static_cast<unsigned>(std::max<std::size_t>(1, (items + block - 1) / block));
}

}  // namespace

OrderedInput OrderedRunner::upload(const OrderedInput& input, gpuolap::gpu::StageClock& clock) {
  OrderedInput d = input;
  clock.start("upload");
  const cudaStream_t s = ctx_.stream();
  auto put = [&](ColumnView& c, std::size_t slot) {
    const std::size_t bytes = input.rows * value_bytes(c.type);
    in_values_[slot].upload(static_cast<const std::uint8_t*>(c.values), bytes, s);
    c.values = in_values_[slot].data();
    if (c.nulls) {
      in_nulls_[slot].upload(c.nulls, input.rows, s);
      c.nulls = in_nulls_[slot].data();
    }
  };
  for (std::size_t k = 0; k < d.keys.size(); ++k) put(d.keys[k], k);
  for (std::size_t v = 0; v < d.values.size(); ++v) put(d.values[v], kMaxKeys + v);
  clock.stop();
  return d;
}

void OrderedRunner::prepare_outputs(const OrderedInput& input, std::size_t rows, DeviceAggregates& A,
                                    DeviceGroupKeys& key_out) {
  const auto slots = aggregate_slots(input);
  A.count = static_cast<int>(slots.size());
  const std::size_t n = std::max<std::size_t>(rows, 1);
  for (std::size_t a = 0; a < slots.size(); ++a) {
    A.slot[a] = slots[a];
    bits_[a].reserve(n);
    A.bits[a] = bits_[a].data();
    A.high[a] = nullptr;
    A.counts[a] = nullptr;
    if (integer_sum(slots[a])) {
      high_[a].reserve(n);
      A.high[a] = high_[a].data();
    }
    if (slots[a].keeps_count) {
      counts_[a].reserve(n);
      A.counts[a] = counts_[a].data();
    }
  }
  for (std::size_t k = 0; k < input.keys.size(); ++k) {
    key_values_[k].reserve(n * value_bytes(input.keys[k].type));
    key_out.values[k] = key_values_[k].data();
    key_out.nulls[k] = nullptr;
    if (input.keys[k].nulls) {
      key_nulls_[k].reserve(n);
      key_out.nulls[k] = key_nulls_[k].data();
    }
  }
  group_count_.reserve(2);
}

void OrderedRunner::run_paper(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                              const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock) {
  const cudaStream_t s = ctx_.stream();
  const std::size_t n = input.rows;
  const int local = plan.local_size, intent = plan.intent;
  const std::size_t chunks = (n + intent - 1) / intent;
  const unsigned chunk_grid = grid_for(chunks, local);
  const KeySlots key_slots = groupby::key_slots(input);
  pps_.reserve(n);
  chunk_offset_.reserve(chunks);
  std::uint32_t* groups = group_count_.data();

  PpsIds pps_ids{pps_.data(), chunk_offset_.data(), nullptr, static_cast<std::size_t>(local)};
  if (plan.architecture == Architecture::FiveKernel) {
    flags_.reserve(n);
    chunk_total_.reserve(chunks);
    with_keys(key_slots, [&](auto keys) {
      clock.start("1 map");
      map_flags<<<grid_for(n, local), local, 0, s>>>(keys, n, flags_.data());
      GPUOLAP_CHECK_LAUNCH("map_flags");
      clock.stop();
    });
    clock.start("2 partial prefix sum");
    partial_prefix<<<chunk_grid, local, 0, s>>>(flags_.data(), n, intent, chunks, pps_.data(), chunk_total_.data());
    GPUOLAP_CHECK_LAUNCH("partial_prefix");
    clock.stop();
    // Offsets: the exclusive scan of the chunks' totals (CUB's single-pass
    // scan), and the group count after the last chunk.
    clock.start("3 offsets");
    std::size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, chunk_total_.data(), chunk_offset_.data(), chunks, s));
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ctx_.scratch(bytes), bytes, chunk_total_.data(),
                                                     chunk_offset_.data(), chunks, s));
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, bytes, chunk_total_.data(), groups, chunks, s));
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::Sum(ctx_.scratch(bytes), bytes, chunk_total_.data(), groups, chunks, s));
    clock.stop();
  } else {
    block_total_.reserve(chunk_grid);
    block_offset_.reserve(chunk_grid);
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(groups, 0, 2 * sizeof(std::uint32_t), s));
    with_keys(key_slots, [&](auto keys) {
      clock.start("1 partial prefix sum + offsets");
      fused_prefix<<<chunk_grid, local, 0, s>>>(keys, n, intent, chunks, pps_.data(), chunk_offset_.data(),
                                                block_total_.data(), block_offset_.data(),
                                                reinterpret_cast<unsigned int*>(groups + 1), groups);
      GPUOLAP_CHECK_LAUNCH("fused_prefix");
      clock.stop();
    });
    pps_ids.block_offset = block_offset_.data();
  }

  auto aggregate = [&](auto ids, const char* stage) {
    const unsigned grid = plan.variant == Variant::DirectAtomics ? grid_for(n, local) : chunk_grid;
    clock.start("init");
    init_groups<<<std::min<unsigned>(grid_for(n, 256), 65535u), 256, 0, s>>>(A, groups);
    GPUOLAP_CHECK_LAUNCH("init_groups");
    clock.stop();
    clock.start(stage);
    switch (plan.variant) {
      case Variant::DirectAtomics:
        aggregate_kernel<Variant::DirectAtomics><<<grid, local, 0, s>>>(A, key_slots, key_out, ids, n, intent);
        break;
      case Variant::ChunkedAtomics:
        aggregate_kernel<Variant::ChunkedAtomics><<<grid, local, 0, s>>>(A, key_slots, key_out, ids, n, intent);
        break;
      case Variant::PrivateVariable:
        aggregate_kernel<Variant::PrivateVariable><<<grid, local, 0, s>>>(A, key_slots, key_out, ids, n, intent);
        break;
      case Variant::PrivateArray:
        aggregate_kernel<Variant::PrivateArray><<<grid, local, 0, s>>>(A, key_slots, key_out, ids, n, intent);
        break;
    }
    GPUOLAP_CHECK_LAUNCH("aggregate_kernel");
    clock.stop();
  };

  if (plan.architecture == Architecture::TwoKernel) {
    aggregate(pps_ids, "2 offset addition + aggregation");
    return;
  }
  ps_.reserve(n);
  const bool five = plan.architecture == Architecture::FiveKernel;
  clock.start(five ? "4 offset addition" : "2 offset addition");
  add_offsets<<<chunk_grid, local, 0, s>>>(pps_ids, n, intent, chunks, ps_.data());
  GPUOLAP_CHECK_LAUNCH("add_offsets");
  clock.stop();
  aggregate(PsIds{ps_.data()}, five ? "5 aggregation" : "3 aggregation");
}

void OrderedRunner::run_one_pass(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                                 const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock) {
  const cudaStream_t s = ctx_.stream();
  const std::size_t n = input.rows;
  const int local = plan.local_size, intent = plan.intent;
  const std::size_t tiles = std::max<std::size_t>(1, (n + static_cast<std::size_t>(local) * intent - 1) / (static_cast<std::size_t>(local) * intent));
  tile_status_.reserve(tiles);
  tile_last_start_.reserve(tiles);
  tile_ready_.reserve(tiles);
  next_tile_.reserve(1);
  clock.start("tile states");
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(tile_status_.data(), 0, tiles * sizeof(unsigned long long), s));
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(tile_ready_.data(), 0, tiles * sizeof(int), s));
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(next_tile_.data(), 0, sizeof(unsigned int), s));
  GPUOLAP_CUDA_CHECK(cudaMemsetAsync(group_count_.data(), 0, sizeof(std::uint32_t), s));
  clock.stop();
  TileState ts{tile_status_.data(), tile_last_start_.data(), tile_ready_.data(), next_tile_.data(), group_count_.data()};
  const KeySlots key_slots = groupby::key_slots(input);
  const unsigned grid = static_cast<unsigned>(tiles);
  with_keys(key_slots, [&](auto keys) {
    if (plan.architecture == Architecture::BlockCooperative) {
      clock.start("block-cooperative");
      // Instantiated for 1, 2, 4 and 8 aggregates: registers for what is used.
      if (A.count == 1) block_cooperative<1><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
      else if (A.count == 2) block_cooperative<2><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
      else if (A.count <= 4) block_cooperative<4><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
      else block_cooperative<8><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
      GPUOLAP_CHECK_LAUNCH("block_cooperative");
      clock.stop();
      return;
    }
    clock.start("1-kernel");
    switch (plan.variant) {
      case Variant::DirectAtomics:
        one_kernel<Variant::DirectAtomics><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
        break;
      case Variant::ChunkedAtomics:
        one_kernel<Variant::ChunkedAtomics><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
        break;
      case Variant::PrivateVariable:
        one_kernel<Variant::PrivateVariable><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
        break;
      case Variant::PrivateArray:
        one_kernel<Variant::PrivateArray><<<grid, local, 0, s>>>(keys, n, intent, A, key_slots, key_out, ts);
        break;
    }
    GPUOLAP_CHECK_LAUNCH("one_kernel");
    clock.stop();
  });
}

OrderedResult OrderedRunner::download(const OrderedInput& input, const DeviceAggregates& A,
                                      const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock,
                                      bool groups_too) {
  const cudaStream_t s = ctx_.stream();
  OrderedResult result;
  result.groups = input.rows == 0 ? 0 : group_count_.download(1, s)[0];
  if (!groups_too) return result;
  const std::size_t G = result.groups;
  clock.start("download");
  // Every array into one pinned buffer, each at a 256-byte boundary.
  struct Piece {
    const void* from;
    std::size_t bytes;
    std::size_t at = 0;
  };
  std::vector<Piece> pieces;
  const auto piece = [&](const void* from, std::size_t bytes) {
    pieces.push_back({from, from ? bytes : 0});
    return pieces.size() - 1;
  };
  std::vector<std::size_t> key_piece, null_piece, bits_piece, high_piece, count_piece;
  for (std::size_t k = 0; k < input.keys.size(); ++k) {
    key_piece.push_back(piece(key_out.values[k], G * value_bytes(input.keys[k].type)));
    null_piece.push_back(piece(key_out.nulls[k], G));
  }
  for (int a = 0; a < A.count; ++a) {
    bits_piece.push_back(piece(A.bits[a], G * sizeof(std::uint64_t)));
    high_piece.push_back(piece(A.high[a], G * sizeof(std::uint64_t)));
    count_piece.push_back(piece(A.counts[a], G * sizeof(std::uint64_t)));
  }
  std::size_t total = 0;
  for (Piece& p : pieces) {
    p.at = total;
    total += (p.bytes + 255) / 256 * 256;
  }
  download_.reserve(std::max<std::size_t>(total, 1));
  auto* base = static_cast<std::uint8_t*>(download_.data());
  for (const Piece& p : pieces)
    if (p.bytes) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(base + p.at, p.from, p.bytes, cudaMemcpyDeviceToHost, s));
  clock.stop();
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
  const auto columns_start = std::chrono::steady_clock::now();
  const auto at = [&](std::size_t i) -> const void* { return pieces[i].bytes ? base + pieces[i].at : nullptr; };
  const auto words = [&](std::size_t i) { return static_cast<const std::uint64_t*>(at(i)); };
  for (std::size_t k = 0; k < input.keys.size(); ++k)
    result.keys.push_back(key_result(input.keys[k].type, G, at(key_piece[k]),
                                     static_cast<const std::uint8_t*>(at(null_piece[k]))));
  for (int a = 0; a < A.count; ++a)
    result.aggregates.push_back(
        finish_aggregate(input, a, A.slot[a], G, words(bits_piece[a]), words(high_piece[a]), words(count_piece[a])));
  host_columns_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - columns_start).count();
  return result;
}

OrderedResult OrderedRunner::run(const OrderedInput& host_input, const OrderedPlan& plan,
                                 const OrderedGpuOptions& options) {
  ctx_.bind();
  gpuolap::gpu::StageClock clock(ctx_.stream(), ctx_.events(), options.timing);
  const OrderedInput input = options.input_on_device ? host_input : upload(host_input, clock);
  DeviceAggregates A;
  DeviceGroupKeys key_out;
  prepare_outputs(input, input.rows, A, key_out);
  if (input.rows > 0) {
    switch (plan.architecture) {
      case Architecture::FiveKernel:
      case Architecture::ThreeKernel:
      case Architecture::TwoKernel:
        run_paper(input, plan, A, key_out, clock);
        break;
      case Architecture::OneKernel:
      case Architecture::BlockCooperative:
        run_one_pass(input, plan, A, key_out, clock);
        break;
      case Architecture::CubReduceByKey:
      case Architecture::CubRunLength:
        run_cub(input, plan, A, key_out, clock);
        break;
    }
  }
  OrderedResult result = download(input, A, key_out, clock, options.download);
  if (options.timing) {
    result.stage_ms = clock.read();
    if (options.download) result.stage_ms.emplace_back(std::string(kHostColumnsStage), host_columns_ms_);
  }
  return result;
}

}  // namespace gpu

struct OrderedResidentColumns::Buffers {
  std::array<gpuolap::DeviceBuffer<std::uint8_t>, kMaxKeys + kMaxAggregates> values, nulls;
};

OrderedResidentColumns::OrderedResidentColumns(const OrderedInput& host_input, int device)
    : buffers_(std::make_unique<Buffers>()), input_(host_input) {
  check_input(host_input);
  if (!gpu_available()) throw std::runtime_error("no NVIDIA GPU is available to keep the columns on");
  if (device < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  GPUOLAP_CUDA_CHECK(cudaSetDevice(device));
  device_ = device;
  auto put = [&](ColumnView& c, std::size_t slot) {
    buffers_->values[slot].upload(static_cast<const std::uint8_t*>(c.values), input_.rows * value_bytes(c.type));
    c.values = buffers_->values[slot].data();
    if (c.nulls) {
      buffers_->nulls[slot].upload(c.nulls, input_.rows);
      c.nulls = buffers_->nulls[slot].data();
    }
  };
  try {
    for (std::size_t k = 0; k < input_.keys.size(); ++k) put(input_.keys[k], k);
    for (std::size_t v = 0; v < input_.values.size(); ++v) put(input_.values[v], kMaxKeys + v);
    GPUOLAP_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const GpuOutOfMemory& e) {
    throw InputError(std::to_string(input_.rows) + " rows of " + std::to_string(input_.keys.size() + input_.values.size()) +
                     " columns do not fit in GPU " + std::to_string(device) + "'s memory (" + e.what() + ")");
  }
}
OrderedResidentColumns::~OrderedResidentColumns() = default;

bool gpu_available() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

OrderedResult aggregate_gpu(const OrderedInput& input, const OrderedPlan& plan, const OrderedGpuOptions& options) {
  check_input(input);
  check_plan(input, plan);
  if (!gpu_available()) throw std::runtime_error("no NVIDIA GPU is available for ordered aggregation");
  // One runner per device, kept for its buffers; one call at a time each.
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<gpu::OrderedRunner>> runners;
  std::lock_guard lock(mutex);
  int device = options.device;
  if (device < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  auto& runner = runners[device];
  if (!runner) runner = std::make_unique<gpu::OrderedRunner>(device);
  try {
    return runner->run(input, plan, options);
  } catch (const GpuOutOfMemory& e) {
    // Its buffers hold one slot per row for every aggregate: what does not
    // fit is said as such, and the runner gives back what it held.
    runner.reset();
    throw InputError(std::to_string(input.rows) + " rows with " + std::to_string(input.aggregates.size()) +
                     " aggregate(s) do not fit in GPU " + std::to_string(device) + "'s memory (" + e.what() +
                     "); --engine cpu-parallel runs in host memory");
  }
}

}  // namespace gpuolap::groupby
