#pragma once
// Prefilter: the indices of the rows [0, n) that a predicate keeps, in
// ascending order, compacted with CUB select (the thesis' first step: the
// kernels then visit only relevant cells). Templated on the predicate, a
// device functor of the row index, so any operator brings its own test.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <cstdint>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"

namespace gpuolap::gpu {

// Writes the kept rows to `rows` (room for n) and returns their count
// (waits for the stream).
template <class Keep>
uint64_t select_rows(DeviceContext& ctx, uint64_t n, const Keep& keep, uint32_t* rows,
                     DeviceBuffer<uint64_t>& count) {
  count.reserve(1);
  const thrust::counting_iterator<uint32_t> all(0);
  size_t bytes = 0;
  const auto items = static_cast<int64_t>(n);
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, all, rows, count.data(), items, keep, ctx.stream()));
  GPUOLAP_CUDA_CHECK(
      cub::DeviceSelect::If(ctx.scratch(bytes), bytes, all, rows, count.data(), items, keep, ctx.stream()));
  return count.download(1, ctx.stream())[0];
}

}  // namespace gpuolap::gpu
