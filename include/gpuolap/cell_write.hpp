#pragma once
// What a write does to one base cell: the rule the fact store applies, and
// that olap's cell overlay applies to resolve writes before the store has
// them. One rule, so that the two never disagree.
#include <cstdint>
#include <span>
#include <vector>

namespace gpuolap {

enum class WriteMode { set, add, remove };

// One row of a write: the cell and, per measure, the value the row gives
// (NaN for an empty field) and whether the row names that measure at all.
struct CellWrite {
  uint64_t key;
  std::vector<double> values;
  std::vector<bool> present;
};

// Applies one row to a cell's values (NaN where empty; all NaN for a cell
// not filled):
//   set: measures the row names take its values (an empty field clears the
//        value); measures it does not name keep theirs.
//   add: measures with a value in the row are added to the cell's (absent
//        counts as 0); others are unchanged.
//   remove: the cell is deleted.
// row[m] is read only where present[m]. Returns whether the cell keeps any
// value; a cell that keeps none is left all NaN, and is not stored.
bool write_cell(WriteMode mode, std::span<double> cell, std::span<const double> row, const std::vector<bool>& present);

}  // namespace gpuolap
