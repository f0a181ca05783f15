#pragma once
// One owned CUDA allocation, freed by `Free` (cudaFree, cudaFreeHost): the
// move and release rules that DeviceBuffer and PinnedBuffer share. A
// moved-from owner is empty.
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace gpuolap {

template <cudaError_t (*Free)(void*)>
class CudaMemory {
 public:
  CudaMemory() = default;
  ~CudaMemory() { reset(); }
  CudaMemory(CudaMemory&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  CudaMemory& operator=(CudaMemory&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
  }
  CudaMemory(const CudaMemory&) = delete;
  CudaMemory& operator=(const CudaMemory&) = delete;

  // Frees what is held and takes `ptr` (of `bytes` bytes) instead.
  void reset(void* ptr = nullptr, size_t bytes = 0) {
    if (ptr_) Free(ptr_);
    ptr_ = ptr;
    bytes_ = bytes;
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace gpuolap
