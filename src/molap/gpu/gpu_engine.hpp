#pragma once
// The gpu engine: source-based area aggregation on an NVIDIA GPU (thesis
// §4.2) with the variants of GpuOptions. Plain C++: the CUDA parts are in
// .cu files; a build without CUDA has no gpu engine.
#include <memory>

#include "gpuolap/engine.hpp"

namespace gpuolap {

// `name` is gpu, or gpu-cdp (the CDP kernels: --kernel cdp or hybrid).
// Throws InputError for an unknown knob value.
std::unique_ptr<Engine> make_gpu_engine(const GpuOptions& options, const std::string& name = "gpu");

// Why the gpu engine cannot answer a query over these facts, or "" if it can.
std::string gpu_engine_limit(const FactTable& facts, const AggregationMap& map);

}  // namespace gpuolap
