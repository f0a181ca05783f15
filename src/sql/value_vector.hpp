// The types of SQL values and a column of values of one type, the unit that
// expressions are evaluated on (a batch of rows at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuolap::sql {

// Null: the type of a bare NULL literal until context gives it one.
// Interval: only as the right operand of date ± interval (days).
enum class SqlType : std::uint8_t { Null, Bool, Int64, Double, Date, String, Interval };

// PostgreSQL's names: "bigint", "double precision", "date", "text", "boolean".
std::string_view type_name(SqlType type);
bool is_numeric(SqlType type);

// Values of one type, one per row, NULL where `nulls` holds 1.
//   Bool, Int64, Date (days since 1970-01-01), Interval (days) -> ints
//   Double -> doubles, String -> strings
struct ValueVector {
  SqlType type = SqlType::Null;
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string> strings;
  std::vector<std::uint8_t> nulls;

  ValueVector() = default;
  explicit ValueVector(SqlType t) : type(t) {}

  std::size_t size() const { return nulls.size(); }
  bool is_null(std::size_t row) const { return nulls[row] != 0; }
  void reserve(std::size_t n);
  void push_null();
  void push_int(std::int64_t v);
  void push_double(double v);
  void push_string(std::string v);
  // Appends row `row` of `from`, which has this vector's type (or Null).
  void push_from(const ValueVector& from, std::size_t row);
  // Adds to `tasks` the appending of every row of each of `parts` (each of
  // this vector's type), in order: a task per column of values, which may
  // run at once (concatenate.hpp).
  void append_all(const std::vector<const ValueVector*>& parts, std::vector<std::function<void()>>& tasks);
  // Overwrites row `row` with row `from_row` of `from` (same type).
  void set_from(std::size_t row, const ValueVector& from, std::size_t from_row);
  // `count` copies of row 0: a constant broadcast over a batch.
  ValueVector repeated(std::size_t count) const;
};

// The rows `positions` of `from`, in that order, as a vector of its type
// (a NULL row's value 0 or ""), gathered in blocks on TBB's threads: the
// projection of 15 M groups' columns row by row was a serial pass each.
ValueVector gather_rows(const ValueVector& from, const std::vector<std::uint32_t>& positions);

// Three-way comparison of two non-NULL values of one type (Int64 and Double
// may be mixed: compared as doubles, as PostgreSQL does).
int compare_values(const ValueVector& a, std::size_t i, const ValueVector& b, std::size_t j);
// compare_values with -0.0 below +0.0: the order MIN and MAX pick by, so
// that which zero they answer does not depend on the order of the rows
// (the GPU operators' order, groupby/aggregate_state.hpp).
int compare_extremes(const ValueVector& a, std::size_t i, const ValueVector& b, std::size_t j);

// Whether row i of a and row j of b (one type) are in one group: NULLs are,
// -0.0 and 0.0 are, and every NaN is — the equality of append_key_bytes.
bool same_group_value(const ValueVector& a, std::size_t i, const ValueVector& b, std::size_t j);

// Appends a byte encoding of row `row` (NULL told apart from every value) to
// `key`: equal values, equal bytes. Hash keys of groups and DISTINCT sets.
void append_key_bytes(const ValueVector& v, std::size_t row, std::string& key);

}  // namespace gpuolap::sql
