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
#include "gpuolap/exact_sum.hpp"
#include "gpuolap/fact_table.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {

struct DimensionMap {
  std::vector<uint32_t> offsets;    // base_count + 1 entries
  std::vector<uint32_t> positions;  // position in the dimension's list
  std::vector<double> weights;      // weight of the base under that element
  std::vector<uint64_t> relevant_prefix;  // bases < b with at least one target
  ValueBits weight_bits;            // the binary range of `weights` (the sums' grid)

  std::span<const uint32_t> positions_of(uint32_t base) const {
    return {positions.data() + offsets[base], offsets[base + 1] - offsets[base]};
  }
  std::span<const double> weights_of(uint32_t base) const {
    return {weights.data() + offsets[base], offsets[base + 1] - offsets[base]};
  }
  bool relevant(uint32_t base) const { return offsets[base + 1] != offsets[base]; }
  // A weight-1 total over every base: each base's one target is position
  // 0 with weight 1, so it changes neither target nor weight.
  bool total = false;
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
  // The dimensions that are not weight-1 totals, ascending: the ones a
  // cell's targets and weight depend on.
  const std::vector<size_t>& walked() const { return walked_; }
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
  // The grid a SUM of this map's terms over `facts` is added on: from the
  // measure's values and the walked dimensions' weights (exact_sum.hpp).
  SumGrid sum_grid(const FactTable& facts, size_t measure) const {
    ValueBits weights[kMaxDimensions];
    for (size_t i = 0; i < walked_.size(); ++i) weights[i] = dims_[walked_[i]]->weight_bits;
    return make_sum_grid(facts.value_bits(measure), std::span(weights, walked_.size()), facts.size());
  }

  // Visits every target of a cell key with its weight (the product of the
  // dimensions' weights, multiplied in dimension order so every engine gets
  // the same bits). Returns false, visiting nothing, if the cell is irrelevant.
  template <typename Visit>
  bool for_each_target(uint64_t key, Visit&& visit) const;

 private:
  // Shared: with a cache, with the cache and other queries' maps.
  std::vector<std::shared_ptr<const DimensionMap>> dims_;
  std::vector<size_t> walked_;  // the dimensions that are not totals, ascending
  KeyCodec codec_;
  std::vector<uint64_t> strides_;
  uint64_t target_count_ = 1;
};

template <typename Visit>
bool AggregationMap::for_each_target(uint64_t key, Visit&& visit) const {
  // Only the walked dimensions: a weight-1 total adds 0 to the target and
  // multiplies the weight by 1.0, which changes neither (B1 walks 1 of its
  // 8 dimensions, M1 none).
  const size_t k = walked_.size();  // at most kMaxDimensions (the schema refuses more)
  uint32_t begin[kMaxDimensions], end[kMaxDimensions], at[kMaxDimensions];
  for (size_t i = 0; i < k; ++i) {
    const DimensionMap& m = *dims_[walked_[i]];
    const uint32_t b = codec_.decode(key, walked_[i]);
    begin[i] = at[i] = m.offsets[b];
    end[i] = m.offsets[b + 1];
    if (begin[i] == end[i]) return false;
  }
  // Odometer over the cartesian product of the walked dimensions' target
  // lists, last dimension fastest; weights multiplied in dimension order so
  // every engine gets the same bits.
  for (;;) {
    uint64_t target = 0;
    double weight = 1.0;
    for (size_t i = 0; i < k; ++i) {
      const DimensionMap& m = *dims_[walked_[i]];
      target += uint64_t{m.positions[at[i]]} * strides_[walked_[i]];
      weight *= m.weights[at[i]];
    }
    visit(target, weight);
    size_t i = k;
    while (i > 0 && ++at[i - 1] == end[i - 1]) {
      --i;
      at[i] = begin[i];
    }
    if (i == 0) return true;
  }
}

}  // namespace gpuolap
