// The GPU form of the shared-memory operators: the variants' launches, the
// shared memory they need, CUB's sort + reduce-by-key, and the entry
// points. One runner per device keeps its buffers between calls.
#include <cub/cub.cuh>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string_view>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/device_info.hpp"
#include "gpu/runtime/gpu_error.hpp"
#include "gpu/runtime/text.hpp"
#include "gpuolap/error.hpp"
#include "groupby/shared_memory/gpu/shared_kernels.cuh"
#include "groupby/shared_memory/shared_aggregation.hpp"

namespace gpuolap::groupby {

using ::gpuolap::gpu::text;

namespace shared_gpu {
namespace {

// A group's aggregates as CUB's reduce-by-key carries them.
template <typename Sum>
struct Partial {
  unsigned long long count;
  Sum sum;
  unsigned long long lo, hi;
};
template <typename V>
struct ToPartial {
  using Sum = typename SumOf<V>::type;
  __device__ Partial<Sum> operator()(V x) const {
    const unsigned long long k = order_key(x);
    return {1ull, SumOf<V>::of(x), k, k};
  }
};
struct Combine {
  template <typename P>
  __device__ P operator()(const P& a, const P& b) const {
    return {a.count + b.count, a.sum + b.sum, a.lo < b.lo ? a.lo : b.lo, a.hi > b.hi ? a.hi : b.hi};
  }
};
template <typename Sum>
__global__ void scatter_partials(const std::uint32_t* keys, const Partial<Sum>* parts, const int* runs,
                                 unsigned long long* count, Sum* sum, unsigned long long* lo, unsigned long long* hi) {
  const int n = *runs;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    const std::uint32_t g = keys[i];
    count[g] = parts[i].count;
    sum[g] = parts[i].sum;
    lo[g] = parts[i].lo;
    hi[g] = parts[i].hi;
  }
}
__global__ void scatter_counts(const std::uint32_t* keys, const int* lengths, const int* runs,
                               unsigned long long* count) {
  const int n = *runs;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    count[keys[i]] = static_cast<unsigned long long>(lengths[i]);
}

// The plan's line: what ran, with what copies, in what launch.
std::string plan_text(SharedVariant v, const std::string& copies, unsigned blocks, int threads, bool auto_threads,
                      const LaunchShape& shape, std::size_t smem) {
  return text(shared_variant_name(v), ": ", copies, "; ", blocks, " blocks of ", threads, " threads",
                              auto_threads ? " (auto)" : "", ", ", shape.rows_per_block, " rows a block; ", smem,
                              " bytes of shared memory a block");
}

int bits_for(std::uint32_t values) {
  int b = 1;
  while (b < 32 && (std::uint64_t{1} << b) < values) ++b;
  return b;
}

std::uint32_t round_up(std::uint32_t n, std::uint32_t k) { return (n + k - 1) / k * k; }

class Runner {
 public:
  explicit Runner(int device) : ctx_(device) {}

