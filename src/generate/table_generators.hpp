#pragma once
// Deterministic generators of relational tables, written straight into a
// database (no CSV detour). Each file documents its distributions:
//   sales-flat  sales_flat_table.cpp  the cube-creation paper's flat table
//   lineitem    lineitem_table.cpp    TPC-H lineitem by dbgen's rules
//   zipf        zipf_tables.cpp       F(a, fk) and D1(id, b) of the contention paper
//   ssb         ssb_tables.cpp        the Star Schema Benchmark's five tables
//   htree       htree_tables.cpp      the H-tree paper's DxCyTz tables
// What a generator produces depends on its options only, never on the
// number of threads (generate_detail's counter-based random words).
#include <cstdint>
#include <string>
#include <vector>

#include "table/table.hpp"

namespace gpuolap {

struct TableGeneratorOptions {
  double scale = 1.0;
  std::uint64_t seed = 42;
  double theta = 1.0;               // zipf: the skew (0: uniform)
  std::uint64_t cardinality = 1024;  // zipf: distinct values of F.a and rows of D1
  std::string shape = "D15C40T600K";  // htree: dimensions, cardinality, tuples
};

// An htree shape, DxCyTz: x dimensions of cardinality y, z tuples.
struct HTreeShape {
  int dimensions = 0;
  std::uint64_t cardinality = 0;
  std::uint64_t tuples = 0;
};
// "D15C40T600K" (z may end in K or M); anything else is an InputError.
HTreeShape parse_htree_shape(const std::string& shape);

// sales-flat, lineitem, zipf, ssb, htree.
const std::vector<std::string>& table_generator_kinds();
bool is_table_generator_kind(const std::string& kind);

// The tables of `kind`; an unknown kind or a bad option is an InputError.
std::vector<table::Table> generate_tables(const std::string& kind, const TableGeneratorOptions& options);

std::vector<table::Table> generate_sales_flat(const TableGeneratorOptions& options);
std::vector<table::Table> generate_lineitem(const TableGeneratorOptions& options);
std::vector<table::Table> generate_zipf(const TableGeneratorOptions& options);
std::vector<table::Table> generate_ssb(const TableGeneratorOptions& options);
std::vector<table::Table> generate_htree(const TableGeneratorOptions& options);

namespace generate_detail {

// An empty column of `rows` values of `type`.
table::Column make_column(std::string name, table::ColumnType type, std::size_t rows);
// A string column whose codes index `dictionary` (sorted here if it is not).
table::Column make_string_column(std::string name, std::vector<std::string> dictionary, std::size_t rows);

}  // namespace generate_detail

}  // namespace gpuolap
