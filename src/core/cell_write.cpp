#include "gpuolap/cell_write.hpp"

#include <algorithm>

#include "gpuolap/fact_table.hpp"

namespace gpuolap {

bool write_cell(WriteMode mode, std::span<double> cell, std::span<const double> row, const std::vector<bool>& present) {
  if (mode != WriteMode::remove) {
    for (size_t m = 0; m < cell.size(); ++m) {
      if (!present[m]) continue;
      const double v = row[m];
      if (mode == WriteMode::set) {
        cell[m] = v;
      } else if (has_value(v)) {
        cell[m] = (has_value(cell[m]) ? cell[m] : 0.0) + v;
      }
    }
    if (std::any_of(cell.begin(), cell.end(), has_value)) return true;
  }
  std::fill(cell.begin(), cell.end(), kNoValue);
  return false;
}

}  // namespace gpuolap
