// A build without CUDA has no gpu engine; the registry says so before this
// is reached, so reaching it is an internal error.
#include <stdexcept>

#include "gpu_engine.hpp"

namespace gpuolap {

std::unique_ptr<Engine> make_gpu_engine(const GpuOptions&, const std::string&, int, bool) {
  throw std::logic_error("make_gpu_engine: this gpuolap was built without CUDA");
}

std::string gpu_engine_limit(const FactTable&, const AggregationMap&, size_t) { return "this gpuolap was built without CUDA"; }

}  // namespace gpuolap
