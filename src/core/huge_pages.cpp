#include "gpuolap/huge_pages.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstring>

namespace gpuolap {

void touch_in_parallel(void* data, std::size_t bytes) {
  constexpr std::size_t kBlock = std::size_t{2} << 20;  // a huge page
  auto* base = static_cast<unsigned char*>(data);
  // Fewer pages are left to the caller's own fill: touching them here too
  // would only write them twice.
  if (bytes < 4 * kBlock) return;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bytes, kBlock), [&](const tbb::blocked_range<std::size_t>& r) {
    std::memset(base + r.begin(), 0, r.size());
  });
}

}  // namespace gpuolap
