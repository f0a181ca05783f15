// The table as every algorithm reads it: each grouping column coded to dense
// integers, each row's codes packed into one 64-bit key (the paper's
// calcIntersectionIdx, computed once), and the measures as column views.
// Internal to src/cube/.
//
// A column's codes run 0..radix-1 in the order of its values, NULL first
// (code 0) when the column has NULLs. A row's key is the mixed-radix number
// of its codes, the first column most significant, so keys order rows as
// the tuple of their values does. A grouping set's key packs only the set's
// columns the same way; its cells, radix product many, are the set's dense
// cube, and a set's key follows from any superset's key by a Projection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cube/full_cube.hpp"
#include "groupby/aggregate_state.hpp"

namespace gpuolap::cube {

struct ColumnCoding {
  const table::Column* source = nullptr;
  bool has_null = false;  // code 0 is NULL
  bool unused = false;    // in no requested set: one code, 0, for every row
  // Offset: code = value - min (+1 with NULLs); used when the values' range
  // is small. Ranked: code = the value's rank among `distinct` (+1 with
  // NULLs), the column's distinct values as order words, ascending.
  bool ranked = false;
  std::int64_t min = 0;
  std::vector<std::uint64_t> distinct;
  std::uint64_t radix = 1;
  // A double column's zero as it is printed: one code stands for +0.0 and
  // -0.0 (GROUP BY calls them equal), and decodes to -0.0 where the
  // column's zeros are all -0.0, as SQL's GROUP BY prints a group of them.
  // Where both signs occur, every zero group prints 0: PostgreSQL prints a
  // group's first row's zero, which a group of -0.0 alone would make -0;
  // this keeps no per-group sign, so it prints no -0 it cannot vouch for.
  double zero = 0.0;
};

// Where each kept column's code sits in a set's key: key = sum of code_i *
// stride[i] over kept columns (stride 0 for the others).
struct Layout {
  SetMask mask = 0;
  std::uint64_t cells = 1;  // the product of the kept columns' radices
  std::uint64_t stride[kMaxColumns] = {};
};

// n / d for 32-bit n by a multiplication: the high word of n * magic,
// magic = ceil(2^64 / d), is exact for every n and d below 2^32 (Lemire,
// Kaser and Kurz, "Faster remainder by direct computation", 2019: 64
// fraction bits cover 32 of dividend and 32 of divisor). A GPU divides
// 32-bit integers in about 20 instructions; this is a 64-bit high
// multiply, a few multiply-adds.
// d = 1 has no 64-bit magic (2^64) and is kept as 0: n itself.
GPUOLAP_HD std::uint64_t division_magic(std::uint32_t d) { return d <= 1 ? 0 : ~std::uint64_t{0} / d + 1; }
GPUOLAP_HD std::uint32_t divide_by_magic(std::uint32_t n, std::uint64_t magic) {
  if (magic == 0) return n;
#ifdef __CUDA_ARCH__
  return static_cast<std::uint32_t>(__umul64hi(magic, n));
#else
  return static_cast<std::uint32_t>((static_cast<unsigned __int128>(magic) * n) >> 64);
#endif
}

// A key of set `from` turned into the key of set `to` (to's columns a
// subset of from's). Host and device.
struct Projection {
  int columns = 0;
  // The source set's keys fit 32 bits (cells < 2^32): the divisions are
  // 32-bit ones, by multiplication with each divisor's magic number
  // (division_magic), and they decide how fast a parent's cells project
  // to a child's. A GPU does 64-bit divisions in software.
  bool narrow = false;
  std::uint64_t from_stride[kMaxColumns] = {};
  std::uint64_t radix[kMaxColumns] = {};
  std::uint64_t to_stride[kMaxColumns] = {};
  std::uint64_t stride_magic[kMaxColumns] = {}, radix_magic[kMaxColumns] = {};  // narrow: division_magic's

  GPUOLAP_HD std::uint64_t operator()(std::uint64_t key) const {
    std::uint64_t out = 0;
    if (narrow) {
      const auto k = static_cast<std::uint32_t>(key);
      for (int i = 0; i < columns; ++i) {
        const std::uint32_t above = divide_by_magic(k, stride_magic[i]);
        const std::uint32_t code = above - divide_by_magic(above, radix_magic[i]) * static_cast<std::uint32_t>(radix[i]);
        out += code * to_stride[i];
      }
      return out;
    }
    for (int i = 0; i < columns; ++i) out += (key / from_stride[i]) % radix[i] * to_stride[i];
    return out;
  }
};

struct CodedTable {
  std::uint64_t id = 0;  // unique in the process: the GPU keeps the coded table resident by it
  const table::Table* source = nullptr;
  std::size_t rows = 0;
  std::vector<ColumnCoding> columns;
  Layout finest;                    // every grouping column
  std::vector<std::uint64_t> keys;  // the finest key of each row
  bool sorted = false;              // keys never decrease
  // The measures: rows, value columns and aggregates (keys empty), and the
  // aggregates' slots over the host columns.
  groupby::OrderedInput measures;
  std::vector<groupby::AggregateSlot> slots;
  // The source column of each aggregate whose result has the column's own
  // type (MIN/MAX); null for the others.
  std::vector<const table::Column*> aggregate_sources;
};

// Codes `table` for `spec` (checked). Refuses, naming the columns, a cube
// whose finest key does not fit 63 bits.
CodedTable code_table(const table::Table& table, const CubeSpec& spec);

Layout layout_of(const CodedTable& coded, SetMask mask);
Projection projection(const CodedTable& coded, const Layout& from, const Layout& to);

// One set's cells as arrays: the keys ascending, and for each aggregate its
// states' words (groupby::AggregateState's bits, high, count; `high` empty
// unless an integer sum, `count` empty unless the slot keeps it).
struct SetCells {
  std::vector<std::uint64_t> keys;
  std::vector<std::vector<std::uint64_t>> bits, high, count;
};
// Empty cells with room for the aggregates of `coded`.
SetCells empty_cells(const CodedTable& coded);
// Cells from states laid out cell by cell (states[c * aggregates + a]).
SetCells cells_from_states(const CodedTable& coded, std::vector<std::uint64_t> keys,
                           const std::vector<groupby::AggregateState>& states);

// The cells of row slices' cubes (parts[p][s]: part p's cells of set s),
// merged set by set; equal keys' states fold in part order. Sets marked in
// `skip` are left empty (the caller assembles them).
std::vector<SetCells> merge_parts(const CodedTable& coded, const std::vector<std::vector<SetCells>>& parts,
                                  const std::vector<bool>& skip = {});

// The result table: for each requested set (spec order) its cells decoded.
table::Table finish_table(const CodedTable& coded, const CubeSpec& spec, const std::vector<SetCells>& sets);

// The union of the requested sets (the finest set the lattice computes).
SetMask union_of(const CubeSpec& spec);

}  // namespace gpuolap::cube
