#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "device_info.hpp"

namespace gpuolap {

namespace {

// 12040 -> "12.4", as CUDA numbers its versions.
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

// Why cudaGetDeviceCount found no device, in words that say what to do. The
// runtime reports a machine without any NVIDIA driver as "CUDA driver
// version is insufficient for CUDA runtime version" (it compares the
// missing driver's version, 0, with its own), which reads as if upgrading
// the driver would help; the CUDA error's name stays in parentheses.
std::string no_device_problem(cudaError_t err) {
  const std::string call = std::string("cudaGetDeviceCount: ") + cudaGetErrorName(err);
  if (err == cudaErrorNoDevice) return "no NVIDIA GPU found (" + call + ")";
  if (err == cudaErrorInsufficientDriver) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
      int runtime = 0;
      cudaRuntimeGetVersion(&runtime);
      return "the NVIDIA driver supports CUDA " + cuda_version(driver) + ", older than this build's CUDA runtime " +
             cuda_version(runtime) + "; a newer driver is needed (" + call + ")";
    }
    return "no NVIDIA driver found, so no GPU can be used (" + call + ")";
  }
  return std::string("no usable GPU: ") + cudaGetErrorString(err) + " (" + call + ")";
}

__global__ void read_stream(const uint4* data, size_t n, unsigned* sink);

GpuStatus probe_gpus() {
  GpuStatus status;
  status.cuda_build = true;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    status.problem = no_device_problem(err);
    return status;
  }
  status.device_count = count;
  if (count == 0) {
    status.problem = "no NVIDIA GPU found (cudaGetDeviceCount: 0 devices)";
    return status;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) status.device_name = prop.name;
  // A GPU older than the architectures this build compiled for
  // (CMAKE_CUDA_ARCHITECTURES, 90 by default) cannot run its kernels: say
  // so, and count no usable device, so that `auto` stays on the CPU rather
  // than failing at the first launch.
  cudaFuncAttributes attributes{};
  if (const cudaError_t image = cudaFuncGetAttributes(&attributes, read_stream); image != cudaSuccess) {
    cudaGetLastError();  // not sticky: clear it for the next call
    status.device_count = 0;
    status.problem = "GPU 0 (" + status.device_name + ", compute capability " + std::to_string(prop.major) + "." +
                     std::to_string(prop.minor) + ") cannot run this build's kernels (" + cudaGetErrorName(image) +
                     "): rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + std::to_string(prop.major * 10 + prop.minor) +
                     " (pip: -C cmake.define.CMAKE_CUDA_ARCHITECTURES=" + std::to_string(prop.major * 10 + prop.minor) +
                     ")";
  }
  return status;
}

}  // namespace

// Probed once a process: every engine's availability check asks, the
// H-tree's on each query batch, and the device properties cost far more
// than a batch of lookups.
GpuStatus gpu_status() {
  static const GpuStatus status = probe_gpus();
  return status;
}

namespace {

// Sums 16-byte words; the sum is written so the loads are not optimised away.
__global__ void read_stream(const uint4* data, size_t n, unsigned* sink) {
  unsigned acc = 0;
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    const uint4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = acc;
}

}  // namespace

double gpu_read_bandwidth() {
  if (gpu_status().device_count == 0) return 0.0;
  const size_t bytes = size_t{2} << 30;
  uint4* data = nullptr;
  unsigned* sink = nullptr;
  if (cudaMalloc(&data, bytes) != cudaSuccess) return 0.0;
  cudaMalloc(&sink, sizeof(unsigned));
  cudaMemset(data, 1, bytes);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> times;
  for (int r = 0; r < 11; ++r) {
    cudaEventRecord(start);
    read_stream<<<prop.multiProcessorCount * 8, 512>>>(data, bytes / sizeof(uint4), sink);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0) times.push_back(ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(data);
  cudaFree(sink);
  std::sort(times.begin(), times.end());
  return static_cast<double>(bytes) / (times[times.size() / 2] * 1e-3);
}

}  // namespace gpuolap
