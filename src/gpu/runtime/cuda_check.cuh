#pragma once
// Every CUDA call is checked; a failure throws and names the call. Running
// out of device memory has its own type and says so in its message: the gpu
// engine catches it to aggregate an area in smaller chunks; what still does
// not fit (the facts themselves) fails with that message.
#include <cuda_runtime.h>

#include <string>

#include "gpu/runtime/gpu_error.hpp"

namespace gpuolap {

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  const std::string what = std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (err == cudaErrorMemoryAllocation) throw GpuOutOfMemory("GPU out of memory: " + what);
  throw GpuError(what);
}

}  // namespace gpuolap

#define GPUOLAP_CUDA_CHECK(call)                                                      \
  do {                                                                                \
    const cudaError_t gpuolap_err_ = (call);                                          \
    if (gpuolap_err_ != cudaSuccess) {                                                \
      (void)cudaGetLastError(); /* clear a non-sticky error so later calls work */    \
      ::gpuolap::throw_cuda_error(gpuolap_err_, #call, __FILE__, __LINE__);           \
    }                                                                                 \
  } while (0)

// After a kernel launch: a bad configuration or an earlier fault, naming the kernel.
#define GPUOLAP_CHECK_LAUNCH(kernel_name)                                                            \
  do {                                                                                               \
    const cudaError_t gpuolap_err_ = cudaGetLastError();                                             \
    if (gpuolap_err_ != cudaSuccess)                                                                 \
      ::gpuolap::throw_cuda_error(gpuolap_err_, "launch of " kernel_name, __FILE__, __LINE__);       \
  } while (0)
