#pragma once
// Page-locked host memory for the small transfers of every query (maps up,
// results down). A copy from pageable memory goes through a driver staging
// buffer and waits for it; from pinned memory the copy engine reads the
// bytes directly and cudaMemcpyAsync returns at once (measured on an H100:
// 13,971 results came back in 0.094 ms from pageable vectors).
#include <cuda_runtime.h>

#include <cstddef>

#include "cuda_check.cuh"
#include "cuda_memory.cuh"

namespace gpuolap {

class PinnedBuffer {
 public:
  // Grows (never shrinks) to at least `bytes`; the contents are not kept.
  // The caller makes sure no copy still reads or writes the old bytes.
  void reserve(size_t bytes) {
    if (bytes <= memory_.bytes()) return;
    memory_.reset();
    void* p = nullptr;
    GPUOLAP_CUDA_CHECK(cudaMallocHost(&p, bytes));
    memory_.reset(p, bytes);
  }
  void* data() const { return memory_.get(); }

 private:
  CudaMemory<cudaFreeHost> memory_;
};

}  // namespace gpuolap
