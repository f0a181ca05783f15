#pragma once
// The gpu engine: source-based area aggregation on an NVIDIA GPU (thesis
// §4.2) with the variants of GpuOptions. Plain C++: the CUDA parts are in
// .cu files; a build without CUDA has no gpu engine.
#include <memory>

#include "gpuolap/engine.hpp"

namespace gpuolap {

// `name` is gpu, or gpu-cdp (the CDP kernels: --kernel cdp or hybrid), on
// the GPUs of options.gpus: with several, the facts are split over them
// (multi_gpu_engine.hpp); unset, GPU `device` (-1: the current one), or,
// with `every_gpu_when_faster` (auto's engine) on a machine with several
// GPUs, all of them, each query split only when that is faster. Each
// engine has a device context of its own (gpu/runtime/device_context.cuh),
// so several, on one GPU or on several, live side by side. Throws
// InputError for a knob out of range or a device that does not exist.
std::unique_ptr<Engine> make_gpu_engine(const GpuOptions& options, const std::string& name = "gpu", int device = -1,
                                        bool every_gpu_when_faster = false);

// Why the gpu engine over `devices` GPUs cannot answer a query over these
// facts, or "" if it can. One GPU holds fewer than 2^32 facts (the kernels
// index them with 32 bits); several hold a table split over them.
std::string gpu_engine_limit(const FactTable& facts, const AggregationMap& map, size_t devices = 1);

}  // namespace gpuolap
