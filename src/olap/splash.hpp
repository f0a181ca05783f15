#pragma once
// Writing one cell, base or consolidated, as base-cell writes (Palo's
// cell/replace). A base cell is set, added to or deleted. A consolidated
// cell is written by splashing onto the base cells under it:
//   proportional  the new value (for mode add: current + value) is spread
//                 over the filled base cells in proportion to their current
//                 values; when the current value is 0 (e.g. all empty) it is
//                 spread evenly over every base cell under it, so that the
//                 weighted sum of the base cells equals the new value;
//   add           the value is added to every base cell under it;
//   set           every base cell under it is set to the value;
//   none          writing a consolidated cell is refused.
// Mode delete on a consolidated cell deletes every base cell under it.
#include <string>

#include "olap/cell_paths.hpp"
#include "olap/cell_overlay.hpp"
#include "gpuolap/write.hpp"

namespace gpuolap::olap {

enum class Splash { none, proportional, add, set };
Splash parse_splash(const std::string& name, const std::string& where);

struct CellAssignment {
  CellPath path;
  size_t measure = 0;
  WriteMode mode = WriteMode::set;
  double value = kNoValue;  // NaN: clear (mode set)
  Splash splash = Splash::proportional;
};

// Appends to `record` the base-cell writes of one assignment, reading current
// values through `reader`. A splash writing (or deleting) more than
// `max_cells` base cells is refused with 413; a splash that cannot reach the value (the weights
// under the cell sum to 0) with 400.
void resolve_assignment(const Schema& schema, const CellReader& reader, const CellAssignment& a, uint64_t max_cells,
                        LogRecord& record);

}  // namespace gpuolap::olap
