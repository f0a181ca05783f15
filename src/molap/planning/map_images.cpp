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
    if (m.total) continue;
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
// Written straight into the images (the generic build_map_image over copied
// arrays took most of B3's 26 us of class map), so it gives what
// build_map_image would: a single map, lean with at most kFewDims walked
// dimensions, and unweighted.
MapImage class_map_image(const AggregationMap& map, const TargetClasses& classes) {
  MapImage m;
  m.view.single = true;
  std::vector<size_t> walked;
  for (size_t d = 0; d < classes.dims.size(); ++d) {
    const auto& of = classes.dims[d].class_of_base;
    const auto relevant =
        static_cast<size_t>(std::count_if(of.begin(), of.end(), [](uint32_t c) { return c != kNoClass; }));
    // One class over every base is a total: left out.
    if (classes.dims[d].count() <= 1 && relevant == of.size()) continue;
    const int a = m.view.dims++;
    walked.push_back(d);
    m.view.shift[a] = map.codec().shift(d);
    m.view.mask[a] = map.codec().mask(d);
    m.view.stride[a] = classes.strides[d];
    const ByteImage::Csr at = m.image.allocate_csr(of.size(), relevant);
    m.view.offsets_at[a] = at.offsets_at;
    m.view.positions_at[a] = at.positions_at;
    m.view.weights_at[a] = at.weights_at;
    ByteImage::CsrFill lists(m.image, at);
    for (size_t b = 0; b < of.size(); ++b) {
      if (of[b] != kNoClass) lists.add(of[b], 1.0);
      lists.end_row();
    }
  }
  if (!m.is_lean()) return m;
  // The packed map: class x stride per base (kNoPosition outside the area).
  size_t entries = 0;
  for (size_t d : walked) entries += classes.dims[d].class_of_base.size();
  m.lean.dims = m.view.dims;
  m.lean.entries = static_cast<uint32_t>(entries);
  m.lean.positions_at = m.lean_image.allocate<uint32_t>(entries);
  m.lean.weighted = false;
  auto* parts = m.lean_image.at<uint32_t>(m.lean.positions_at);
  // Narrow when the largest target (the sum of the largest parts) fits.
  uint64_t largest_target = 0;
  uint32_t first = 0;
  for (size_t a = 0; a < walked.size(); ++a) {
    const size_t d = walked[a];
    const auto& of = classes.dims[d].class_of_base;
    m.lean.shift[a] = map.codec().shift(d);
    m.lean.mask[a] = map.codec().mask(d);
    m.lean.first[a] = first;
    m.lean.weights_at[a] = kNoWeights;
    uint64_t largest_part = 0;
    for (size_t b = 0; b < of.size(); ++b) {
      const uint64_t part = of[b] == kNoClass ? 0 : uint64_t{of[b]} * classes.strides[d];
      largest_part = std::max(largest_part, part);
      parts[first + b] = of[b] == kNoClass ? kNoPosition : static_cast<uint32_t>(part);
    }
    largest_target += largest_part;
    first += static_cast<uint32_t>(of.size());
  }
  m.narrow = largest_target < kNoPosition;
  return m;
}

// The classes' lists, copied once from the map straight into the image.
ExpandImage expand_image(const AggregationMap& map, const TargetClasses& classes) {
  ExpandImage e;
  e.view.dims = static_cast<int>(classes.dims.size());
  for (size_t d = 0; d < classes.dims.size(); ++d) {
    const DimensionClasses& c = classes.dims[d];
    const DimensionMap& m = map.dimension(d);
    size_t entries = 0;
    for (uint32_t r : c.representative) entries += m.positions_of(r).size();
    e.view.class_stride[d] = classes.strides[d];
    e.view.class_count[d] = std::max<uint32_t>(c.count(), 1);
    e.view.target_stride[d] = map.stride(d);
    const ByteImage::Csr at = e.image.allocate_csr(c.count(), entries);
    e.view.offsets_at[d] = at.offsets_at;
    e.view.positions_at[d] = at.positions_at;
    e.view.weights_at[d] = at.weights_at;
    ByteImage::CsrFill lists(e.image, at);
    for (const uint32_t r : c.representative) lists.add_row(m.positions_of(r), m.weights_of(r));
  }
  return e;
}

}  // namespace gpuolap::gpu
