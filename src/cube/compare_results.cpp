// Two cube results compared as the self-check and the tests compare the
// algorithms with cpu-sequential.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cube/full_cube.hpp"

namespace gpuolap::cube {
namespace {

bool same_double(double p, double q) {
  if (std::isnan(p) || std::isnan(q)) return std::isnan(p) && std::isnan(q);
  if (p == q) return true;
  if (!std::isfinite(p) || !std::isfinite(q)) return false;
  return std::abs(p - q) <= 1e-9 * std::max(std::abs(p), std::abs(q));
}

}  // namespace

std::string compare_results(const table::Table& want, const table::Table& got) {
  if (want.columns.size() != got.columns.size())
    return fmt::format("{} columns, not {}", got.columns.size(), want.columns.size());
  if (want.row_count() != got.row_count()) return fmt::format("{} rows, not {}", got.row_count(), want.row_count());
  for (std::size_t c = 0; c < want.columns.size(); ++c) {
    const table::Column& a = want.columns[c];
    const table::Column& b = got.columns[c];
    if (a.name != b.name || a.type != b.type) return fmt::format("column {} is {}, not {}", c + 1, b.name, a.name);
    for (std::size_t r = 0; r < want.row_count(); ++r) {
      const bool differ = a.is_null(r) != b.is_null(r) ||
                          (!a.is_null(r) && (a.type == table::ColumnType::Double ? !same_double(a.doubles[r], b.doubles[r])
                                             : a.type == table::ColumnType::Int64 ? a.int64s[r] != b.int64s[r]
                                                                                  : a.int32s[r] != b.int32s[r]));
      if (differ) return fmt::format("row {}, column {} differs", r + 1, a.name);
    }
  }
  return {};
}

}  // namespace gpuolap::cube
