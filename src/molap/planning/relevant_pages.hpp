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

namespace relevant_pages_detail {

// The dimensions with bases outside the area: only they can rule a page out.
inline std::vector<size_t> restrictive_dimensions(const AggregationMap& map) {
  std::vector<size_t> restrictive;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    if (m.relevant_prefix.back() + 1 < m.offsets.size()) restrictive.push_back(d);
  }
  return restrictive;
}

template <class Pages>
bool may_hold(const AggregationMap& map, const std::vector<size_t>& restrictive, const Pages& pages, size_t p) {
  for (const size_t d : restrictive)
    if (!map.dimension(d).any_relevant(pages.page_min(p, d), pages.page_max(p, d))) return false;
  return true;
}

}  // namespace relevant_pages_detail

// 1 for a page that may hold a relevant cell, 0 for one that holds none.
// Only dimensions with bases outside the area are looked at; empty when
// there are none (no page can be skipped then). Pages is a FactTable or the
// gpu engine's DeviceCube: page_count(), page_min(page, d), page_max(page, d).
template <class Pages>
std::vector<uint8_t> relevant_pages(const AggregationMap& map, const Pages& pages) {
  const std::vector<size_t> restrictive = relevant_pages_detail::restrictive_dimensions(map);
  if (restrictive.empty()) return {};
  std::vector<uint8_t> relevant(pages.page_count());
  for (size_t p = 0; p < relevant.size(); ++p)
    relevant[p] = relevant_pages_detail::may_hold(map, restrictive, pages, p);
  return relevant;
}

// Whether the full pass over the pages is worth making: a look at a sample
// first. Most areas skip whole runs of pages or none; M3 skips none of its
// 2,521, which took 12-18 us of its planning on the H100's host to find
// out. Tables of up to 8 x `step` pages are always passed over in full;
// larger ones when one of every `step`-th page (from the first, and the
// last) can be skipped, which every run of `step` or more skippable pages
// holds. So a table is read whole only when its skippable pages all lie in
// runs shorter than `step` (sorted keys make long runs: a leading
// dimension's bases are contiguous).
template <class Pages>
bool worth_listing_pages(const AggregationMap& map, const Pages& pages, size_t step) {
  const std::vector<size_t> restrictive = relevant_pages_detail::restrictive_dimensions(map);
  const size_t n = pages.page_count();
  if (restrictive.empty() || n == 0) return false;
  if (n <= 8 * step) return true;
  for (size_t p = 0; p < n; p += step)
    if (!relevant_pages_detail::may_hold(map, restrictive, pages, p)) return true;
  return !relevant_pages_detail::may_hold(map, restrictive, pages, n - 1);
}

}  // namespace gpuolap::gpu
