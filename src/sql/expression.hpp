// Bound expressions: typed trees over the input columns (before
// aggregation) or over the groups (after it), evaluated a batch of rows at
// a time into ValueVectors. NULL logic is SQL's three-valued one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sql/value_vector.hpp"
#include "table/table.hpp"

namespace gpuolap::sql {

enum class ExprKind : std::uint8_t {
  Constant,     // constant: one row
  InputColumn,  // table, column: a column of a FROM table
  GroupKey,     // index: a GROUP BY expression (NULL where its set rolls it up)
  Aggregate,    // index: an aggregate's value for the group
  Grouping,     // keys: GROUPING(...), a bit per argument, 1 when rolled up
  Arithmetic,   // op: + - * / %, two children
  Negate,       // one child
  Compare,      // op: = <> < <= > >=, two children
  And,
  Or,  // two or more children
  Not,
  IsNull,  // negated: IS NOT NULL
  Like,    // negated: NOT LIKE; children: text, pattern
  In,      // children: value, then the list
  Case,    // children: when, then, when, then, ..., else (always present)
  Cast,    // to `type`, one child
  Extract, // op: year, month, day; one child (a date)
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  ExprKind kind = ExprKind::Constant;
  SqlType type = SqlType::Null;
  int location = -1;  // byte offset in the query text, for messages
  ValueVector constant;
  int table = -1, column = -1, index = -1;
  std::vector<int> keys;
  std::string op;
  bool negated = false;
  std::vector<ExprPtr> children;
  // What the expression is, without positions: equal fingerprints, equal
  // expressions. GROUP BY keys are recognised in the select list by it.
  std::string fingerprint;
};

// What an expression's leaves read: an evaluation context provides them for
// `positions` (rows of the current batch).
class LeafSource {
 public:
  virtual ~LeafSource() = default;
  virtual ValueVector leaf(const Expr& leaf, const std::vector<std::uint32_t>& positions) const = 0;
  // Where `leaf` reads a column of a table: that column, and in `rows` its
  // row at each of `positions`, so that predicates run on the stored values
  // (integers, dates, dictionary codes). nullptr where the leaf is something else.
  virtual const table::Column* input_column(const Expr& leaf, const std::vector<std::uint32_t>& positions,
                                            std::vector<std::uint32_t>& rows) const {
    (void)leaf, (void)positions, (void)rows;
    return nullptr;
  }
};

// The value of `expr` on the rows `positions`. Errors of evaluation
// (division by zero, overflow, bad casts) are InputErrors; where the query
// text is given they name the operator's line and column.
class Evaluator {
 public:
  Evaluator(const LeafSource& leaves, const class SourceText* source) : leaves_(leaves), source_(source) {}
  ValueVector evaluate(const Expr& expr, const std::vector<std::uint32_t>& positions) const;
  // The positions where the boolean `predicate` is true.
  std::vector<std::uint32_t> select(const Expr& predicate, const std::vector<std::uint32_t>& positions) const;

 private:
  ValueVector arithmetic(const Expr& e, const std::vector<std::uint32_t>& positions) const;
  ValueVector logical(const Expr& e, const std::vector<std::uint32_t>& positions) const;
  ValueVector case_when(const Expr& e, const std::vector<std::uint32_t>& positions) const;
  ValueVector compare(const Expr& e, const std::vector<std::uint32_t>& positions) const;
  // A predicate over a string column and constants, on the column's codes;
  // false where `e` is not of that shape (the caller evaluates it on strings).
  bool on_codes(const Expr& e, const std::vector<std::uint32_t>& positions, ValueVector& out) const;
  // `column op constant` on an integer or date column, into `kept`; false
  // where `e` is not of that shape.
  bool select_on_column(const Expr& e, const std::vector<std::uint32_t>& positions,
                        std::vector<std::uint32_t>& kept) const;
  [[noreturn]] void fail(const Expr& e, const std::string& message) const;

  const LeafSource& leaves_;
  const class SourceText* source_;
};

// 0 .. n-1.
std::vector<std::uint32_t> all_positions(std::size_t n);

// Scalar helpers the binder, the casts and the output share.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);
void civil_from_days(std::int64_t days, std::int64_t& year, unsigned& month, unsigned& day);
// "YYYY-MM-DD" (years past 9999 or before 1 as PostgreSQL prints them, with
// " BC" for years before 1); false when `text` is not a date.
bool parse_date(std::string_view text, std::int64_t& days);
std::string format_date(std::int64_t days);
// Shortest text that reads back as the same double (PostgreSQL's float8out).
std::string format_double_shortest(double v);

// Does `text` match the LIKE `pattern` (% any run, _ one character,
// backslash escapes the next character)?
bool like_match(std::string_view text, std::string_view pattern);

}  // namespace gpuolap::sql
