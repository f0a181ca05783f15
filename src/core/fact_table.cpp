#include "gpuolap/fact_table.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>

namespace gpuolap {

namespace {
std::atomic<uint64_t> next_table_id{0};
}  // namespace

FactTable::FactTable(const KeyCodec& codec, std::vector<uint64_t> keys,
                     std::vector<std::vector<double>> values, size_t page_size)
    : id_(next_table_id.fetch_add(1) + 1),
      keys_(std::move(keys)),
      values_(std::move(values)),
      page_size_(page_size),
      dims_(codec.dimension_count()) {
  for (const auto& column : values_)
    if (column.size() != keys_.size()) throw std::logic_error("FactTable: column size mismatch");
  const size_t pages = page_count();
  page_min_.assign(pages * dims_, UINT32_MAX);
  page_max_.assign(pages * dims_, 0);
  // Pages are independent: summarise them in parallel (a scale-1 Biker cube
  // has 17,000 pages of 16,384 cells).
  tbb::parallel_for(tbb::blocked_range<size_t>(0, pages), [&](const tbb::blocked_range<size_t>& range) {
    for (size_t p = range.begin(); p != range.end(); ++p) {
      uint32_t* lo = &page_min_[p * dims_];
      uint32_t* hi = &page_max_[p * dims_];
      for (size_t i = page_begin(p); i < page_end(p); ++i) {
        for (size_t d = 0; d < dims_; ++d) {
          const uint32_t b = codec.decode(keys_[i], d);
          lo[d] = std::min(lo[d], b);
          hi[d] = std::max(hi[d], b);
        }
      }
    }
  });
  for (const auto& column : values_)
    value_bits_.push_back(tbb::parallel_reduce(
        tbb::blocked_range<size_t>(0, column.size(), size_t{1} << 16), ValueBits{},
        [&](const tbb::blocked_range<size_t>& r, ValueBits b) {
          for (size_t i = r.begin(); i != r.end(); ++i) b.add(column[i]);
          return b;
        },
        [](ValueBits a, const ValueBits& b) {
          a.merge(b);
          return a;
        }));
}

void FactTable::renew_id() { id_ = next_table_id.fetch_add(1) + 1; }

size_t FactTable::find(uint64_t key) const {
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key);
  if (it == keys_.end() || *it != key) return keys_.size();
  return static_cast<size_t>(it - keys_.begin());
}

std::vector<FactSlice> FactTable::split(size_t parts) const {
  const size_t pages = page_count();
  parts = std::max<size_t>(1, std::min(parts, pages));
  std::vector<FactSlice> slices(parts);
  for (size_t i = 0; i < parts; ++i) {
    FactSlice& s = slices[i];
    s.begin = page_begin(pages * i / parts);
    s.end = i + 1 == parts ? size() : page_begin(pages * (i + 1) / parts);
    // The first part owns every key below the second's first; the last,
    // every key from its own first on.
    s.key_low = i == 0 ? 0 : keys_[s.begin];
    s.open_end = i + 1 == parts;
    if (!s.open_end) s.key_high = keys_[s.end];
  }
  return slices;
}

size_t FactTable::bytes() const {
  return keys_.size() * sizeof(uint64_t) * (1 + values_.size()) +
         (page_min_.size() + page_max_.size()) * sizeof(uint32_t);
}

}  // namespace gpuolap
