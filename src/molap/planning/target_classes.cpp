#include "target_classes.hpp"

#include <algorithm>
#include <bit>
#include <span>
#include <unordered_map>
#include <vector>

namespace gpuolap::gpu {

namespace {

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

// A hash of a base's target list: its length and up to 16 of its entries
// (positions and the bits of weights), evenly spaced. Lists of equal hash
// are compared in full, so a sample suffices; hashing every entry took most
// of M3's planning time (ten 1,001-entry machine lists, at every query).
uint64_t list_hash(std::span<const uint32_t> positions, std::span<const double> weights) {
  uint64_t h = mix(positions.size() + 1);
  const size_t step = std::max<size_t>(1, positions.size() / 16);
  for (size_t i = 0; i < positions.size(); i += step) {
    h = mix(h ^ positions[i]);
    h = mix(h ^ std::bit_cast<uint64_t>(weights[i]));
  }
  return h;
}

bool equal_lists(std::span<const uint32_t> pa, std::span<const double> wa, std::span<const uint32_t> pb,
                 std::span<const double> wb) {
  if (pa.size() != pb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i] != pb[i] || wa[i] != wb[i]) return false;
  return true;
}

// The classes of one dimension that is not a total.
void classify(const DimensionMap& m, DimensionClasses& c) {
  const auto bases = static_cast<uint32_t>(m.offsets.size() - 1);
  c.class_of_base.assign(bases, kNoClass);
  const auto is_class = [&](uint32_t k, std::span<const uint32_t> pos, std::span<const double> w) {
    return equal_lists(m.positions_of(c.representative[k]), m.weights_of(c.representative[k]), pos, w);
  };
  const auto new_class = [&](uint32_t b) {
    c.representative.push_back(b);
    return c.count() - 1;
  };
  // A list of one entry of weight 1 (a roll-up to one level: most bases of
  // most areas) is its position: its class is found in a table by position.
  // Other lists by their hash; equal hashes are told apart by comparing.
  std::vector<uint32_t> class_of_position;
  std::unordered_multimap<uint64_t, uint32_t> classes_by_hash;
  uint32_t previous = kNoClass;  // neighbouring bases often share a class (a month's days)
  for (uint32_t b = 0; b < bases; ++b) {
    if (!m.relevant(b)) continue;
    const auto pos = m.positions_of(b);
    const auto w = m.weights_of(b);
    if (previous != kNoClass && is_class(previous, pos, w)) {
      c.class_of_base[b] = previous;
      continue;
    }
    uint32_t found = kNoClass;
    if (pos.size() == 1 && w[0] == 1.0) {
      if (pos[0] >= class_of_position.size()) class_of_position.resize(pos[0] + 1, kNoClass);
      uint32_t& k = class_of_position[pos[0]];
      if (k == kNoClass) k = new_class(b);
      found = k;
    } else {
      const uint64_t h = list_hash(pos, w);
      for (auto [it, end] = classes_by_hash.equal_range(h); it != end && found == kNoClass; ++it)
        if (is_class(it->second, pos, w)) found = it->second;
      if (found == kNoClass) classes_by_hash.emplace(h, found = new_class(b));
    }
    c.class_of_base[b] = previous = found;
  }
}

}  // namespace

bool is_total(const std::vector<uint32_t>& offsets, const std::vector<uint32_t>& positions,
              const std::vector<double>& weights) {
  if (positions.size() + 1 != offsets.size()) return false;
  for (size_t i = 0; i < positions.size(); ++i)  // base i's one entry: target 0, weight 1
    if (offsets[i] != i || positions[i] != 0 || weights[i] != 1.0) return false;
  return true;
}

TargetClasses target_classes(const AggregationMap& map, uint64_t max_cells) {
  TargetClasses out;
  out.dims.resize(map.dimension_count());
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    DimensionClasses& c = out.dims[d];
    const uint32_t bases = static_cast<uint32_t>(m.offsets.size() - 1);
    if (bases > 0 && m.total) {
      // One class, without comparing every base's list with its neighbour's
      // (most of M2's planning went to its totals over 2,154 days, hours,
      // years and products).
      c.class_of_base.assign(bases, 0);
      c.representative = {0};
      continue;
    }
    classify(m, c);
  }
  out.strides.resize(map.dimension_count());
  uint64_t cells = 1;
  for (size_t d = map.dimension_count(); d-- > 0;) {
    out.strides[d] = cells;
    const uint64_t n = std::max<uint32_t>(out.dims[d].count(), 1);
    if (cells > max_cells / n) return TargetClasses{};
    cells *= n;
  }
  out.cells = cells;
  return out;
}

}  // namespace gpuolap::gpu
