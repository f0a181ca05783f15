#pragma once
// An owning array in device memory (cudaMalloc: never managed memory).
#include <cuda_runtime.h>

#include <utility>
#include <vector>

#include "cuda_check.cuh"

namespace gpuolap {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n) { allocate(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Grows (never shrinks) to at least n elements; the contents are not kept.
  void reserve(size_t n) {
    if (n <= size_) return;
    release();
    allocate(n);
  }
  T* data() const { return ptr_; }
  size_t size() const { return size_; }

  void upload(const T* host, size_t n, cudaStream_t stream = nullptr) {
    reserve(n);
    if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
  }
  void upload(const std::vector<T>& host, cudaStream_t stream = nullptr) { upload(host.data(), host.size(), stream); }
  std::vector<T> download(size_t n, cudaStream_t stream = nullptr) const {
    std::vector<T> host(n);
    if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(host.data(), ptr_, n * sizeof(T), cudaMemcpyDeviceToHost, stream));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream));
    return host;
  }

 private:
  void allocate(size_t n) {
    if (n == 0) return;
    GPUOLAP_CUDA_CHECK(cudaMalloc(&ptr_, n * sizeof(T)));
    size_ = n;
  }
  void release() {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    size_ = 0;
  }

  T* ptr_ = nullptr;
  size_t size_ = 0;
};

}  // namespace gpuolap
