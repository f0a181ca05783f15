#include "olap/export_scan.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpuolap/error.hpp"
#include "olap/over_limit.hpp"

namespace gpuolap::olap {

namespace {

// A page of the candidates from `start` on, in order: `cell_at(i)` gives
// candidate i's cell, or nullopt to leave it out. A page that ends before
// the last candidate names its last cell as the next one's resume point.
template <class CellAt>
ExportPage fill_page(const Schema& schema, size_t start, size_t count, uint64_t block_size, CellAt cell_at) {
  ExportPage page;
  size_t i = start;
  for (; i < count; ++i) {
    if (page.cells.size() == block_size) {
      page.next = cell_path(schema, page.cells.back().path);
      break;
    }
    if (std::optional<ExportedCell> cell = cell_at(i)) page.cells.push_back(std::move(*cell));
  }
  page.scanned = i;
  page.total = count;
  return page;
}

}  // namespace

ExportScan::ExportScan(const Schema& schema, const FactTable& facts, AreaQuery query, bool base_only,
                       uint64_t max_cells, const AreaRunner& run, std::string where)
    : schema_(schema), facts_(facts), query_(std::move(query)), base_only_(base_only), where_(std::move(where)) {
  if (base_only_)
    prepare_base_cells();
  else
    run_aggregation(max_cells, run);
}

void ExportScan::prepare_base_cells() {
  allowed_.resize(schema_.dimension_count());
  for (size_t d = 0; d < allowed_.size(); ++d) {
    const Dimension& dim = schema_.dimension(d);
    allowed_[d].assign(dim.base_count(), false);
    for (ElementId e : query_.area[d])
      for (const auto& [b, w] : dim.base_weights(e)) allowed_[d][b] = true;
  }
}

void ExportScan::run_aggregation(uint64_t max_cells, const AreaRunner& run) {
  for (size_t d = 0; d < query_.area.size(); ++d) {
    std::vector<ElementId> sorted = query_.area[d];
    std::sort(sorted.begin(), sorted.end());
    if (const auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
      throw InputError(fmt::format("{}: area: dimension '{}' lists '{}' twice; an aggregated export resumes after a "
                                   "path, which must name one cell",
                                   where_, schema_.dimension(d).name(), schema_.dimension(d).element(*twice).name));
  }
  check_area_cells(query_, max_cells);
  map_.emplace(schema_, query_);
  result_ = run(facts_, *map_, query_);
}

ExportPage ExportScan::page(const std::optional<CellPath>& after, uint64_t block_size,
                            const ValueCondition& condition) const {
  if (block_size == 0) throw InputError(where_ + ": a page holds at least one cell");
  return base_only_ ? base_page(after, block_size, condition) : aggregated_page(after, block_size, condition);
}

ExportPage ExportScan::base_page(const std::optional<CellPath>& after, uint64_t block_size,
                                 const ValueCondition& condition) const {
  const auto keys = facts_.keys();
  const auto values = facts_.values(query_.measure);
  size_t start = 0;
  if (after) {
    if (!after->base) throw InputError(where_ + ": \"path\" must name a base cell when exporting base cells");
    start = static_cast<size_t>(std::upper_bound(keys.begin(), keys.end(), after->key) - keys.begin());
  }
  const KeyCodec& codec = schema_.codec();
  return fill_page(schema_, start, keys.size(), block_size, [&](size_t i) -> std::optional<ExportedCell> {
    bool in = has_value(values[i]) && condition(values[i]);
    for (size_t d = 0; d < allowed_.size() && in; ++d) in = allowed_[d][codec.decode(keys[i], d)];
    if (!in) return std::nullopt;
    return ExportedCell{key_elements(schema_, keys[i]), values[i]};
  });
}

ExportPage ExportScan::aggregated_page(const std::optional<CellPath>& after, uint64_t block_size,
                                       const ValueCondition& condition) const {
  size_t start = 0;
  if (after) {
    uint64_t target = 0;
    for (size_t d = 0; d < schema_.dimension_count(); ++d) {
      const auto& list = query_.area[d];
      const auto at = std::find(list.begin(), list.end(), after->elements[d]);
      if (at == list.end())
        throw InputError(fmt::format("{}: \"path\" is not in the area: dimension '{}' does not list '{}'", where_,
                                     schema_.dimension(d).name(), schema_.dimension(d).element(after->elements[d]).name));
      target += static_cast<uint64_t>(at - list.begin()) * map_->stride(d);
    }
    start = static_cast<size_t>(std::upper_bound(result_.targets.begin(), result_.targets.end(), target) -
                                result_.targets.begin());
  }
  return fill_page(schema_, start, result_.targets.size(), block_size, [&](size_t i) -> std::optional<ExportedCell> {
    if (!condition(result_.values[i])) return std::nullopt;
    const std::vector<uint32_t> positions = target_positions(query_, result_.targets[i]);
    std::vector<ElementId> path(positions.size());
    for (size_t d = 0; d < positions.size(); ++d) path[d] = query_.area[d][positions[d]];
    return ExportedCell{std::move(path), result_.values[i]};
  });
}

}  // namespace gpuolap::olap
