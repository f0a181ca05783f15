// A SELECT bound to the tables of a database: the tables and how they
// join, the filters, the grouping, the aggregates, the output. What the
// binder makes of PostgreSQL's parse tree and the planner plans.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql/expression.hpp"
#include "table/table.hpp"

namespace gpuolap::sql {

struct BoundTable {
  std::string name;   // as stored
  std::string alias;  // what the query calls it (the name when no alias)
  std::shared_ptr<const table::Table> table;
  int location = -1;
};

// t1.c1 = t2.c2 between two tables of FROM (an inner join's condition).
struct JoinEquality {
  int left_table = -1, left_column = -1, right_table = -1, right_column = -1;
  int location = -1;
};

enum class AggregateFunction : std::uint8_t { Sum, Count, CountStar, Avg, Min, Max };

struct AggregateCall {
  AggregateFunction function = AggregateFunction::CountStar;
  bool distinct = false;
  ExprPtr argument;  // none for COUNT(*)
  SqlType result_type = SqlType::Int64;
  int location = -1;
  std::string fingerprint;
};

struct OutputColumn {
  std::string name;
  ExprPtr expr;
};

struct SortKey {
  ExprPtr expr;
  bool descending = false;
  bool nulls_first = false;
};

struct LogicalQuery {
  bool explain = false;
  std::vector<BoundTable> tables;  // empty: SELECT without FROM (one row)
  std::vector<JoinEquality> joins;
  // The other conjuncts of WHERE and ON, over input columns.
  std::vector<ExprPtr> filters;
  // Aggregation: GROUP BY or an aggregate anywhere.
  bool aggregated = false;
  std::vector<ExprPtr> group_keys;              // distinct expressions, over input columns
  std::vector<std::vector<int>> grouping_sets;  // indexes into group_keys, in PostgreSQL's expansion
  std::vector<AggregateCall> aggregates;
  ExprPtr having;  // over groups
  // Over groups when aggregated, else over input columns.
  std::vector<OutputColumn> outputs;
  std::vector<SortKey> order_by;
  std::optional<std::int64_t> limit;
  std::int64_t offset = 0;
};

// The columns (in order) an expression reads, as table indexes.
void tables_used(const Expr& e, std::vector<bool>& used);

}  // namespace gpuolap::sql
