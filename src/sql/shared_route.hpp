// The memory-contention paper's operators (src/groupby/shared_memory/)
// behind the gpu engine: a GROUP BY of one coded column, and an aggregate
// over a foreign-key join to a small dimension, each with its state in
// shared memory. The gpu engine takes this route where the query and its
// data fit it (the groups' or the dimension's state within a block's shared
// memory), else the cube operator's route (cube_route.hpp); EXPLAIN says
// which, and why this one was not taken.
//
//   SELECT a, COUNT(*), SUM(x), AVG(x), MIN(x), MAX(x) FROM f GROUP BY a [HAVING] [ORDER BY] [LIMIT]
//     a: integers 0..2^24-1 or a string column (its dictionary codes), no NULL;
//     x: one column for every aggregate, double or integers that fit 4 bytes, no NULL
//   SELECT COUNT(*), SUM(d.b), AVG(d.b) FROM f JOIN d ON f.fk = d.id
//     d.id: the integers 0..n-1, each once; d.b double or 4-byte integers, no NULL;
//     f.fk: any integers (a NULL or a key outside 0..n-1 has no match)
#pragma once

#include <string>
#include <vector>

#include "sql/cpu_serial.hpp"
#include "sql/logical_query.hpp"
#include "sql/parse_tree.hpp"
#include "sql/query_result.hpp"

namespace gpuolap::sql {

// Why the shared-memory operators cannot answer `q` (its shape or its
// data); empty when one can.
std::string shared_route_refusal(const LogicalQuery& q);
// Throws the gpu engine's InputError, naming why there is no GPU
// (gpu_status's problem), unless `available`.
void require_gpu(bool available);
std::vector<std::string> shared_route_plan(const LogicalQuery& q);
QueryResult run_shared_route(const LogicalQuery& q, const SourceText& source, const ExecutionLimits& limits);

}  // namespace gpuolap::sql
