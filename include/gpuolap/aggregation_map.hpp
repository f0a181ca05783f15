#pragma once
// The aggregation map of an area query, built once per query on the host and
// shared by every engine: for each dimension, base id -> list of
// (position in that dimension's element list, non-zero weight), stored as CSR.
// A target cell is numbered by its positions in mixed radix, first dimension
// slowest, so ascending target numbers are the area's output order.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "gpuolap/area_query.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {

struct DimensionMap {
  std::vector<uint32_t> offsets;    // base_count + 1 entries
  std::vector<uint32_t> positions;  // position in the dimension's list
  std::vector<double> weights;      // weight of the base under that element
  std::vector<uint64_t> relevant_prefix;  // bases < b with at least one target

  std::span<const uint32_t> positions_of(uint32_t base) const {
    return {positions.data() + offsets[base], offsets[base + 1] - offsets[base]};
  }
  std::span<const double> weights_of(uint32_t base) const {
    return {weights.data() + offsets[base], offsets[base + 1] - offsets[base]};
  }
  bool relevant(uint32_t base) const { return offsets[base + 1] != offsets[base]; }
  // Whether any base in [lo, hi] has a target.
  bool any_relevant(uint32_t lo, uint32_t hi) const {
    return relevant_prefix[hi + 1] != relevant_prefix[lo];
  }
};

// The dimension maps of element lists asked before, kept for the next
// query that asks the same list of the same dimension (a dashboard asks
// its areas again and again): building one walks every base under the
// list's elements (M3's 2,001 machine elements: 2.5 ms on the H100 host).
// One cache per schema (a cube service holds one). Thread-safe; holds at
// most `most_bytes` of maps, the least recently used dropped first.
class DimensionMapCache {
 public:
  explicit DimensionMapCache(size_t most_bytes = size_t{256} << 20) : most_bytes_(most_bytes) {}
  // The map of `list` in dimension d, built by `build` when not kept.
  std::shared_ptr<const DimensionMap> get(size_t d, const std::vector<ElementId>& list,
                                          const std::function<DimensionMap()>& build);
  struct Stats {
    uint64_t hits = 0, misses = 0;
    size_t bytes = 0, maps = 0;
  };
  Stats stats() const;

 private:
  struct Entry {
    std::shared_ptr<const DimensionMap> map;
    size_t bytes;
    uint64_t used;  // the use counter when last asked for
  };
  mutable std::mutex mutex_;
  std::map<std::pair<size_t, std::vector<ElementId>>, Entry> maps_;
  size_t most_bytes_;
  size_t bytes_ = 0;
  uint64_t uses_ = 0;
  Stats stats_;
};

class AggregationMap {
 public:
  // Throws InputError when the area has more than 2^63 target cells. With
  // a cache (of this schema), dimension maps asked before are reused.
  AggregationMap(const Schema& schema, const AreaQuery& query, DimensionMapCache* cache = nullptr);

  size_t dimension_count() const { return dims_.size(); }
  const DimensionMap& dimension(size_t d) const { return *dims_[d]; }
  const KeyCodec& codec() const { return codec_; }
  // Multiplier of a position of dimension d in a target number.
  uint64_t stride(size_t d) const { return strides_[d]; }
  uint64_t target_count() const { return target_count_; }
  // Targets a cell key reaches: the product of its bases' list lengths (0
  // for a cell outside the area).
  uint64_t fan_out(uint64_t key) const {
    uint64_t n = 1;
    for (size_t d = 0; d < dims_.size() && n > 0; ++d) {
      const uint32_t b = codec_.decode(key, d);
      n *= dims_[d]->offsets[b + 1] - dims_[d]->offsets[b];
    }
    return n;
  }
  // The same map with every weight replaced by its magnitude.
  AggregationMap with_absolute_weights() const;

  // Visits every target of a cell key with its weight (the product of the
  // dimensions' weights, multiplied in dimension order so every engine gets
  // the same bits). Returns false, visiting nothing, if the cell is irrelevant.
  template <typename Visit>
  bool for_each_target(uint64_t key, Visit&& visit) const;

 private:
  // Shared: with a cache, with the cache and other queries' maps.
  std::vector<std::shared_ptr<const DimensionMap>> dims_;
  KeyCodec codec_;
  std::vector<uint64_t> strides_;
  uint64_t target_count_ = 1;
};

template <typename Visit>
bool AggregationMap::for_each_target(uint64_t key, Visit&& visit) const {
  const size_t k = dims_.size();  // at most kMaxDimensions (the schema refuses more)
  uint32_t begin[kMaxDimensions], end[kMaxDimensions], at[kMaxDimensions];
  for (size_t d = 0; d < k; ++d) {
    const uint32_t b = codec_.decode(key, d);
    begin[d] = dims_[d]->offsets[b];
    end[d] = dims_[d]->offsets[b + 1];
    if (begin[d] == end[d]) return false;
    at[d] = begin[d];
  }
  // Odometer over the cartesian product of the dimensions' target lists,
  // last dimension fastest.
  for (;;) {
    uint64_t target = 0;
    double weight = 1.0;
    for (size_t d = 0; d < k; ++d) {
      target += uint64_t{dims_[d]->positions[at[d]]} * strides_[d];
      weight *= dims_[d]->weights[at[d]];
    }
    visit(target, weight);
    size_t d = k;
    while (d > 0) {
      --d;
      if (++at[d] < end[d]) break;
      at[d] = begin[d];
      if (d == 0) return true;
    }
    if (k == 0) return true;
  }
}

}  // namespace gpuolap
