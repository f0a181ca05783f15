#include "gpu/primitives/compaction.cuh"

#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>

#include <algorithm>
#include <string>

#include "gpu/runtime/cuda_check.cuh"
#include "gpuolap/error.hpp"

namespace gpuolap::gpu {

namespace {

// What a compaction writes for each filled target: the value of the
// aggregate, or (a part of a query split over GPUs) one word of the exact
// sum, its bits in a double's place, for the host to merge exactly.
struct Output {
  Aggregate aggregate;
  int exact_word;  // -1: the aggregate's value; 0-2: that word of the exact sum
  bool exact;      // the sums are exact (kExact), on `grid`
  SumGrid grid;
};

__device__ inline double sum_value(double sum, const ExactSum& exact, const Output& o) {
  if (o.exact_word >= 0) return __longlong_as_double(static_cast<long long>(exact.word(o.exact_word)));
  return o.exact ? exact.to_double(o.grid) : sum;
}

// The value of a merged cell for an aggregate.
__device__ inline double finish_value(const Cell& c, const Output& o) {
  if (o.exact_word >= 0) return sum_value(c.sum, c.exact, o);
  if (o.aggregate == Aggregate::count) return static_cast<double>(c.count);
  if (o.aggregate == Aggregate::avg) return sum_value(c.sum, c.exact, o) / static_cast<double>(c.count);
  if (o.aggregate == Aggregate::min) return decode_ordered(c.min);
  if (o.aggregate == Aggregate::max) return decode_ordered(c.max);
  return sum_value(c.sum, c.exact, o);
}

// Merges the copies of each dense target straight into its value; flags
// non-empty ones.
template <int F>
__global__ void reduce_dense(TargetTable t, double* values, Output o, uint8_t* nonempty) {
  for (uint64_t x = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; x < t.targets;
       x += uint64_t{gridDim.x} * blockDim.x) {
    Cell c{0.0, 0ull, kMinIdentity, kMaxIdentity};
    const bool any = merge_dense_copies<F>(t, x, c);
    values[x] = finish_value(c, o);
    nonempty[x] = any;
  }
}

void reduce_dense_table(const TargetTable& t, int fields, double* values, const Output& o, uint8_t* nonempty,
                        cudaStream_t s) {
  const int grid = static_cast<int>(std::min<uint64_t>(4096, (t.targets + 255) / 256));
  with_fields(fields, [&](auto f) { reduce_dense<decltype(f)::value><<<grid, 256, 0, s>>>(t, values, o, nonempty); });
  GPUOLAP_CHECK_LAUNCH("reduce_dense");
}

// Reads the fields of occupied hash slots into cells.
template <int F>
__global__ void gather_slots(TargetTable t, const uint32_t* slots, uint64_t n, Cell* cells) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t s = slots[i];
    Cell c{0.0, 0ull, kMinIdentity, kMaxIdentity};
    if (F & kSum) c.sum = t.sum[s];
    if (F & kExact) c.exact = exact_at(t, s);
    if (F & kCount) c.count = t.count[s];
    if (F & kMin) c.min = t.min[s];
    if (F & kMax) c.max = t.max[s];
    cells[i] = c;
  }
}

__global__ void finish_cells(const Cell* cells, uint64_t n, Output o, double* out) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    out[i] = finish_value(cells[i], o);
}

// A store of one copy per target (a shared store's flush, phase 2's dense
// store, a one-phase dense store of one copy) is read by the compaction
// itself: slot x holds target first + x, and its value and whether it has
// one need no merge of copies first.
struct OneCopyValue {
  TargetTable t;
  Output o;
  __device__ double sum(uint64_t x) const {
    return o.exact ? sum_value(0.0, exact_at(t, x), o) : t.sum[x];
  }
  __device__ double operator()(uint64_t x) const {
    if (o.exact_word >= 0) return sum(x);
    switch (o.aggregate) {
      case Aggregate::count: return static_cast<double>(t.count[x]);
      case Aggregate::avg: return sum(x) / static_cast<double>(t.count[x]);
      case Aggregate::min: return decode_ordered(t.min[x]);
      case Aggregate::max: return decode_ordered(t.max[x]);
      default: return sum(x);
    }
  }
};
struct OneCopyFilled {
  TargetTable t;
  bool counted;  // the store keeps counts (else touched flags)
  __device__ bool operator()(uint64_t x) const { return counted ? t.count[x] > 0 : t.touched[x] != 0; }
};

