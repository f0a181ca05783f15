// SQL's gpu engine: a GROUP BY — ROLLUP, CUBE, GROUPING SETS or plain —
// over the columns of one table, answered by the full-cube operator
// (src/cube/, gpu-lattice) on the GPU; HAVING, the select list with
// GROUPING(), ORDER BY and LIMIT then run as on the CPU engines, over the
// operator's cells. Other queries are refused with the reason, never
// answered by another engine.
#pragma once

#include <string>
#include <vector>

#include "sql/cpu_serial.hpp"
#include "sql/logical_query.hpp"
#include "sql/parse_tree.hpp"
#include "sql/query_result.hpp"

namespace gpuolap::sql {

// Why the gpu engine cannot answer `q`; empty when it can.
std::string cube_route_refusal(const LogicalQuery& q);
// The plan's lines (EXPLAIN) of a query the gpu engine answers.
std::vector<std::string> cube_route_plan(const LogicalQuery& q);
// Runs it: the cube's cells become the groups of the grouping sets.
QueryResult run_cube_route(const LogicalQuery& q, const SourceText& source, const ExecutionLimits& limits);

}  // namespace gpuolap::sql
