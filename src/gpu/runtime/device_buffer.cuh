#pragma once
// An owning array in device memory (cudaMalloc: never managed memory).
#include <cuda_runtime.h>

#include <vector>

#include "cuda_check.cuh"
#include "cuda_memory.cuh"

namespace gpuolap {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { allocate(n); }

  // Grows (never shrinks) to at least n elements; the contents are not kept.
  void reserve(size_t n) {
    if (n <= size()) return;
    memory_.reset();
    allocate(n);
  }
  // Grows to at least n elements with a quarter's headroom, so that a
  // buffer growing a little on every call (an H-tree gaining 1 % a batch)
  // is not reallocated every time: each reallocation is a cudaMalloc and a
  // synchronizing cudaFree. The contents are not kept.
  void grow(size_t n) {
    if (n > size()) reserve(n + n / 4);
  }
  T* data() const { return static_cast<T*>(memory_.get()); }
  size_t size() const { return memory_.bytes() / sizeof(T); }

  void upload(const T* host, size_t n, cudaStream_t stream = nullptr) {
    reserve(n);
    if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(data(), host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void upload(const std::vector<T>& host, cudaStream_t stream = nullptr) { upload(host.data(), host.size(), stream); }
  std::vector<T> download(size_t n, cudaStream_t stream = nullptr) const {
    std::vector<T> host(n);
    if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(host.data(), data(), n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }

 private:
  void allocate(size_t n) {
    if (n == 0) return;
    void* p = nullptr;
    GPUOLAP_CUDA_CHECK(cudaMalloc(&p, n * sizeof(T)));
    memory_.reset(p, n * sizeof(T));
  }

  CudaMemory<cudaFree> memory_;
};

}  // namespace gpuolap
