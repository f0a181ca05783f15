#pragma once
// Large columns on huge pages: a vector sized for values about to be
// written, its memory advised to transparent huge pages first. A fault per
// 4 KiB page was most of the time of opening a table file and of generating
// SF 10 lineitem (17 s of system time for 5 GB). Where the kernel does not
// grant huge pages the advice is ignored.
#include <sys/mman.h>

#include <cstdint>
#include <vector>

namespace gpuolap {

template <class T>
void resize_on_huge_pages(std::vector<T>& v, std::size_t n) {
  v.reserve(n);
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t end = begin + n * sizeof(T);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  if (end > first + kHuge) ::madvise(reinterpret_cast<void*>(first), (end - first) & ~(kHuge - 1), MADV_HUGEPAGE);
  v.resize(n);
}

}  // namespace gpuolap
