#pragma once
// The gpu engine over several GPUs (multi_gpu_engine.cu): the facts split
// over the devices, a query run on all of them at once, the parts merged.
// Plain C++; make_gpu_engine (gpu_engine.hpp) makes it for --gpus.
#include <memory>
#include <string>
#include <vector>

#include "gpuolap/engine.hpp"

namespace gpuolap::gpu {

// A part on each of `devices` (a device listed twice gets two contexts on
// it). `always_spread`: every query is split over all of them; else only
// queries whose facts are worth splitting (auto), the others run on the
// first device.
std::unique_ptr<Engine> make_multi_gpu_engine(const GpuOptions& options, const std::string& name,
                                              const std::vector<int>& devices, bool always_spread);

}  // namespace gpuolap::gpu
