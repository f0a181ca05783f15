// The gpu H-tree in a build without CUDA: not available.
#include "gpuolap/error.hpp"
#include "htree/gpu/htree_gpu.hpp"

namespace gpuolap::htree {

bool gpu_available() { return false; }

struct GpuHTree::Impl {};

namespace {
[[noreturn]] void unavailable() { throw InputError("the gpu H-tree engine is not in this build (built without CUDA)"); }
}  // namespace

GpuHTree::GpuHTree(int, GpuKnobs) { unavailable(); }
GpuHTree::~GpuHTree() = default;
void GpuHTree::build(const std::vector<std::uint32_t>&, const CodedTuples&) { unavailable(); }
void GpuHTree::upload(const HTree&) { unavailable(); }
void GpuHTree::reserve_for_updates() { unavailable(); }
void GpuHTree::update(const std::vector<std::uint32_t>&, const CodedTuples&) { unavailable(); }
Answers GpuHTree::query(const QueryBatch&, QueryStats*) { unavailable(); }
void GpuHTree::download(HTree&) const { unavailable(); }
std::size_t GpuHTree::leaf_count() const { return 0; }
std::size_t GpuHTree::node_count() const { return 0; }
void GpuHTree::set_timing(bool) {}
std::vector<std::pair<std::string, double>> GpuHTree::stages() const { return {}; }
std::string GpuHTree::device_name() const { return {}; }

}  // namespace gpuolap::htree
