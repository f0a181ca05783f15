// A hash table from 64-bit group ids (a perfect hash's, too many for an
// array) to group numbers: open addressing with linear probing in two flat
// arrays, grown at half full. std::unordered_map, which it replaces,
// allocated a node per group and missed the cache twice per lookup: the
// merge of two threads' 1.38 M groups of sales-flat's finest set took
// 907 ms on the 2-core VM.
#pragma once

#include <cstdint>
#include <vector>

namespace gpuolap::sql {

class IdTable {
 public:
  static constexpr std::uint32_t kAbsent = ~std::uint32_t{0};

  // The group of `id`, kAbsent if it has none yet (then the caller stores
  // one through the reference, before the next call: a call may grow the
  // table and move its slots).
  std::uint32_t& operator[](std::uint64_t id) {
    if (2 * (used_ + 1) > groups_.size()) grow();
    std::size_t at = slot_of(id);
    while (groups_[at] != kAbsent && ids_[at] != id) at = (at + 1) & (groups_.size() - 1);
    if (groups_[at] == kAbsent) {
      ids_[at] = id;
      ++used_;
    }
    return groups_[at];
  }
  std::size_t size() const { return used_; }

 private:
  std::size_t slot_of(std::uint64_t id) const {
    return static_cast<std::size_t>((id * 0x9E3779B97F4A7C15ull) >> shift_);  // Fibonacci hashing: the high bits
  }
  void grow() {
    std::vector<std::uint64_t> ids = std::move(ids_);
    std::vector<std::uint32_t> groups = std::move(groups_);
    const std::size_t capacity = groups.empty() ? 1024 : 2 * groups.size();
    shift_ = 64;
    for (std::size_t c = capacity; c > 1; c >>= 1) --shift_;
    ids_.assign(capacity, 0);
    groups_.assign(capacity, kAbsent);
    used_ = 0;
    for (std::size_t i = 0; i < groups.size(); ++i)
      if (groups[i] != kAbsent) {
        std::size_t at = slot_of(ids[i]);
        while (groups_[at] != kAbsent) at = (at + 1) & (capacity - 1);
        ids_[at] = ids[i];
        groups_[at] = groups[i];
        ++used_;
      }
  }

  std::vector<std::uint64_t> ids_;
  std::vector<std::uint32_t> groups_;
  std::size_t used_ = 0;
  int shift_ = 64;
};

}  // namespace gpuolap::sql
