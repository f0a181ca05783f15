#include <cuda_runtime.h>

#include "device_info.hpp"

namespace gpuolap {

GpuStatus gpu_status() {
  GpuStatus status;
  status.cuda_build = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.problem = std::string("no usable GPU (cudaGetDeviceCount: ") + cudaGetErrorString(err) + ")";
    return status;
  }
  status.device_count = count;
  if (count == 0) {
    status.problem = "no CUDA device found";
    return status;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) status.device_name = prop.name;
  return status;
}

}  // namespace gpuolap
