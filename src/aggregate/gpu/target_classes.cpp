#include "target_classes.hpp"

#include <map>
#include <utility>

namespace gpuolap::gpu {

TargetClasses target_classes(const AggregationMap& map, uint64_t max_cells) {
  TargetClasses out;
  out.dims.resize(map.dimension_count());
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    DimensionClasses& c = out.dims[d];
    const uint32_t bases = static_cast<uint32_t>(m.offsets.size() - 1);
    c.class_of_base.assign(bases, kNoClass);
    c.offsets.push_back(0);
    std::map<std::pair<std::vector<uint32_t>, std::vector<double>>, uint32_t> seen;
    for (uint32_t b = 0; b < bases; ++b) {
      if (!m.relevant(b)) continue;
      const auto pos = m.positions_of(b);
      const auto w = m.weights_of(b);
      auto key = std::make_pair(std::vector<uint32_t>(pos.begin(), pos.end()), std::vector<double>(w.begin(), w.end()));
      auto [it, fresh] = seen.emplace(std::move(key), c.count());
      if (fresh) {
        c.positions.insert(c.positions.end(), pos.begin(), pos.end());
        c.weights.insert(c.weights.end(), w.begin(), w.end());
        c.offsets.push_back(static_cast<uint32_t>(c.positions.size()));
      }
      c.class_of_base[b] = it->second;
    }
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
