#include "olap/cell_overlay.hpp"

#include "gpuolap/cell_write.hpp"

namespace gpuolap::olap {

void lay_over(Overlay& overlay, const CellReader& reader, const LogRecord& record, size_t measures) {
  std::vector<double> row(measures, kNoValue);
  for (const WriteBatch& b : record.batches) {
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.mode == WriteMode::remove) {  // the cell's values do not matter: no need to read them
        overlay[b.keys[i]] = std::nullopt;
        continue;
      }
      for (size_t m = 0; m < measures; ++m)
        if (b.present[m]) row[m] = b.values[m][i];
      std::vector<double> cell = reader.cell(b.keys[i]).value_or(std::vector<double>(measures, kNoValue));
      const bool keep = write_cell(b.mode, cell, row, b.present);
      overlay[b.keys[i]] = keep ? std::optional(std::move(cell)) : std::nullopt;
    }
  }
}

std::optional<std::vector<double>> CellReader::cell(uint64_t key) const {
  if (auto it = overlay_.find(key); it != overlay_.end()) return it->second;
  if (below_) return below_->cell(key);
  const size_t i = table_->find(key);
  if (i == table_->size()) return std::nullopt;
  std::vector<double> v(table_->measure_count());
  for (size_t m = 0; m < v.size(); ++m) v[m] = table_->values(m)[i];
  return v;
}

void CellReader::for_each(const std::function<bool(uint64_t)>& wanted,
                          const std::function<void(uint64_t, const double*)>& visit) const {
  auto below_wanted = [&](uint64_t key) { return wanted(key) && !overlay_.count(key); };
  if (below_) {
    below_->for_each(below_wanted, visit);
  } else {
    const auto keys = table_->keys();
    std::vector<double> v(table_->measure_count());
    for (size_t i = 0; i < keys.size(); ++i) {
      if (!below_wanted(keys[i])) continue;
      for (size_t m = 0; m < v.size(); ++m) v[m] = table_->values(m)[i];
      visit(keys[i], v.data());
    }
  }
  for (const auto& [key, cell] : overlay_)
    if (cell && wanted(key)) visit(key, cell->data());
}

}  // namespace gpuolap::olap
