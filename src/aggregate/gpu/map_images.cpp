// The gpu engine's maps as byte images (map_images.hpp).
#include "map_images.hpp"

#include <algorithm>

namespace gpuolap::gpu {

namespace {

// One dimension of a map in CSR form, for the kernels' byte image.
struct CsrDimension {
  int shift;
  uint64_t mask;
  uint64_t stride;
  const std::vector<uint32_t>& offsets;
  const std::vector<uint32_t>& positions;
  const std::vector<double>& weights;
};

// Keeps the dimensions that are not totals, in order (weights still multiply
// in dimension order: a total's weight is 1).
MapImage build_map_image(const std::vector<CsrDimension>& dims) {
  std::vector<const CsrDimension*> walked;
  for (const CsrDimension& c : dims)
    if (!is_total(c.offsets, c.positions, c.weights)) walked.push_back(&c);
  MapImage m;
  m.view.single = true;
  for (const CsrDimension* walked_dim : walked) {
    const CsrDimension& c = *walked_dim;
    const int a = m.view.dims++;
    m.view.shift[a] = c.shift;
    m.view.mask[a] = c.mask;
    m.view.stride[a] = c.stride;
    m.view.offsets_at[a] = m.image.append(c.offsets);
    m.view.positions_at[a] = m.image.append(c.positions);
    m.view.weights_at[a] = m.image.append(c.weights);
    for (size_t b = 0; b + 1 < c.offsets.size() && m.view.single; ++b) m.view.single = c.offsets[b + 1] - c.offsets[b] <= 1;
  }
  if (m.is_lean()) {
    std::vector<uint32_t> positions;
    std::vector<std::vector<double>> weights;
    int a = 0;
    uint64_t largest_target = 0;
    m.narrow = true;
    for (const CsrDimension* walked_dim : walked) {
      const CsrDimension& c = *walked_dim;
      m.lean.shift[a] = c.shift;
      m.lean.mask[a] = c.mask;
      m.lean.first[a] = static_cast<uint32_t>(positions.size());
      std::vector<double> w(c.offsets.size() - 1, 0.0);
      bool all_one = true;
      uint64_t largest_part = 0;
      for (size_t b = 0; b + 1 < c.offsets.size(); ++b) {
        const bool has = c.offsets[b + 1] > c.offsets[b];
        const uint64_t part = has ? uint64_t{c.positions[c.offsets[b]]} * c.stride : 0;
        largest_part = std::max(largest_part, part);
        m.narrow = m.narrow && part < kNoPosition;
        positions.push_back(has ? static_cast<uint32_t>(part) : kNoPosition);
        if (has) w[b] = c.weights[c.offsets[b]];
        all_one = all_one && (!has || w[b] == 1.0);
      }
      weights.push_back(all_one ? std::vector<double>{} : std::move(w));
      largest_target += largest_part;
      ++a;
    }
    m.narrow = m.narrow && largest_target < kNoPosition;
    m.lean.dims = a;
    m.lean.entries = static_cast<uint32_t>(positions.size());
    m.lean.positions_at = m.lean_image.append(positions);
    for (int d = 0; d < a; ++d)
      m.lean.weights_at[d] = weights[d].empty() ? kNoWeights : m.lean_image.append(weights[d]);
    m.lean.weighted = std::any_of(weights.begin(), weights.end(), [](const auto& w) { return !w.empty(); });
  }
  return m;
}

}  // namespace

// Whether the query's own map would be lean (MapImage::is_lean), without
// building its image: two-phase queries never use it.
bool direct_map_is_lean(const AggregationMap& map) {
  int dims = 0;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    if (is_total(m.offsets, m.positions, m.weights)) continue;
    if (++dims > kFewDims) return false;
    for (size_t b = 0; b + 1 < m.offsets.size(); ++b)
      if (m.offsets[b + 1] - m.offsets[b] > 1) return false;
  }
  return true;
}

MapImage direct_map_image(const AggregationMap& map) {
  std::vector<CsrDimension> dims;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    dims.push_back({map.codec().shift(d), map.codec().mask(d), map.stride(d), m.offsets, m.positions, m.weights});
  }
  return build_map_image(dims);
}

// Phase 1 of two-phase aggregation: each relevant base has one target, its
// class, with weight 1, so a fact adds its raw value to its class tuple.
MapImage class_map_image(const AggregationMap& map, const TargetClasses& classes) {
  std::vector<std::vector<uint32_t>> offsets(classes.dims.size()), positions(classes.dims.size());
  std::vector<std::vector<double>> weights(classes.dims.size());
  std::vector<CsrDimension> dims;
  for (size_t d = 0; d < classes.dims.size(); ++d) {
    const auto& of = classes.dims[d].class_of_base;
    // One class over every base: a total, which the image leaves out anyway.
    if (classes.dims[d].count() == 1 && std::find(of.begin(), of.end(), kNoClass) == of.end()) continue;
    offsets[d].reserve(of.size() + 1);
    positions[d].reserve(of.size());
    weights[d].reserve(of.size());
    offsets[d].push_back(0);
    for (uint32_t c : of) {
      if (c != kNoClass) {
        positions[d].push_back(c);
        weights[d].push_back(1.0);
      }
      offsets[d].push_back(static_cast<uint32_t>(positions[d].size()));
    }
    dims.push_back({map.codec().shift(d), map.codec().mask(d), classes.strides[d], offsets[d], positions[d], weights[d]});
  }
  return build_map_image(dims);
}

ExpandImage expand_image(const AggregationMap& map, const TargetClasses& classes) {
  ExpandImage e;
  e.view.dims = static_cast<int>(classes.dims.size());
  for (size_t d = 0; d < classes.dims.size(); ++d) {
    const DimensionClasses& c = classes.dims[d];
    e.view.class_stride[d] = classes.strides[d];
    e.view.class_count[d] = std::max<uint32_t>(c.count(), 1);
    e.view.target_stride[d] = map.stride(d);
    e.view.offsets_at[d] = e.image.append(c.offsets);
    e.view.positions_at[d] = e.image.append(c.positions);
    e.view.weights_at[d] = e.image.append(c.weights);
  }
  return e;
}

}  // namespace gpuolap::gpu
