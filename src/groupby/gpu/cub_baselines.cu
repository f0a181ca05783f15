// The library baselines of ordered aggregation: CUB's run-length encoding
// (COUNT(*) per run) and reduce-by-key (one call per aggregate; the keys
// are written by each call, the same each time). check_plan has limited
// them to one integer key without NULLs and value columns without NULLs.
#include <cub/cub.cuh>
#include <cuda/functional>
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "gpu/runtime/cuda_check.cuh"
#include "groupby/gpu/ordered_runner.cuh"

namespace gpuolap::groupby::gpu {
namespace {

struct DoubleOrderBits {
  __device__ std::uint64_t operator()(double d) const { return order_bits(d); }
};
template <class T>
struct IntOrderBits {
  __device__ std::uint64_t operator()(T x) const { return order_bits(static_cast<std::int64_t>(x)); }
};

}  // namespace

void OrderedRunner::run_cub(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                            const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock) {
  // CUB takes 32-bit item counts where they fit: its 64-bit offsets cost
  // time (and the baseline should be CUB at its best).
  if (input.rows <= INT32_MAX) run_cub_with(input, plan, A, key_out, clock, static_cast<std::int32_t>(input.rows));
  else run_cub_with(input, plan, A, key_out, clock, static_cast<std::int64_t>(input.rows));
}

template <class Count>
void OrderedRunner::run_cub_with(const OrderedInput& input, const OrderedPlan& plan, const DeviceAggregates& A,
                                 const DeviceGroupKeys& key_out, gpuolap::gpu::StageClock& clock, Count n) {
  const cudaStream_t s = ctx_.stream();
  std::uint32_t* groups = group_count_.data();
  auto with_key = [&](auto f) {
    if (input.keys[0].type == ValueType::Int32) {
      f(static_cast<const std::int32_t*>(input.keys[0].values), static_cast<std::int32_t*>(key_out.values[0]));
    } else {
      f(static_cast<const std::int64_t*>(input.keys[0].values), static_cast<std::int64_t*>(key_out.values[0]));
    }
  };
  with_key([&](auto keys, auto unique) {
    if (plan.architecture == Architecture::CubRunLength) {
      // Every aggregate is COUNT(*): one encode, its counts copied to the rest.
      clock.start("cub run-length encode");
      std::size_t bytes = 0;
      GPUOLAP_CUDA_CHECK(cub::DeviceRunLengthEncode::Encode(nullptr, bytes, keys, unique, A.bits[0], groups, n, s));
      GPUOLAP_CUDA_CHECK(
          cub::DeviceRunLengthEncode::Encode(ctx_.scratch(bytes), bytes, keys, unique, A.bits[0], groups, n, s));
      clock.stop();
      for (int a = 1; a < A.count; ++a)
        GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(A.bits[a], A.bits[0], input.rows * sizeof(std::uint64_t),
                                           cudaMemcpyDeviceToDevice, s));
      return;
    }
    clock.start("cub reduce-by-key");
    auto reduce = [&](auto values, std::uint64_t* out, auto op) {
      std::size_t bytes = 0;
      GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, keys, unique, values, out, groups, op, n, s));
      GPUOLAP_CUDA_CHECK(
          cub::DeviceReduce::ReduceByKey(ctx_.scratch(bytes), bytes, keys, unique, values, out, groups, op, n, s));
    };
    auto ordered = [&](const AggregateSlot& slot, std::uint64_t* out, auto op) {
      if (slot.type == ValueType::Double)
        reduce(thrust::make_transform_iterator(static_cast<const double*>(slot.values), DoubleOrderBits{}), out, op);
      else if (slot.type == ValueType::Int64)
        reduce(thrust::make_transform_iterator(static_cast<const std::int64_t*>(slot.values), IntOrderBits<std::int64_t>{}),
               out, op);
      else
        reduce(thrust::make_transform_iterator(static_cast<const std::int32_t*>(slot.values), IntOrderBits<std::int32_t>{}),
               out, op);
    };
    for (int a = 0; a < A.count; ++a) {
      const AggregateSlot& slot = A.slot[a];
      const auto ones = thrust::make_constant_iterator<std::uint64_t>(1);
      switch (slot.kind) {
        case AggregateKind::CountStar:
        case AggregateKind::Count:
          reduce(ones, A.bits[a], cuda::std::plus<std::uint64_t>{});
          break;
        case AggregateKind::Sum:
        case AggregateKind::Avg: {
          // Doubles only (check_plan); the sum's bits go to the bits slot.
          std::size_t bytes = 0;
          const auto* values = static_cast<const double*>(slot.values);
          auto* out = reinterpret_cast<double*>(A.bits[a]);
          GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, keys, unique, values, out, groups,
                                                            cuda::std::plus<double>{}, n, s));
          GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(ctx_.scratch(bytes), bytes, keys, unique, values, out, groups,
                                                            cuda::std::plus<double>{}, n, s));
          if (A.counts[a]) reduce(ones, A.counts[a], cuda::std::plus<std::uint64_t>{});
          break;
        }
        case AggregateKind::Min:
          ordered(slot, A.bits[a], cuda::minimum<std::uint64_t>{});
          break;
        case AggregateKind::Max:
          ordered(slot, A.bits[a], cuda::maximum<std::uint64_t>{});
          break;
      }
    }
    clock.stop();
  });
}

}  // namespace gpuolap::groupby::gpu
