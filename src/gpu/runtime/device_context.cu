#include "gpu/runtime/device_context.cuh"

namespace gpuolap::gpu {

DeviceContext::DeviceContext(int device) {
  if (device < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  device_ = device;
  GPUOLAP_CUDA_CHECK(cudaSetDevice(device_));
  GPUOLAP_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
  GPUOLAP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  GPUOLAP_CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
}

DeviceContext::~DeviceContext() {
  cudaSetDevice(device_);
  cudaStreamDestroy(side_stream_);
  cudaStreamDestroy(stream_);
}

void DeviceContext::bind() const { GPUOLAP_CUDA_CHECK(cudaSetDevice(device_)); }

void DeviceContext::memory_info(size_t& free, size_t& total) const {
  bind();
  GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
}

}  // namespace gpuolap::gpu
