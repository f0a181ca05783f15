#pragma once
// The states of runs of equal sorted keys through CUB, for any aggregate
// slots (NULLs, integer and double columns, every kind), in two steps:
//   find_run_starts      where each run starts (cub::DeviceSelect::
//                        UniqueByKey over the positions): the runs' number,
//                        so that the caller can allocate their states
//   reduce_slots_by_key  each run's key and its length (the words of
//                        COUNT(*), and the counts of columns without NULLs)
//                        from the starts; every other word of each state by
//                        one cub::DeviceReduce::ReduceByKey, so that each call
//                        moves the keys and one small value (8 bytes, 16 for
//                        an integer sum) instead of a whole state
// The runs' words come out as the kernels' atomics would leave them
// (aggregate_state.hpp), so the host finishes them the same way:
//   bits     COUNT(*) and COUNT(x): a count; MIN/MAX: min/max of order_bits;
//            SUM/AVG of doubles: the sum's bits (a NULL adds -0.0, the
//            identity); SUM/AVG of integers: the low word of a 128-bit sum
//   high     the high word of that 128-bit sum (wrapping, as add128)
//   counts   the values that are not NULL, where the slot keeps a count
// Measured on an H200, 25 M sorted rows of the sales-flat cube (1.4 M runs,
// 2026-11-28, ncu): a reduce-by-key costs about the same whatever its value
// reads (137 us for COUNT(*), which reads only the keys; 146 for a double
// SUM), hence COUNT(*) from the starts. Values wider than 12 bytes (a word
// and a count together: 1,108 us; one 48-byte state a row: 3.4 ms) make
// CUB's look-back keep its tile states in two words, far slower.
#include <cub/cub.cuh>
#include <cuda/functional>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>
#include <thrust/iterator/zip_iterator.h>
#include <thrust/tuple.h>

#include <cstdint>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_context.cuh"
#include "groupby/gpu/ordered_kernels.cuh"

