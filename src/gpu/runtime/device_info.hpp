#pragma once
// What GPUs this build and machine offer. Plain C++: callers never include
// CUDA headers; the CUDA implementation is compiled only with GPUOLAP_CUDA.
#include <string>

namespace gpuolap {

struct GpuStatus {
  bool cuda_build = false;  // compiled with CUDA
  int device_count = 0;     // usable devices found at run time
  std::string device_name;  // of device 0, when there is one
  std::string problem;      // why there is no usable device, in words
};

GpuStatus gpu_status();

// Streaming-read bandwidth of device 0 in bytes per second, measured with
// 16-byte loads over a buffer far larger than L2 (median of repeats); 0
// without a usable GPU. The floor benchmarks compare against.
double gpu_read_bandwidth();

}  // namespace gpuolap
