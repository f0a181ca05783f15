// The full-cube operator (src/cube/) behind SQL: a GROUP BY — ROLLUP,
// CUBE, GROUPING SETS or plain — over the columns of one table, answered by
// gpu-lattice (the gpu engine, which answers nothing else) or cpu-partitioned
// (cpu-parallel's `cube` grouping-sets method); HAVING, the select list
// with GROUPING(), ORDER BY and LIMIT then run as on the CPU engines, over
// the operator's cells. A query the operator cannot take is refused with
// the reason, never answered by another engine (sql.cpp decides).
#pragma once

#include <string>
#include <vector>

#include "cube/full_cube.hpp"
#include "sql/cpu_serial.hpp"
#include "sql/logical_query.hpp"
#include "sql/parse_tree.hpp"
#include "sql/query_result.hpp"

namespace gpuolap::sql {

// SQL's aggregate as the operators' (the cube's and ordered aggregation's).
groupby::AggregateKind groupby_kind(AggregateFunction f);

// Why the cube operator cannot answer `q`; empty when it can.
std::string cube_route_refusal(const LogicalQuery& q);
// The plan's lines (EXPLAIN) of a query the operator answers by `algorithm`.
std::vector<std::string> cube_route_plan(const LogicalQuery& q, cube::Algorithm algorithm);
// Runs it: the cube's cells become the groups of the grouping sets.
QueryResult run_cube_route(const LogicalQuery& q, cube::Algorithm algorithm, const SourceText& source,
                           const ExecutionLimits& limits);

}  // namespace gpuolap::sql
