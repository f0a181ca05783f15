#pragma once
// One GPU as an operator uses it: its id and properties, a main stream and
// a side stream (for copies that overlap the main one), the events of its
// stage clocks, and a scratch buffer for library calls (CUB's temporary
// storage). Every operator holds a context instead of binding "the current
// device": two contexts, on two GPUs or on one, live side by side in one
// process, and each makes its device current before it works (bind()).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/stage_clock.cuh"

namespace gpuolap::gpu {

class DeviceContext {
 public:
  // The context of GPU `device`; -1: the device current on this thread.
  explicit DeviceContext(int device = -1);
  ~DeviceContext();
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;

  // Makes this context's GPU the current device of the calling thread.
  void bind() const;

  int device() const { return device_; }
  const cudaDeviceProp& props() const { return props_; }
  int multiprocessors() const { return props_.multiProcessorCount; }
  cudaStream_t stream() const { return stream_; }
  cudaStream_t side_stream() const { return side_stream_; }
  EventPool& events() { return events_; }

  // At least `bytes` of scratch device memory, valid until the next call
  // (work on the main stream only: calls are ordered by it).
  void* scratch(size_t bytes) {
    scratch_.reserve(bytes);
    return scratch_.data();
  }
  void release_scratch() { scratch_ = {}; }

  // Free and total device memory of this GPU.
  void memory_info(size_t& free, size_t& total) const;

  // Lets kernels and copies on this GPU reach `peer`'s memory directly
  // (NVLink or PCIe peer to peer), once per pair; false where the GPUs
  // cannot, and then cudaMemcpyPeerAsync still works, through the host.
  bool reach_peer(int peer) const;

 private:
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_stream_ = nullptr;
  EventPool events_;
  DeviceBuffer<uint8_t> scratch_;
};

}  // namespace gpuolap::gpu