  GroupedResult grouped(const GroupedInput& in, const SharedGpuOptions& o) {
    ctx_.bind();
    const cudaStream_t s = ctx_.stream();
    gpuolap::gpu::StageClock clock(s, ctx_.events(), o.timing);
    const std::size_t value_bytes = in.value_type == SharedValueType::Double ? 8 : 4;
    GroupedArgs a{};
    a.rows = in.rows;
    a.rows_per_block = o.shape.rows_per_block;
    a.codes = in.codes;
    a.values = in.values;
    if (!o.input_on_device && in.rows > 0) {
      clock.start("upload");
      codes_.upload(reinterpret_cast<const std::uint8_t*>(in.codes), 4 * in.rows, s);
      a.codes = reinterpret_cast<const std::uint32_t*>(codes_.data());
      if (in.values) {
        values_.upload(static_cast<const std::uint8_t*>(in.values), value_bytes * in.rows, s);
        a.values = values_.data();
      }
      clock.stop();
    }
    const std::uint32_t c = in.groups;
    a.groups = c;
    count_.reserve(c), sum_.reserve(c), lo_.reserve(c), hi_.reserve(c);
    a.count = count_.data();
    a.sum = sum_.data();
    a.min_key = lo_.data();
    a.max_key = hi_.data();
    clock.start("clear");
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(count_.data(), 0, 8 * c, s));
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(sum_.data(), 0, 8 * c, s));
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(lo_.data(), 0xFF, 8 * c, s));
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(hi_.data(), 0, 8 * c, s));
    clock.stop();

    GroupedResult r;
    r.value_type = in.value_type;
    const std::size_t slot_bytes = 4 + (in.values ? 8 : 0) + (in.min_max ? 16 : 0);
    a.copies = 1;
    a.stride = c;
    unsigned replicas = 1;
    std::string copies_text = "1 copy";
    switch (o.variant) {
      case SharedVariant::NaiveReplicas: {
        a.stride = round_up(c, 32) + 1;
        a.copies = naive_copies(o, slot_bytes * a.stride);
        copies_text = text(a.copies, " copies, lane l uses copy l mod ", a.copies);
        a.slots = slots_of(std::uint64_t{a.copies} * a.stride, slot_bytes, o.variant);
        break;
      }
      case SharedVariant::Placement:
        slot_value_.upload(in.placement->slot_value, s);
        a.slot_value = slot_value_.data();
        a.slots = static_cast<std::uint32_t>(in.placement->slot_value.size());
        copies_text = text(a.slots, " slots from the placement (", std::round(100.0 * a.slots / c) / 100, " copies a value)");
        break;
      case SharedVariant::TargetStore: {
        // A replica per warp of the widest block, as many as fit.
        const std::size_t fit = max_shared() / (slot_bytes * c);
        replicas = static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(32, fit)));
        a.slots = replicas * c;
        copies_text = text(replicas, " replicas, warp w uses replica w mod ", replicas,
                           "; warps pre-aggregate by __match_any_sync");
        break;
      }
      default:
        a.slots = c;
        break;
    }
    const bool shared = o.variant != SharedVariant::GlobalAtomics && o.variant != SharedVariant::SortReduce;
    const std::size_t smem = shared ? slot_bytes * a.slots : 0;
    if (shared) need_shared(smem, o.variant);
    const unsigned blocks = grid(in.rows, o.shape);
    const int threads = block_threads(o.shape, smem);
    r.plan = plan_text(o.variant, copies_text, blocks, threads, o.shape.block_threads == 0, o.shape, smem);
    if (in.rows > 0) {
      if (o.variant == SharedVariant::SortReduce) {
        sort_reduce(in, a, clock);
      } else if (o.variant == SharedVariant::TargetStore) {
        clock.start("kernel");
        launch_target_store(in, a, replicas, blocks, threads, smem);
        clock.stop();
      } else {
        clock.start("kernel");
        launch_grouped(in, o.variant, a, blocks, threads, smem);
        clock.stop();
      }
    }
    clock.start("download");
    const auto counts = count_.download(c, s);
    r.count.assign(counts.begin(), counts.end());
    if (in.values) {
      const auto sums = sum_.download(c, s);
      if (in.value_type == SharedValueType::Double) {
        r.sum_doubles.resize(c);
        std::memcpy(r.sum_doubles.data(), sums.data(), 8 * c);
      } else {
        r.sum_ints.assign(sums.begin(), sums.end());
      }
      if (in.min_max) {
        const auto lo = lo_.download(c, s), hi = hi_.download(c, s);
        for (std::uint32_t g = 0; g < c; ++g) {
          if (in.value_type == SharedValueType::Double) {
            r.min_doubles.push_back(double_of_order_bits(lo[g]));
            r.max_doubles.push_back(double_of_order_bits(hi[g]));
          } else {
            r.min_ints.push_back(int_of_order_bits(lo[g]));
            r.max_ints.push_back(int_of_order_bits(hi[g]));
          }
        }
      }
    }
    clock.stop();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    r.stage_ms = clock.read();
    return r;
  }

  JoinResult join(const JoinInput& in, const SharedGpuOptions& o) {
    ctx_.bind();
    const cudaStream_t s = ctx_.stream();
    gpuolap::gpu::StageClock clock(s, ctx_.events(), o.timing);
    const std::size_t value_bytes = in.value_type == SharedValueType::Double ? 8 : 4;
    JoinArgs a{};
    a.rows = in.rows;
    a.rows_per_block = o.shape.rows_per_block;
    a.keys = in.keys;
    a.dim_rows = in.dim_rows;
    if (!o.input_on_device && in.rows > 0) {
      clock.start("upload");
      codes_.upload(reinterpret_cast<const std::uint8_t*>(in.keys), 4 * in.rows, s);
      a.keys = reinterpret_cast<const std::uint32_t*>(codes_.data());
      clock.stop();
    }
    dim_.upload(static_cast<const std::uint8_t*>(in.dim_values), value_bytes * in.dim_rows, s);
    a.dim = dim_.data();
    count_.reserve(1), sum_.reserve(1);
    a.matched = count_.data();
    a.sum = sum_.data();
    clock.start("clear");
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(count_.data(), 0, 8, s));
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(sum_.data(), 0, 8, s));
    clock.stop();
    a.copies = 1;
    a.stride = in.dim_rows;
    std::string copies_text = "1 copy";
    switch (o.variant) {
      case SharedVariant::GlobalAtomics:
        a.slots = 0;
        copies_text = "the column read from global memory";
        break;
      case SharedVariant::NaiveReplicas: {
        a.stride = round_up(in.dim_rows, 32) + 1;
        a.copies = naive_copies(o, value_bytes * a.stride);
        a.slots = slots_of(std::uint64_t{a.copies} * a.stride, value_bytes, o.variant);
        copies_text = text(a.copies, " copies, lane l uses copy l mod ", a.copies);
        break;
      }
      case SharedVariant::Placement:
        slot_value_.upload(in.placement->slot_value, s);
        a.slot_value = slot_value_.data();
        a.slots = static_cast<std::uint32_t>(in.placement->slot_value.size());
        a.keys_are_slots = true;
        copies_text = text(a.slots, " slots from the placement");
        break;
      default:
        a.slots = in.dim_rows;
        break;
    }
    const std::size_t smem = value_bytes * a.slots;
    // The kernel's own 512 bytes of static shared memory (the block's sum).
    if (smem) need_shared(smem + 512, o.variant);
    const unsigned blocks = grid(in.rows, o.shape);
    const int threads = block_threads(o.shape, smem);
    JoinResult r;
    r.value_type = in.value_type;
    r.plan = plan_text(o.variant, copies_text, blocks, threads, o.shape.block_threads == 0, o.shape, smem);
    if (in.rows > 0) {
      clock.start("kernel");
      if (in.value_type == SharedValueType::Double) launch(join_kernel<double>, blocks, threads, smem, a);
      else launch(join_kernel<std::int32_t>, blocks, threads, smem, a);
      clock.stop();
    }
    clock.start("download");
    const auto matched = count_.download(1, s);
    const auto sum = sum_.download(1, s);
    clock.stop();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    r.matched = static_cast<std::int64_t>(matched[0]);
    if (in.value_type == SharedValueType::Double) std::memcpy(&r.sum_double, sum.data(), 8);
    else r.sum_int = static_cast<std::int64_t>(sum[0]);
    r.stage_ms = clock.read();
    return r;
  }

 private:
  std::size_t max_shared() const { return static_cast<std::size_t>(ctx_.props().sharedMemPerBlockOptin); }

  // Naive replication's copies: the options' (1..32), else as many as fit,
  // at most 32 and at least 1 (need_shared then refuses one that does not).
  std::uint32_t naive_copies(const SharedGpuOptions& o, std::size_t copy_bytes) const {
    if (o.copies < 0 || o.copies > 32)
      throw InputError(text("naive replicas take 1 to 32 copies (0: as many as fit), not ", o.copies));
    if (o.copies > 0) return static_cast<std::uint32_t>(o.copies);
    return static_cast<std::uint32_t>(std::clamp<std::size_t>(max_shared() / copy_bytes, 1, 32));
  }
  // Slots that shared memory must hold, refused by name when they do not fit.
  std::uint32_t slots_of(std::uint64_t slots, std::size_t slot_bytes, SharedVariant v) const {
    need_shared(slots * slot_bytes, v);
    return static_cast<std::uint32_t>(slots);
  }

  void need_shared(std::uint64_t bytes, SharedVariant v) const {
    if (bytes > max_shared())
      throw InputError(text("variant ", shared_variant_name(v), " needs ", bytes, " bytes of shared memory a block; GPU ",
                            ctx_.device(), " gives at most ", max_shared(),
                            " (fewer copies, a smaller --budget, or global-atomics / sort-reduce)"));
  }

  int block_threads(const LaunchShape& shape, std::size_t smem) const {
    if (shape.block_threads) return shape.block_threads;
    return auto_block_threads(smem, static_cast<std::size_t>(ctx_.props().sharedMemPerMultiprocessor));
  }

  static unsigned grid(std::size_t rows, const LaunchShape& shape) {
    return static_cast<unsigned>(std::max<std::size_t>(1, (rows + shape.rows_per_block - 1) / shape.rows_per_block));
  }


  template <typename V, bool MinMax>
  void launch_typed(SharedVariant v, const GroupedArgs& a, unsigned blocks, int threads, std::size_t smem) {
    if (v == SharedVariant::GlobalAtomics) launch(grouped_global_kernel<V, MinMax>, blocks, threads, 0, a);
    else if (v == SharedVariant::WarpAggregation) launch(grouped_warp_kernel<V, MinMax>, blocks, threads, smem, a);
    else launch(grouped_shared_kernel<V, MinMax>, blocks, threads, smem, a);
  }

  void launch_grouped(const GroupedInput& in, SharedVariant v, const GroupedArgs& a, unsigned blocks, int threads,
                      std::size_t smem) {
    if (!in.values) return launch_typed<void, false>(v, a, blocks, threads, smem);
    const bool d = in.value_type == SharedValueType::Double;
    if (d && in.min_max) return launch_typed<double, true>(v, a, blocks, threads, smem);
    if (d) return launch_typed<double, false>(v, a, blocks, threads, smem);
    if (in.min_max) return launch_typed<std::int32_t, true>(v, a, blocks, threads, smem);
    launch_typed<std::int32_t, false>(v, a, blocks, threads, smem);
  }

  void launch_target_store(const GroupedInput& in, const GroupedArgs& a, unsigned replicas, unsigned blocks,
                           int threads, std::size_t smem) {
    ::gpuolap::gpu::TargetTable t{};
    t.sum = static_cast<double*>(a.sum);
    t.count = a.count;
    t.min = a.min_key;
    t.max = a.max_key;
    t.slots = in.groups;
    t.first = 0;
    t.targets = in.groups;
    t.copies = 1;
    t.replicas = replicas;
    constexpr int kCounts = ::gpuolap::gpu::kCount, kSums = ::gpuolap::gpu::kCount | ::gpuolap::gpu::kSum;
    constexpr int kAll = ::gpuolap::gpu::kCount | ::gpuolap::gpu::kSum | ::gpuolap::gpu::kMin | ::gpuolap::gpu::kMax;
    if (!in.values) return launch(grouped_target_store_kernel<kCounts, void>, blocks, threads, smem, a, t);
    if (in.min_max) return launch(grouped_target_store_kernel<kAll, double>, blocks, threads, smem, a, t);
    launch(grouped_target_store_kernel<kSums, double>, blocks, threads, smem, a, t);
  }

  template <typename... Args>
  void launch(void (*kernel)(Args...), unsigned blocks, int threads, std::size_t smem, const Args&... args) {
    GPUOLAP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<blocks, threads, smem, ctx_.stream()>>>(args...);
    GPUOLAP_CHECK_LAUNCH("shared-memory operator");
  }

  // CUB: the rows sorted on their code (only the code's bits), then one
  // reduce-by-key (or run-length encoding for COUNT alone), the groups
  // scattered to their codes.
  void sort_reduce(const GroupedInput& in, const GroupedArgs& a, gpuolap::gpu::StageClock& clock) {
    if (in.rows > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw InputError(text("sort-reduce takes at most 2^31 - 1 rows (CUB's item count), not ", in.rows));
    const cudaStream_t s = ctx_.stream();
    const int n = static_cast<int>(in.rows);
    const int bits = bits_for(in.groups);
    const std::size_t vb = in.value_type == SharedValueType::Double ? 8 : 4;
    sorted_keys_.reserve(4 * in.rows);
    unique_.reserve(4 * std::size_t{in.groups});
    runs_.reserve(4);
    auto* keys_out = reinterpret_cast<std::uint32_t*>(sorted_keys_.data());
    auto* unique = reinterpret_cast<std::uint32_t*>(unique_.data());
    auto* runs = reinterpret_cast<int*>(runs_.data());
    std::size_t temp = 0;
    clock.start("sort");
    if (!in.values) {
      cub::DeviceRadixSort::SortKeys(nullptr, temp, a.codes, keys_out, n, 0, bits, s);
      cub::DeviceRadixSort::SortKeys(ctx_.scratch(temp), temp, a.codes, keys_out, n, 0, bits, s);
      clock.stop();
      clock.start("reduce-by-key");
      parts_.reserve(4 * std::size_t{in.groups});
      auto* lengths = reinterpret_cast<int*>(parts_.data());
      cub::DeviceRunLengthEncode::Encode(nullptr, temp, keys_out, unique, lengths, runs, n, s);
      cub::DeviceRunLengthEncode::Encode(ctx_.scratch(temp), temp, keys_out, unique, lengths, runs, n, s);
      scatter_counts<<<std::min(1024u, (in.groups + 255) / 256), 256, 0, s>>>(unique, lengths, runs, a.count);
      GPUOLAP_CHECK_LAUNCH("scatter_counts");
      clock.stop();
      return;
    }
    sorted_values_.reserve(vb * in.rows);
    if (vb == 8) {
      auto* vin = static_cast<const double*>(a.values);
      auto* vout = reinterpret_cast<double*>(sorted_values_.data());
      cub::DeviceRadixSort::SortPairs(nullptr, temp, a.codes, keys_out, vin, vout, n, 0, bits, s);
      cub::DeviceRadixSort::SortPairs(ctx_.scratch(temp), temp, a.codes, keys_out, vin, vout, n, 0, bits, s);
      clock.stop();
      reduce<double>(in, a, vout, clock);
    } else {
      auto* vin = static_cast<const std::int32_t*>(a.values);
      auto* vout = reinterpret_cast<std::int32_t*>(sorted_values_.data());
      cub::DeviceRadixSort::SortPairs(nullptr, temp, a.codes, keys_out, vin, vout, n, 0, bits, s);
      cub::DeviceRadixSort::SortPairs(ctx_.scratch(temp), temp, a.codes, keys_out, vin, vout, n, 0, bits, s);
      clock.stop();
      reduce<std::int32_t>(in, a, vout, clock);
    }
  }

  template <typename V>
  void reduce(const GroupedInput& in, const GroupedArgs& a, const V* sorted, gpuolap::gpu::StageClock& clock) {
    using Sum = typename SumOf<V>::type;
    const cudaStream_t s = ctx_.stream();
    const int n = static_cast<int>(in.rows);
    auto* keys = reinterpret_cast<std::uint32_t*>(sorted_keys_.data());
    auto* unique = reinterpret_cast<std::uint32_t*>(unique_.data());
    auto* runs = reinterpret_cast<int*>(runs_.data());
    parts_.reserve(sizeof(Partial<Sum>) * in.groups);
    auto* parts = reinterpret_cast<Partial<Sum>*>(parts_.data());
    auto values = thrust::make_transform_iterator(sorted, ToPartial<V>{});
    std::size_t temp = 0;
    clock.start("reduce-by-key");
    cub::DeviceReduce::ReduceByKey(nullptr, temp, keys, unique, values, parts, runs, Combine{}, n, s);
    cub::DeviceReduce::ReduceByKey(ctx_.scratch(temp), temp, keys, unique, values, parts, runs, Combine{}, n, s);
    scatter_partials<Sum><<<std::min(1024u, (in.groups + 255) / 256), 256, 0, s>>>(
        unique, parts, runs, a.count, static_cast<Sum*>(a.sum), a.min_key, a.max_key);
    GPUOLAP_CHECK_LAUNCH("scatter_partials");
    clock.stop();
  }

  gpuolap::gpu::DeviceContext ctx_;
  DeviceBuffer<std::uint8_t> codes_, values_, dim_, sorted_keys_, sorted_values_, unique_, runs_, parts_;
  DeviceBuffer<std::uint32_t> slot_value_;
  DeviceBuffer<unsigned long long> count_, sum_, lo_, hi_;
};

