#pragma once
// The errors a GPU call throws, in plain C++ so that code built without
// nvcc (the CLI, the server) can tell them apart: running out of device
// memory has its own type, which the gpu engine catches to aggregate an
// area in smaller chunks and `bench` reports as a row that does not fit.
#include <stdexcept>

namespace gpuolap {

class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class GpuOutOfMemory : public GpuError {
 public:
  using GpuError::GpuError;
};

}  // namespace gpuolap
