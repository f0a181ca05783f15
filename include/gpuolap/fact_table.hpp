#pragma once
// The facts of a cube in columnar form, built for the GPU engines: one sorted
// 64-bit key column and one double column per measure, cut into fixed-size
// pages with per-page summaries (the min and max base id of each dimension)
// so that engines can skip pages that hold no relevant cell.
//
// A measure value that is absent is stored as NaN: input values are always
// finite, so NaN cannot be confused with data, and a cell costs exactly
// 8 bytes of key plus 8 bytes per measure.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "gpuolap/exact_sum.hpp"
#include "gpuolap/key_codec.hpp"

namespace gpuolap {

inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();
inline bool has_value(double v) { return !std::isnan(v); }

inline constexpr size_t kDefaultPageSize = 16384;

// The cells of a table written since an earlier table, its base: what an
// engine holding a copy of the base, or of a later table of the same base
// (the gpu engine's device copy), must patch instead of copying the whole
// table again. Cumulative since the base; the entries are sorted by key. A
// cell deleted since the base has all values NaN.
struct TableChanges {
  uint64_t base_id = 0;     // FactTable::id() of the base
  uint64_t generation = 0;  // grows with every merge since the base
  std::vector<uint64_t> keys;
  std::vector<uint64_t> generations;   // the merge that last changed the cell
  std::vector<std::vector<double>> values;  // [measure][entry]; all NaN: the cell was deleted
  size_t size() const { return keys.size(); }
};

// A part of a table when the facts are split over several devices (the
// several-GPU engine, molap/gpu/multi_gpu_engine.cu): the cells
// [begin, end) of the table it was cut from — whole pages, so that the
// table's page summaries are the part's — and the keys it owns,
// [key_low, key_high) (to the end when `open_end`): a cell written later
// belongs to the part that owns its key. The default is the whole table.
struct FactSlice {
  size_t begin = 0;
  size_t end = SIZE_MAX;  // clipped to the table
  uint64_t key_low = 0;
  uint64_t key_high = 0;
  bool open_end = true;
  bool owns(uint64_t key) const { return key >= key_low && (open_end || key < key_high); }
  bool operator==(const FactSlice&) const = default;
};

class FactTable {
 public:
  FactTable() = default;
  // Takes keys already sorted and unique; values[m][i] belongs to keys[i].
  FactTable(const KeyCodec& codec, std::vector<uint64_t> keys,
            std::vector<std::vector<double>> values, size_t page_size = kDefaultPageSize);

  size_t size() const { return keys_.size(); }
  size_t measure_count() const { return values_.size(); }
  size_t dimension_count() const { return dims_; }
  std::span<const uint64_t> keys() const { return keys_; }
  std::span<const double> values(size_t measure) const { return values_[measure]; }
  // The binary range of a measure's values (the grid its sums are added on).
  const ValueBits& value_bits(size_t measure) const { return value_bits_[measure]; }

  size_t page_size() const { return page_size_; }
  size_t page_count() const { return (keys_.size() + page_size_ - 1) / page_size_; }
  // Cells [begin, end) of a page.
  size_t page_begin(size_t page) const { return page * page_size_; }
  size_t page_end(size_t page) const { return std::min(keys_.size(), (page + 1) * page_size_); }
  // Smallest and largest base id of dimension d on a page.
  uint32_t page_min(size_t page, size_t d) const { return page_min_[page * dims_ + d]; }
  uint32_t page_max(size_t page, size_t d) const { return page_max_[page * dims_ + d]; }

  // Index of `key`, or size() when absent.
  size_t find(uint64_t key) const;
  // Bytes held: key and value columns plus page summaries.
  size_t bytes() const;
  // Identifies this table's contents: every constructed table gets a new id,
  // copies share it. Device-resident copies are keyed by it.
  uint64_t id() const { return id_; }
  // Gives this copy an id of its own (FactStore does, so that the changes
  // of two stores made from copies of one table never share a base).
  void renew_id();

  // The table cut into at most `parts` slices of whole pages, balanced by
  // cells (every cell takes the same bytes), in key order; fewer when the
  // table has fewer pages (one for an empty table).
  std::vector<FactSlice> split(size_t parts) const;

  // How this table differs from its base, when the FactStore that made it
  // knows (null otherwise: a copy must take the whole table).
  const std::shared_ptr<const TableChanges>& changes() const { return changes_; }
  void set_changes(std::shared_ptr<const TableChanges> c) { changes_ = std::move(c); }

 private:
  uint64_t id_ = 0;
  std::shared_ptr<const TableChanges> changes_;
  std::vector<uint64_t> keys_;
  std::vector<std::vector<double>> values_;
  std::vector<ValueBits> value_bits_;
  size_t page_size_ = kDefaultPageSize;
  size_t dims_ = 0;
  std::vector<uint32_t> page_min_;
  std::vector<uint32_t> page_max_;
};

}  // namespace gpuolap
