#pragma once
// The gpu engine: source-based area aggregation on an NVIDIA GPU (thesis
// §4.2) with the variants of GpuOptions. Plain C++: the CUDA parts are in
// .cu files; a build without CUDA has no gpu engine.
#include <memory>

#include "gpuolap/engine.hpp"

namespace gpuolap {

// `name` is gpu, or gpu-cdp (the CDP kernels: --kernel cdp or hybrid), on
// GPU `device` (-1: the current one). Each engine has a device context of
// its own (gpu/runtime/device_context.cuh), so several, on one GPU or on
// several, live side by side. Throws InputError for a knob out of range.
std::unique_ptr<Engine> make_gpu_engine(const GpuOptions& options, const std::string& name = "gpu", int device = -1);

// Why the gpu engine cannot answer a query over these facts, or "" if it can.
std::string gpu_engine_limit(const FactTable& facts, const AggregationMap& map);

}  // namespace gpuolap
