#pragma once
// The aggregation map as the kernels see it: per dimension, the key field
// (shift, mask), the CSR arrays (base -> targets' positions and weights) and
// the dimension's stride in target numbers. The arrays live either in
// constant memory (thesis §4.2, when they fit in 64 KB) or in global memory.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpuolap::gpu {

constexpr int kMaxDims = 16;
constexpr size_t kConstantMapBytes = 60 * 1024;

// Byte offsets into either the constant buffer or one global allocation.
struct DeviceMap {
  int dims;
  bool in_constant;
  const uint8_t* global;  // base of the global copy (when !in_constant)
  int shift[kMaxDims];
  uint64_t mask[kMaxDims];
  uint64_t stride[kMaxDims];
  uint32_t offsets_at[kMaxDims];    // byte offset of uint32 offsets[base_count + 1]
  uint32_t positions_at[kMaxDims];  // byte offset of uint32 positions[]
  uint32_t weights_at[kMaxDims];    // byte offset of double weights[]
};

}  // namespace gpuolap::gpu
