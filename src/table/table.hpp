// Relational tables: typed, columnar, nullable. The model the SQL front end,
// the planner and the relational operators (ordered and shared-memory GROUP
// BY, FK join, full cube, H-tree) read. No I/O here; database.hpp stores
// and loads tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "table/dictionary.hpp"

namespace gpuolap::table {

enum class ColumnType : std::uint8_t { Int64, Double, Date, String };

// "int64", "double", "date", "string".
std::string_view type_name(ColumnType type);
// The inverse; an unknown name is an InputError listing the four.
ColumnType parse_type(std::string_view name);

// One column. Its values are in the vector of its type:
//   Int64  -> int64s
//   Double -> doubles
//   Date   -> int32s, days since 1970-01-01 (may be negative)
//   String -> int32s, codes into `dictionary`, which holds each distinct
//             string once, in byte order (std::string's <), so code order is
//             string order and comparisons, MIN/MAX and ORDER BY run on codes.
// A NULL row holds 0 in its vector, which nothing may read as a value.
struct Column {
  std::string name;
  ColumnType type = ColumnType::Int64;
  std::vector<std::int64_t> int64s;
  std::vector<double> doubles;
  std::vector<std::int32_t> int32s;
  Dictionary dictionary;
  // Empty: no row is NULL. Otherwise one byte per row, 1 where it is NULL.
  std::vector<std::uint8_t> nulls;

  std::size_t size() const;
  bool is_null(std::size_t row) const { return !nulls.empty() && nulls[row] != 0; }
};

struct Table {
  std::string name;
  std::vector<Column> columns;
  // The columns the rows are sorted by, ascending, NULLs first, compared as a
  // tuple (strings by code = byte order); empty when the order is unknown.
  std::vector<std::string> sort_order;

  std::size_t row_count() const { return columns.empty() ? 0 : columns.front().size(); }
  // The column named `name` (exact match), or nullptr.
  const Column* find(std::string_view name) const;
};

// A table or column name: a letter or '_', then letters, digits or '_', at
// most 128 bytes (a table's name is its file's name in the database).
bool is_valid_name(std::string_view name);

// Checks what store() relies on and load() guarantees: a valid name, unique
// column names, every column as long as the first with its values in the
// vector of its type, null flags 0 or 1, dictionaries strictly in byte order
// with every non-NULL code inside, and a sort order of existing columns that
// the rows really follow. An InputError says what is wrong.
void check_table(const Table& table);

// Sorts the rows by the columns `by` (ascending, NULLs first, stable) and
// records that order in table.sort_order. An unknown column is an
// InputError naming it.
void sort_table(Table& table, const std::vector<std::string>& by);
// Whether the rows follow the columns `by` in that order.
bool is_sorted_by(const Table& table, const std::vector<std::string>& by);

// `text` as a message may show it: up to 200 bytes, then how long it was.
std::string clip_for_message(std::string_view text);

}  // namespace gpuolap::table
