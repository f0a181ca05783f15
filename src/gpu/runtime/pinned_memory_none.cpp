// A build without CUDA: no pinned memory, the default resource.
#include "pinned_memory.hpp"

namespace gpuolap::gpu {

std::pmr::memory_resource* pinned_memory() { return std::pmr::new_delete_resource(); }
bool is_pinned_memory(const std::pmr::memory_resource*) { return false; }

}  // namespace gpuolap::gpu