namespace gpuolap::groupby::gpu {

// Sorted position i's row: order[i], or i where the rows are in order.
struct SortedRow {
  const std::uint32_t* order;
  __host__ __device__ std::size_t operator()(std::size_t i) const { return order ? order[i] : i; }
};

// What one row gives to a 64-bit word of its aggregate's state.
enum class RowWord : std::uint8_t { NotNull, Ordered };
struct RowWordValue {
  AggregateSlot slot;
  SortedRow row_of;
  RowWord word;
  std::uint64_t if_null;  // the word's identity, for a NULL value
  __device__ std::uint64_t operator()(std::size_t i) const {
    const std::size_t row = row_of(i);
    const bool null = slot.nulls && slot.nulls[row];
    if (word == RowWord::NotNull) return null ? 0 : 1;
    return null ? if_null : ordered_value(slot, row);
  }
};
struct RowDouble {
  AggregateSlot slot;
  SortedRow row_of;
  __device__ double operator()(std::size_t i) const {
    const std::size_t row = row_of(i);
    return slot.nulls && slot.nulls[row] ? -0.0 : double_value(slot, row);
  }
};
struct RowInt128 {
  AggregateSlot slot;
  SortedRow row_of;
  __device__ __int128 operator()(std::size_t i) const {
    const std::size_t row = row_of(i);
    return slot.nulls && slot.nulls[row] ? 0 : static_cast<__int128>(int_value(slot, row));
  }
};
// A 128-bit sum as the state's two words (two's complement, so the
// wrapping sum is add128's).
struct LowHigh {
  __host__ __device__ thrust::tuple<std::uint64_t, std::uint64_t> operator()(__int128 v) const {
    const auto u = static_cast<unsigned __int128>(v);
    return {static_cast<std::uint64_t>(u), static_cast<std::uint64_t>(u >> 64)};
  }
};

// The sorted positions where runs of equal `keys` (n, sorted) start, into
// `starts` (room for n), their number into *run_count (device memory).
template <class Count>
void find_run_starts(gpuolap::gpu::DeviceContext& ctx, const std::uint64_t* keys, Count n, std::uint32_t* starts,
                     std::uint32_t* run_count) {
  const cudaStream_t s = ctx.stream();
  const thrust::counting_iterator<std::uint32_t> positions(0);
  const auto no_keys = thrust::make_discard_iterator();
  std::size_t bytes = 0;
  GPUOLAP_CUDA_CHECK(
      cub::DeviceSelect::UniqueByKey(nullptr, bytes, keys, positions, no_keys, starts, run_count, n, s));
  GPUOLAP_CUDA_CHECK(
      cub::DeviceSelect::UniqueByKey(ctx.scratch(bytes), bytes, keys, positions, no_keys, starts, run_count, n, s));
}

// Run j's key, and its length where `lengths` is set. (A thread a run:
// 29-31 us for 1.4 M runs on an H200, the scattered reads of the keys.)
__global__ inline void runs_from_starts(const std::uint64_t* keys, std::size_t n, const std::uint32_t* starts,
                                        std::uint32_t runs, std::uint64_t* unique_keys, std::uint64_t* lengths) {
  const std::size_t j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (j >= runs) return;
  const std::uint32_t start = starts[j];
  unique_keys[j] = keys[start];
  if (lengths) lengths[j] = (j + 1 < runs ? starts[j + 1] : n) - start;
}

// The runs of `keys` (n of them, sorted, read at sorted positions; the
// rows' values at order[i], or i with no order; `runs` of them, starting
// at `starts`, from find_run_starts) reduced for every slot of `rows` into
// `out`'s states (room for `runs`), the runs' keys into `unique_keys`.
// `scratch_count`: a device word the reduce-by-key calls write the runs'
// number to.
template <class Count>
void reduce_slots_by_key(gpuolap::gpu::DeviceContext& ctx, const std::uint64_t* keys, Count n,
                         const std::uint32_t* starts, std::uint32_t runs, const DeviceAggregates& rows,
                         const std::uint32_t* order, const DeviceAggregates& out, std::uint64_t* unique_keys,
                         std::uint32_t* scratch_count) {
  if (runs == 0) return;
  const cudaStream_t s = ctx.stream();
  const thrust::counting_iterator<std::size_t> positions(0);
  const auto no_keys = thrust::make_discard_iterator();
  auto reduce = [&](auto values, auto into, auto op) {
    std::size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(
        cub::DeviceReduce::ReduceByKey(nullptr, bytes, keys, no_keys, values, into, scratch_count, op, n, s));
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(ctx.scratch(bytes), bytes, keys, no_keys, values, into,
                                                      scratch_count, op, n, s));
  };
  // The runs' keys, and their lengths: the words of COUNT(*), and of
  // COUNT(x) or an AVG's count over a column without NULLs, are the runs'
  // lengths. The first such word takes them; the others copy it (a
  // reduce-by-key over the positions cost as much as a SUM's).
  std::uint64_t* lengths = nullptr;
  auto length_word = [&](std::uint64_t* word) {
    if (!lengths) lengths = word;
    else if (word != lengths)
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(word, lengths, runs * sizeof(std::uint64_t), cudaMemcpyDeviceToDevice, s));
  };
  auto bits_are_lengths = [&](const AggregateSlot& slot) {
    return slot.kind == AggregateKind::CountStar || (slot.kind == AggregateKind::Count && !slot.nulls);
  };
  for (int a = 0; a < rows.count && !lengths; ++a) {
    if (bits_are_lengths(rows.slot[a])) lengths = out.bits[a];
    else if (out.counts[a] && !rows.slot[a].nulls) lengths = out.counts[a];
  }
  constexpr int kBlock = 256;
  const auto blocks = static_cast<unsigned>((std::size_t{runs} + kBlock - 1) / kBlock);
  runs_from_starts<<<blocks, kBlock, 0, s>>>(keys, static_cast<std::size_t>(n), starts, runs, unique_keys, lengths);
  GPUOLAP_CHECK_LAUNCH("runs_from_starts");
  auto words = [&](const AggregateSlot& slot, RowWord word, std::uint64_t if_null) {
    return thrust::make_transform_iterator(positions, RowWordValue{slot, SortedRow{order}, word, if_null});
  };
  for (int a = 0; a < rows.count; ++a) {
    const AggregateSlot& slot = rows.slot[a];
    switch (slot.kind) {
      case AggregateKind::CountStar:
        length_word(out.bits[a]);
        break;
      case AggregateKind::Count:
        if (bits_are_lengths(slot)) length_word(out.bits[a]);
        else reduce(words(slot, RowWord::NotNull, 0), out.bits[a], cuda::std::plus<std::uint64_t>{});
        break;
      case AggregateKind::Sum:
      case AggregateKind::Avg:
        if (slot.type == ValueType::Double) {
          reduce(thrust::make_transform_iterator(positions, RowDouble{slot, SortedRow{order}}),
                 reinterpret_cast<double*>(out.bits[a]), cuda::std::plus<double>{});
        } else {
          const auto low_high = thrust::make_transform_output_iterator(
              thrust::make_zip_iterator(out.bits[a], out.high[a]), LowHigh{});
          reduce(thrust::make_transform_iterator(positions, RowInt128{slot, SortedRow{order}}), low_high,
                 cuda::std::plus<__int128>{});
        }
        break;
      case AggregateKind::Min:
        reduce(words(slot, RowWord::Ordered, ~std::uint64_t{0}), out.bits[a], cuda::minimum<std::uint64_t>{});
        break;
      case AggregateKind::Max:
        reduce(words(slot, RowWord::Ordered, 0), out.bits[a], cuda::maximum<std::uint64_t>{});
        break;
    }
    if (out.counts[a]) {
      if (!slot.nulls) length_word(out.counts[a]);
      else reduce(words(slot, RowWord::NotNull, 0), out.counts[a], cuda::std::plus<std::uint64_t>{});
    }
  }
}

}  // namespace gpuolap::groupby::gpu
