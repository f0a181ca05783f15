#include "gpuolap/aggregation_map.hpp"

#include <fmt/format.h>

#include <cmath>

#include "gpuolap/error.hpp"

namespace gpuolap {

namespace {

DimensionMap build_dimension_map(const Dimension& dim, const std::vector<ElementId>& list) {
  // Count, then fill: entries of a base are in list order.
  std::vector<const std::vector<std::pair<BaseId, double>>*> weights;
  weights.reserve(list.size());
  // Every weight is finite: Dimension::build refuses a hierarchy where one overflows.
  for (ElementId e : list) weights.push_back(&dim.base_weights(e));

  DimensionMap map;
  map.offsets.assign(dim.base_count() + 1, 0);
  for (const auto* w : weights)
    for (const auto& [b, _] : *w) ++map.offsets[b + 1];
  for (size_t b = 0; b < dim.base_count(); ++b) map.offsets[b + 1] += map.offsets[b];
  map.positions.resize(map.offsets.back());
  map.weights.resize(map.offsets.back());
  std::vector<uint32_t> fill(map.offsets.begin(), map.offsets.end() - 1);
  for (uint32_t pos = 0; pos < weights.size(); ++pos) {
    for (const auto& [b, w] : *weights[pos]) {
      map.positions[fill[b]] = pos;
      map.weights[fill[b]] = w;
      ++fill[b];
    }
  }
  map.weight_bits = value_bits(map.weights);
  map.total = true;
  for (size_t b = 0; b < dim.base_count() && map.total; ++b)
    map.total = map.offsets[b + 1] == map.offsets[b] + 1 && map.positions[map.offsets[b]] == 0 &&
                map.weights[map.offsets[b]] == 1.0;
  map.relevant_prefix.assign(dim.base_count() + 1, 0);
  for (uint32_t b = 0; b < dim.base_count(); ++b)
    map.relevant_prefix[b + 1] = map.relevant_prefix[b] + (map.relevant(b) ? 1 : 0);
  return map;
}

}  // namespace

std::shared_ptr<const DimensionMap> DimensionMapCache::get(size_t d, const std::vector<ElementId>& list,
                                                           const std::function<DimensionMap()>& build) {
  {
    std::lock_guard lock(mutex_);
    const auto it = maps_.find({d, list});
    if (it != maps_.end()) {
      it->second.used = ++uses_;
      ++stats_.hits;
      return it->second.map;
    }
    ++stats_.misses;
  }
  // Built outside the lock: two queries may build the same map at once;
  // the second keeps the first's.
  auto map = std::make_shared<const DimensionMap>(build());
  const size_t bytes = map->offsets.size() * sizeof(uint32_t) + map->positions.size() * sizeof(uint32_t) +
                       map->weights.size() * sizeof(double) + map->relevant_prefix.size() * sizeof(uint64_t) +
                       list.size() * sizeof(ElementId);
  std::lock_guard lock(mutex_);
  const auto [it, fresh] = maps_.try_emplace({d, list}, Entry{map, bytes, ++uses_});
  if (!fresh) return it->second.map;
  bytes_ += bytes;
  // Past the budget, the least recently used go (never the one just made).
  while (bytes_ > most_bytes_ && maps_.size() > 1) {
    auto oldest = maps_.end();
    for (auto e = maps_.begin(); e != maps_.end(); ++e)
      if (e != it && (oldest == maps_.end() || e->second.used < oldest->second.used)) oldest = e;
    bytes_ -= oldest->second.bytes;
    maps_.erase(oldest);
  }
  return map;
}

DimensionMapCache::Stats DimensionMapCache::stats() const {
  std::lock_guard lock(mutex_);
  Stats s = stats_;
  s.bytes = bytes_;
  s.maps = maps_.size();
  return s;
}

AggregationMap::AggregationMap(const Schema& schema, const AreaQuery& query, DimensionMapCache* cache)
    : codec_(schema.codec()) {
  const size_t k = schema.dimension_count();
  if (query.area.size() != k) throw std::logic_error("AggregationMap: area of the wrong rank");
  std::vector<uint32_t> list_sizes(k);
  strides_.resize(k);
  for (size_t d = 0; d < k; ++d) {
    list_sizes[d] = static_cast<uint32_t>(query.area[d].size());
    if (list_sizes[d] == 0)
      throw InputError(fmt::format("area: dimension '{}' has an empty element list",
                                   schema.dimension(d).name()));
  }
  // Strides, last dimension fastest; refuse areas whose numbering overflows.
  constexpr uint64_t kMaxTargets = uint64_t{1} << 63;
  uint64_t stride = 1;
  for (size_t d = k; d-- > 0;) {
    strides_[d] = stride;
    if (stride > kMaxTargets / list_sizes[d])
      throw InputError("area: more than 2^63 target cells; narrow the element lists");
    stride *= list_sizes[d];
  }
  target_count_ = stride;
  dims_.reserve(k);
  for (size_t d = 0; d < k; ++d) {
    const auto build = [&] { return build_dimension_map(schema.dimension(d), query.area[d]); };
    dims_.push_back(cache ? cache->get(d, query.area[d], build) : std::make_shared<const DimensionMap>(build()));
    if (!dims_.back()->total) walked_.push_back(d);
  }
}

}  // namespace gpuolap
