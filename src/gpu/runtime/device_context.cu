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

bool DeviceContext::reach_peer(int peer) const {
  if (peer == device_) return true;
  int can = 0;
  GPUOLAP_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, device_, peer));
  if (!can) return false;
  bind();
  const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
  if (e == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // not an error: enabled by an earlier call; clear it
    return true;
  }
  GPUOLAP_CUDA_CHECK(e);
  return true;
}

}  // namespace gpuolap::gpu
