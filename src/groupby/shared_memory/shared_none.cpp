// The shared-memory operators' GPU form in a build without CUDA: it says so.
#include <stdexcept>

#include "groupby/shared_memory/shared_aggregation.hpp"

namespace gpuolap::groupby {

bool shared_gpu_available() { return false; }
std::string shared_gpu_problem() { return "this gpuolap was built without CUDA"; }

struct SharedResidentColumns::Buffers {};
SharedResidentColumns::SharedResidentColumns(const std::uint32_t*, std::size_t, const void*, SharedValueType, int) {
  throw std::runtime_error("this gpuolap was built without CUDA: no GPU to keep columns on");
}
SharedResidentColumns::~SharedResidentColumns() = default;
const std::uint32_t* SharedResidentColumns::codes() const { return nullptr; }
const void* SharedResidentColumns::values() const { return nullptr; }
int SharedResidentColumns::device() const { return -1; }

GroupedResult grouped_gpu(const GroupedInput&, const SharedGpuOptions&) {
  throw std::runtime_error("this gpuolap was built without CUDA: grouped aggregation runs on cpu-serial");
}
JoinResult join_gpu(const JoinInput&, const SharedGpuOptions&) {
  throw std::runtime_error("this gpuolap was built without CUDA: the foreign-key join runs on cpu-serial");
}

}  // namespace gpuolap::groupby
