#include "device_info.hpp"

namespace gpuolap {

GpuStatus gpu_status() {
  GpuStatus status;
  status.problem = "this gpuolap was built without CUDA";
  return status;
}

double gpu_read_bandwidth() { return 0.0; }

}  // namespace gpuolap
