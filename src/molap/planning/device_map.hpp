#pragma once
// The aggregation map as the kernels see it: per dimension, the key field
// (shift, mask), the CSR arrays (base -> targets' positions and weights) and
// the dimension's stride in target numbers. The arrays live either in
// constant memory (thesis §4.2, when they fit in 64 KB) or in global memory.
// Plain structs: the host builds them (map_images.hpp), kernels read them.
#include <cstddef>
#include <cstdint>

namespace gpuolap::gpu {

// Dimensions a kernel walks: the map keeps only those that change a target
// or a weight (a weight-1 total over every base changes neither).
constexpr int kMaxDims = 16;
// A map of at most this many such dimensions with one target per base (every
// phase 1 of two-phase aggregation, many roll-ups) gets a lean kernel.
constexpr int kFewDims = 4;
constexpr size_t kConstantMapBytes = 60 * 1024;

// Byte offsets into either the constant buffer or one global allocation.
struct DeviceMap {
  int dims;
  bool in_constant;
  const uint8_t* global;  // base of the global copy (when !in_constant)
  bool single;  // every base has at most one target in every dimension
  int shift[kMaxDims];
  uint64_t mask[kMaxDims];
  uint64_t stride[kMaxDims];
  uint32_t offsets_at[kMaxDims];    // byte offset of uint32 offsets[base_count + 1]
  uint32_t positions_at[kMaxDims];  // byte offset of uint32 positions[]
  uint32_t weights_at[kMaxDims];    // byte offset of double weights[]
};

// A map with at most one target per base in at most kFewDims dimensions,
// packed for the thread-run kernel: per dimension and base one uint32, the
// base's part of the target number, position x stride (kNoPosition: the base
// is not in the area), so a target is the sum of its dimensions' parts. Only
// for areas of fewer than 2^32 - 1 targets. Small enough to be copied into each block's shared memory, where
// lanes looking up different bases do not serialise as they do in L1 (B3's
// 3,624 customers: up to 32 cache lines per warp-wide load). Weights, per
// base, are read only for dimensions where some weight is not 1.
constexpr uint32_t kNoPosition = ~0u;
constexpr uint32_t kNoWeights = ~0u;
// Position arrays up to this size go to shared memory.
constexpr size_t kLeanSharedBytes = 32 * 1024;

// The thread-run kernel's facts per lane loaded at once, and its warp's step
// (page skipping needs pages of a multiple of it).
constexpr int kLeanRunBatch = 4;
constexpr uint64_t kLeanRunStep = 32 * kLeanRunBatch;

struct LeanMap {
  int dims;
  const uint8_t* global;    // base of the global copy
  uint32_t positions_at;    // byte offset of every dimension's uint32 positions, concatenated
  uint32_t entries;         // their total count
  bool positions_in_shared; // the kernel copies them into shared memory
  uint32_t shared_at;       // ... at this byte offset of the block's dynamic shared memory
  int shift[kFewDims];
  uint64_t mask[kFewDims];
  uint32_t first[kFewDims];       // index of dimension d's base 0 in the positions
  uint32_t weights_at[kFewDims];  // byte offset of double weights[base], or kNoWeights
  bool weighted;                  // some dimension has weights_at
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
