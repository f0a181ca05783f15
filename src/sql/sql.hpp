// The SQL engine's entry point: text in, a result out. The CLI's
// `gpuolap sql` and (later) the server's POST /sql call it; formatting the
// result is separate (result_format.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sql/binder.hpp"
#include "sql/plan.hpp"
#include "sql/query_result.hpp"
#include "table/database.hpp"

namespace gpuolap::sql {

struct SqlOptions {
  SqlEngine engine = SqlEngine::CpuSerial;
  // How grouping sets are computed; empty: the planner chooses.
  std::optional<GroupingSetsMethod> grouping_sets;
  // Most rows of a result, of its groups and of the rows sorted.
  std::uint64_t max_rows = 10'000'000;
};

// Parses, binds, plans and runs one SELECT or EXPLAIN SELECT. EXPLAIN
// returns the plan as rows of one column, "QUERY PLAN". The result's `plan`
// holds the plan's lines either way. Bad SQL, constructs outside the
// subset, unknown names, type errors and errors of evaluation are
// InputErrors naming line and column.
QueryResult run(const TableCatalog& tables, std::string_view text, const SqlOptions& options);
QueryResult run(const table::Database& database, std::string_view text, const SqlOptions& options);

// "cpu-serial", "cpu-parallel", "gpu"; another name is an InputError listing them.
SqlEngine parse_engine(std::string_view name);
// "per-set", "lattice", "cube", "auto" (empty); another name is an InputError.
std::optional<GroupingSetsMethod> parse_grouping_sets(std::string_view name);

}  // namespace gpuolap::sql
