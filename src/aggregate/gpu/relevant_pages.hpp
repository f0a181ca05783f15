#pragma once
// Which pages of a fact table can hold a cell of an area (the prefilter's
// page step, thesis §4.2.3): a page is out when, in some dimension, no base
// id in the page's [min, max] range has a target. Sorted keys keep the
// leading dimensions' ranges narrow (M2's European plants are 1,071 of the
// machines cube's 2,521 pages).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpuolap/aggregation_map.hpp"

namespace gpuolap::gpu {

// 1 for a page that may hold a relevant cell, 0 for one that holds none.
// Only dimensions with bases outside the area are looked at; empty when
// there are none (no page can be skipped then). Pages is a FactTable or the
// gpu engine's DeviceCube: page_count(), page_min(page, d), page_max(page, d).
template <class Pages>
std::vector<uint8_t> relevant_pages(const AggregationMap& map, const Pages& pages) {
  std::vector<size_t> restrictive;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    if (m.relevant_prefix.back() + 1 < m.offsets.size()) restrictive.push_back(d);
  }
  if (restrictive.empty()) return {};
  std::vector<uint8_t> relevant(pages.page_count(), 1);
  for (size_t p = 0; p < relevant.size(); ++p)
    for (size_t i = 0; i < restrictive.size() && relevant[p]; ++i) {
      const size_t d = restrictive[i];
      relevant[p] = map.dimension(d).any_relevant(pages.page_min(p, d), pages.page_max(p, d));
    }
  return relevant;
}

}  // namespace gpuolap::gpu
