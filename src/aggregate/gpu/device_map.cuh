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
  // A dimension where every base has the one target position 0 with weight
  // 1 (a total over all bases) changes neither target nor weight: skipped.
  bool skip[kMaxDims];
  int shift[kMaxDims];
  uint64_t mask[kMaxDims];
  uint64_t stride[kMaxDims];
  uint32_t offsets_at[kMaxDims];    // byte offset of uint32 offsets[base_count + 1]
  uint32_t positions_at[kMaxDims];  // byte offset of uint32 positions[]
  uint32_t weights_at[kMaxDims];    // byte offset of double weights[]
};

// Phase 2 of two-phase aggregation: class tuple -> targets (target_classes.hpp).
struct ExpandMap {
  int dims;
  const uint8_t* global;
  uint64_t class_stride[kMaxDims];
  uint32_t class_count[kMaxDims];
  uint64_t target_stride[kMaxDims];
  uint32_t offsets_at[kMaxDims];    // uint32 offsets[classes + 1]
  uint32_t positions_at[kMaxDims];  // uint32 positions[]
  uint32_t weights_at[kMaxDims];    // double weights[]
};

}  // namespace gpuolap::gpu