struct NotEmpty {
  __host__ __device__ bool operator()(uint64_t key) const { return key != kEmptyKey; }
};

}  // namespace

namespace {
Output output_of(const TargetTable& t, int fields, Aggregate a, int exact_word) {
  return Output{a, exact_word, (fields & kExact) != 0, t.grid};
}
}  // namespace

AreaResult Compactor::compact_dense(const TargetTable& t, int fields, Aggregate a, StageClock& clock, int exact_word) {
  clock.start("compact");
  const Output o = output_of(t, fields, a, exact_word);
  const cudaStream_t stream = ctx_.stream();
  // The non-empty targets with their numbers and the query's values, in one
  // selection: straight from a store of one copy, else after a pass that
  // merges each target's copies into its value.
  const auto n = static_cast<int64_t>(t.targets);
  const thrust::counting_iterator<uint64_t> slots(0);
  const auto numbers = thrust::counting_iterator<uint64_t>(t.first);
  const auto select = [&](uint64_t* targets, double* values, uint64_t* count) {
    auto out = thrust::make_zip_iterator(thrust::make_tuple(targets, values));
    const auto run = [&](auto in, auto flags) {
      size_t bytes = 0;
      GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, in, flags, out, count, n, stream));
      GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(ctx_.scratch(bytes), bytes, in, flags, out, count, n, stream));
    };
    if (t.copies == 1) {
      run(thrust::make_zip_iterator(
              thrust::make_tuple(numbers, thrust::make_transform_iterator(slots, OneCopyValue{t, o}))),
          thrust::make_transform_iterator(slots, OneCopyFilled{t, (fields & kCount) != 0}));
      return;
    }
    values_.reserve(t.targets);
    nonempty_.reserve(t.targets);
    reduce_dense_table(t, fields, values_.data(), o, nonempty_.data(), stream);
    run(thrust::make_zip_iterator(thrust::make_tuple(numbers, values_.data())), nonempty_.data());
  };
  if (t.targets * (sizeof(uint64_t) + sizeof(double)) <= kStraightToHostBytes) {
    const ResultStaging staged = stage_results(t.targets);
    select(staged.targets, staged.values, staged.count);
    clock.stop();
    return collect(t.targets, true, clock);
  }
  out_targets_.reserve(t.targets);
  out_values_.reserve(t.targets);
  counts_.reserve(1);
  select(out_targets_.data(), out_values_.data(), counts_.data());
  const uint64_t filled = counts_.download(1, stream)[0];
  clock.stop();
  return download(filled, out_targets_.data(), out_values_.data(), clock);
}

