// Columns concatenated as tasks that may run at once: the ordered path of
// cpu-parallel appends its ranges' groups column by column, each column a
// task that sizes its memory once and copies the parts into place. Fresh
// memory costs a page fault per page when first written, which dominates
// a serial copy on a many-core host (lineitem SF 10's 15 M groups took
// 932 ms on the 64-core H200 host), so the columns fault in parallel; and
// within a column of plain values, its pages are faulted in and its parts
// copied on all threads too (one task per column left a 120 MB column of
// 15 M groups to one thread: 80-95 ms on the H100's 16-core host).
#pragma once

#include <tbb/parallel_for.h>

#include <algorithm>
#include <functional>
#include <type_traits>
#include <vector>

#include "gpuolap/huge_pages.hpp"

namespace gpuolap::sql {

using Tasks = std::vector<std::function<void()>>;

// Appends the parts to `out` in order, sizing it once.
template <class T>
void concatenate(std::vector<T>& out, const std::vector<const std::vector<T>*>& parts) {
  std::size_t total = out.size();
  for (const auto* p : parts) total += p->size();
  if constexpr (std::is_trivially_copyable_v<T>) {
    std::vector<std::size_t> at(parts.size());  // where each part goes
    std::size_t next = out.size();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      at[i] = next;
      next += parts[i]->size();
    }
    resize_on_huge_pages(out, total);
    tbb::parallel_for(std::size_t{0}, parts.size(),
                      [&](std::size_t i) { std::copy(parts[i]->begin(), parts[i]->end(), out.begin() + at[i]); });
  } else {
    out.reserve(total);
    for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
  }
}

// A task that concatenates the member `member` of each part onto `out`'s,
// or none when every part's member is empty.
template <class Owner, class T>
void add_concatenation(Tasks& tasks, std::vector<T>& out, const std::vector<const Owner*>& parts,
                       std::vector<T> Owner::*member) {
  std::vector<const std::vector<T>*> columns;
  bool any = false;
  for (const Owner* p : parts) {
    columns.push_back(&(p->*member));
    any = any || !(p->*member).empty();
  }
  if (any) tasks.push_back([&out, columns = std::move(columns)] { concatenate(out, columns); });
}

}  // namespace gpuolap::sql
