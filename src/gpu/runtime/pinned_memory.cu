#include "pinned_memory.hpp"

#include <cuda_runtime.h>

#include <bit>
#include <map>
#include <mutex>
#include <new>
#include <vector>

#include "device_info.hpp"

namespace gpuolap::gpu {
namespace {

class PinnedResource final : public std::pmr::memory_resource {
 public:
  static constexpr std::size_t kSmallestClass = std::size_t{1} << 16;
  static constexpr std::size_t kIdleLimit = std::size_t{256} << 20;

 private:
  static std::size_t size_class(std::size_t bytes) { return std::bit_ceil(std::max(bytes, kSmallestClass)); }

  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    // cudaHostAlloc returns page-aligned memory.
    if (alignment > 4096) throw std::bad_alloc();
    const std::size_t cls = size_class(bytes);
    {
      std::lock_guard lock(mutex_);
      auto& idle = idle_[cls];
      if (!idle.empty()) {
        void* p = idle.back();
        idle.pop_back();
        idle_bytes_ -= cls;
        return p;
      }
    }
    void* p = nullptr;
    if (cudaHostAlloc(&p, cls, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it for the next call
      throw std::bad_alloc();
    }
    return p;
  }

  void do_deallocate(void* p, std::size_t bytes, std::size_t) override {
    const std::size_t cls = size_class(bytes);
    {
      std::lock_guard lock(mutex_);
      if (idle_bytes_ + cls <= kIdleLimit) {
        idle_[cls].push_back(p);
        idle_bytes_ += cls;
        return;
      }
    }
    cudaFreeHost(p);
  }

  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }

  std::mutex mutex_;
  std::map<std::size_t, std::vector<void*>> idle_;
  std::size_t idle_bytes_ = 0;
};

// Never destroyed: idle blocks are the process's until it exits, and a
// cudaFreeHost after the runtime's own teardown would fail.
PinnedResource* the_resource() {
  static PinnedResource* r = gpu_status().device_count > 0 ? new PinnedResource : nullptr;
  return r;
}

}  // namespace

std::pmr::memory_resource* pinned_memory() {
  if (PinnedResource* r = the_resource()) return r;
  return std::pmr::new_delete_resource();
}

bool is_pinned_memory(const std::pmr::memory_resource* r) { return r && r == the_resource(); }

}  // namespace gpuolap::gpu
