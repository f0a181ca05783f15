// A coded table cut into slices by ranges of the finest key, one per GPU
// context: a context then owns every row of its cells, so the contexts'
// finest cells are disjoint and ordered by context, and the whole finest
// set is their concatenation (no merge of cells that several contexts
// hold). A cut of the rows by position gives each context, in random
// order, most of the key space; its cells must then be merged.
//
// Host code, internal to src/cube/: the planner cuts the keys once per
// table and count of contexts; each context copies its rows (those whose
// key falls in its range, in table order) into its staging buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpuolap::cube {

struct CodedTable;

struct KeySplit {
  // parts + 1 bounds: part p holds the rows whose key is in
  // [cuts[p], cuts[p + 1]); cuts[0] is 0 and the last is 2^64 - 1 (keys fit
  // 63 bits). Equal bounds leave a part empty: a key is never cut apart.
  std::vector<std::uint64_t> cuts;
  std::vector<std::size_t> rows;  // per part
  // The largest part over an even share (rows / parts): 1 is perfect.
  double imbalance() const;
};

// The finest keys of `coded` cut into `parts` ranges of about equal row
// counts: at the quantiles of the keys (exact for a sorted table; of an
// evenly spaced sample of 65,536 rows otherwise), then the rows of each
// part counted. Many rows of one key make the parts uneven: imbalance()
// says how much.
KeySplit split_by_key(const CodedTable& coded, std::size_t parts);

// A column copied row by row: `width` bytes a row from `from` to `to`.
struct RowColumn {
  const void* from = nullptr;
  std::size_t width = 0;
  void* to = nullptr;
};
// The rows whose key (`keys`, `rows` of them) is in [lo, hi) copied, in
// table order, column by column into the columns' `to` (each with room for
// them); `sorted`: the keys never decrease, so the rows are one range.
// Returns how many rows were copied. In parallel, in blocks of rows.
std::size_t copy_key_range(const std::uint64_t* keys, std::size_t rows, bool sorted, std::uint64_t lo,
                           std::uint64_t hi, const std::vector<RowColumn>& columns);

}  // namespace gpuolap::cube