AreaResult Compactor::compact_hash(const TargetTable& t, int fields, Aggregate a, StageClock& clock, int exact_word) {
  clock.start("compact");
  const Output o = output_of(t, fields, a, exact_word);
  const cudaStream_t stream = ctx_.stream();
  // Occupied slots, then their targets sorted, then one cell per target.
  const auto n = static_cast<int64_t>(t.slots);
  keys_sorted_.reserve(t.slots);
  slots_.reserve(t.slots);
  slots_sorted_.reserve(t.slots);
  out_targets_.reserve(t.slots);
  counts_.reserve(2);
  thrust::counting_iterator<uint32_t> all(0);
  thrust::transform_iterator<NotEmpty, const uint64_t*> occupied(t.keys, NotEmpty{});
  size_t bytes = 0;
  GPUOLAP_CUDA_CHECK(
      cub::DeviceSelect::Flagged(nullptr, bytes, all, occupied, slots_.data(), counts_.data(), n, stream));
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(ctx_.scratch(bytes), bytes, all, occupied, slots_.data(),
                                                counts_.data(), n, stream));
  GPUOLAP_CUDA_CHECK(
      cub::DeviceSelect::Flagged(nullptr, bytes, t.keys, occupied, out_targets_.data(), counts_.data(), n, stream));
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(ctx_.scratch(bytes), bytes, t.keys, occupied, out_targets_.data(),
                                                counts_.data(), n, stream));
  const uint64_t occupied_count = counts_.download(1, stream)[0];
  uint64_t filled = 0;
  if (occupied_count > 0) {
    int end_bit = 1;
    while (end_bit < 64 && (t.first + t.targets - 1) >> end_bit) ++end_bit;
    const auto m = static_cast<int64_t>(occupied_count);
    GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, out_targets_.data(), keys_sorted_.data(),
                                                       slots_.data(), slots_sorted_.data(), m, 0, end_bit, stream));
    GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ctx_.scratch(bytes), bytes, out_targets_.data(),
                                                       keys_sorted_.data(), slots_.data(), slots_sorted_.data(), m, 0,
                                                       end_bit, stream));
    cells_a_.reserve(occupied_count);
    cells_b_.reserve(occupied_count);
    const int grid = std::min<uint64_t>(4096, (occupied_count + 255) / 256);
    with_fields(fields, [&](auto f) {
      gather_slots<decltype(f)::value><<<grid, 256, 0, stream>>>(t, slots_sorted_.data(), occupied_count,
                                                                cells_a_.data());
    });
    GPUOLAP_CHECK_LAUNCH("gather_slots");
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, keys_sorted_.data(), out_targets_.data(),
                                                      cells_a_.data(), cells_b_.data(), counts_.data() + 1,
                                                      MergeCells{}, m, stream));
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(ctx_.scratch(bytes), bytes, keys_sorted_.data(),
                                                      out_targets_.data(), cells_a_.data(), cells_b_.data(),
                                                      counts_.data() + 1, MergeCells{}, m, stream));
    filled = counts_.download(2, stream)[1];
  }
  clock.stop();
  if (filled > 0) {
    out_values_.reserve(filled);
    const int grid = static_cast<int>(std::min<uint64_t>(4096, (filled + 255) / 256));
    finish_cells<<<grid, 256, 0, stream>>>(cells_b_.data(), filled, o, out_values_.data());
    GPUOLAP_CHECK_LAUNCH("finish_cells");
  }
  return download(filled, out_targets_.data(), out_values_.data(), clock);
}

Compactor::ResultStaging Compactor::stage_results(uint64_t most) {
  staging_.reserve(sizeof(uint64_t) + most * (sizeof(uint64_t) + sizeof(double)));
  return ResultStaging::at(staging_.device_data(), most);
}

AreaResult Compactor::download(uint64_t n, const uint64_t* targets, const double* values, StageClock& clock) {
  clock.start("copy back");
  const ResultStaging staged = stage_results(n);
  if (n > 0) {
    GPUOLAP_CUDA_CHECK(
        cudaMemcpyAsync(staged.targets, targets, n * sizeof(uint64_t), cudaMemcpyDeviceToHost, ctx_.stream()));
    GPUOLAP_CUDA_CHECK(
        cudaMemcpyAsync(staged.values, values, n * sizeof(double), cudaMemcpyDeviceToHost, ctx_.stream()));
  }
  clock.stop();
  return collect(n, false, clock);
}

AreaResult Compactor::collect(uint64_t most, bool counted, StageClock& clock) {
  clock.start("copy back");
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
  const ResultStaging staged = ResultStaging::at(staging_.data(), most);
  const uint64_t n = counted ? *staged.count : most;
  if (n > most)
    throw GpuError("gpu compaction: selected " + std::to_string(n) + " of " + std::to_string(most) + " targets");
  AreaResult r;
  r.targets.assign(staged.targets, staged.targets + n);
  r.values.assign(staged.values, staged.values + n);
  clock.stop();
  return r;
}

void Compactor::release() {
  nonempty_ = {};
  slots_ = {};
  slots_sorted_ = {};
  keys_sorted_ = {};
  out_targets_ = {};
  cells_a_ = {};
  cells_b_ = {};
  values_ = {};
  out_values_ = {};
}

}  // namespace gpuolap::gpu
