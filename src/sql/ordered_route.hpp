// Ordered aggregation (src/groupby/, the prefix-sum paper's operator) behind
// the gpu engine: a plain GROUP BY over the columns of one table stored
// sorted on its grouping keys, where a group is a run of equal keys and no
// hash table is needed. The gpu engine takes this route first where the
// query fits it; otherwise the shared-memory operators (shared_route.hpp)
// or the cube operator (cube_route.hpp), and EXPLAIN says why not this one.
//
//   SELECT k1[, k2 ...], COUNT(*), COUNT(x), SUM(x), AVG(x), MIN(x), MAX(x)
//   FROM t GROUP BY k1[, k2 ...] [HAVING] [ORDER BY] [LIMIT]
//     t stored sorted (`table load --sort-by`, `table sort --by`) with the
//     keys, in any order, as a prefix of its order; at most 4 keys and 8
//     aggregates of columns; no WHERE, no DISTINCT, fewer than 2^32 rows.
//
// The table's key and value columns are kept on the GPU per table and set
// of columns (the four most recent sets, each keeping its table alive), so
// a query over the same columns (`sql --repeat`, the server) pays the bus
// only for its groups.
#pragma once

#include <string>
#include <vector>

#include "sql/cpu_serial.hpp"
#include "sql/logical_query.hpp"
#include "sql/parse_tree.hpp"
#include "sql/query_result.hpp"

namespace gpuolap::sql {

// Why ordered aggregation cannot answer `q`; empty when it can.
std::string ordered_route_refusal(const LogicalQuery& q);
// The plan's lines (EXPLAIN): the operator, why the rows are in order, the
// architecture the operator's `auto` picks for them and why.
std::vector<std::string> ordered_route_plan(const LogicalQuery& q);
QueryResult run_ordered_route(const LogicalQuery& q, const SourceText& source, const ExecutionLimits& limits);

}  // namespace gpuolap::sql