std::mutex runners_mutex;
std::map<int, std::unique_ptr<Runner>>& runners() {
  static std::map<int, std::unique_ptr<Runner>> r;
  return r;
}

template <typename F>
auto with_runner(int device, F&& f) {
  std::lock_guard lock(runners_mutex);
  if (device < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  auto& runner = runners()[device];
  if (!runner) runner = std::make_unique<Runner>(device);
  try {
    return f(*runner);
  } catch (const GpuOutOfMemory& e) {
    runner.reset();
    throw InputError(text("the operator's buffers do not fit in GPU ", device, "'s memory (", e.what(), ")"));
  }
}

}  // namespace
}  // namespace shared_gpu

struct SharedResidentColumns::Buffers {
  int device = 0;
  DeviceBuffer<std::uint32_t> codes;
  DeviceBuffer<std::uint8_t> values;
  bool has_values = false;
};

SharedResidentColumns::SharedResidentColumns(const std::uint32_t* codes, std::size_t rows, const void* values,
                                             SharedValueType type, int device)
    : buffers_(std::make_unique<Buffers>()) {
  if (device < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  GPUOLAP_CUDA_CHECK(cudaSetDevice(device));
  buffers_->device = device;
  try {
    buffers_->codes.upload(codes, rows);
    if (values) {
      const std::size_t bytes = rows * (type == SharedValueType::Double ? 8 : 4);
      buffers_->values.upload(static_cast<const std::uint8_t*>(values), bytes);
      buffers_->has_values = true;
    }
    GPUOLAP_CUDA_CHECK(cudaDeviceSynchronize());
  } catch (const GpuOutOfMemory& e) {
    throw InputError(text(rows, " rows do not fit in GPU ", device, "'s memory (", e.what(), ")"));
  }
}
SharedResidentColumns::~SharedResidentColumns() = default;
const std::uint32_t* SharedResidentColumns::codes() const { return buffers_->codes.data(); }
const void* SharedResidentColumns::values() const { return buffers_->has_values ? buffers_->values.data() : nullptr; }
int SharedResidentColumns::device() const { return buffers_->device; }

bool shared_gpu_available() { return gpu_status().device_count > 0; }
std::string shared_gpu_problem() { return gpu_status().problem; }

namespace {
// The options' shape as check_shape takes it: auto threads as 1,024, the
// most it may pick, so that rows a block is a multiple of either choice.
void check_options(const SharedGpuOptions& o) {
  LaunchShape s = o.shape;
  if (s.block_threads == 0) s.block_threads = 1024;
  check_shape(s);
}
}  // namespace

GroupedResult grouped_gpu(const GroupedInput& in, const SharedGpuOptions& o) {
  check_grouped_input(in, o.variant);
  check_options(o);
  if (!shared_gpu_available()) throw std::runtime_error("no NVIDIA GPU is available for grouped aggregation");
  return shared_gpu::with_runner(o.device, [&](shared_gpu::Runner& r) { return r.grouped(in, o); });
}

JoinResult join_gpu(const JoinInput& in, const SharedGpuOptions& o) {
  check_join_input(in, o.variant);
  check_options(o);
  if (!shared_gpu_available()) throw std::runtime_error("no NVIDIA GPU is available for the foreign-key join");
  return shared_gpu::with_runner(o.device, [&](shared_gpu::Runner& r) { return r.join(in, o); });
}

}  // namespace gpuolap::groupby
