#pragma once
// Large columns on huge pages: a vector sized for values about to be
// written, its memory advised to transparent huge pages first. A fault per
// 4 KiB page was most of the time of opening a table file and of generating
// SF 10 lineitem (17 s of system time for 5 GB). Where the kernel does not
// grant huge pages the advice is ignored.
//
// The memory is also first touched on all threads before the vector's own
// (serial) zero-fill, which then runs over resident pages: 15 M groups took
// 70.6 ms to reach their two 120 MB result columns on a 16-core host with
// the faults on one thread, 37.5 ms with them on all.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace gpuolap {

// Writes zeros over `bytes` bytes at `data` in parallel blocks (TBB), so
// that their pages are faulted in by every thread at once. Below 8 MB it
// writes nothing: the caller's own fill faults those few pages in.
void touch_in_parallel(void* data, std::size_t bytes);

template <class T>
void resize_on_huge_pages(std::vector<T>& v, std::size_t n) {
  static_assert(std::is_trivially_copyable_v<T>, "only columns of plain values");
  if (n <= v.size()) {
    v.resize(n);
    return;
  }
  v.reserve(n);
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data());
  const std::uintptr_t end = begin + n * sizeof(T);
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  if (end > first + kHuge) ::madvise(reinterpret_cast<void*>(first), (end - first) & ~(kHuge - 1), MADV_HUGEPAGE);
  // The capacity past the current size, written as raw bytes before any
  // element lives there; resize then value-initializes the elements over
  // the resident pages (one more pass, on one thread).
  touch_in_parallel(v.data() + v.size(), (n - v.size()) * sizeof(T));
  v.resize(n);
}

}  // namespace gpuolap
