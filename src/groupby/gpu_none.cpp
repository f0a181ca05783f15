// The GPU form in a build without CUDA: it says so.
#include <stdexcept>

#include "groupby/ordered_aggregation.hpp"

namespace gpuolap::groupby {

struct OrderedResidentColumns::Buffers {};
OrderedResidentColumns::OrderedResidentColumns(const OrderedInput&, int) {
  throw std::runtime_error("this gpuolap was built without CUDA: no GPU to keep columns on");
}
OrderedResidentColumns::~OrderedResidentColumns() = default;

bool gpu_available() { return false; }

OrderedResult aggregate_gpu(const OrderedInput&, const OrderedPlan&, const OrderedGpuOptions&) {
  throw std::runtime_error("this gpuolap was built without CUDA: ordered aggregation runs on cpu-serial or cpu-parallel");
}

}  // namespace gpuolap::groupby
