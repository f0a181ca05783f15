// Columns concatenated as tasks that may run at once: the ordered path of
// cpu-parallel appends its ranges' groups column by column, each column a
// task that reserves its memory once and copies the parts in order. Fresh
// memory costs a page fault per page when first written, which dominates
// a serial copy on a many-core host (lineitem SF 10's 15 M groups took
// 932 ms on the 64-core H200 host), so the columns fault in parallel.
#pragma once

#include <functional>
#include <vector>

namespace gpuolap::sql {

using Tasks = std::vector<std::function<void()>>;

// Appends the parts to `out` in order, reserving once.
template <class T>
void concatenate(std::vector<T>& out, const std::vector<const std::vector<T>*>& parts) {
  std::size_t total = out.size();
  for (const auto* p : parts) total += p->size();
  out.reserve(total);
  for (const auto* p : parts) out.insert(out.end(), p->begin(), p->end());
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
