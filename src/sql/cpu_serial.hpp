// cpu-serial: the oracle. The simplest correct execution of a plan: the
// fact table in batches of rows, each batch filtered, joined dimension by
// dimension, then aggregated (a hash table per grouping set fed from the
// rows, or in order on sorted input; the lattice derives the other sets)
// or projected, then HAVING, ORDER BY and LIMIT over the whole result.
#pragma once

#include <cstdint>

#include "sql/logical_query.hpp"
#include "sql/plan.hpp"
#include "sql/query_result.hpp"

namespace gpuolap::sql {

struct ExecutionLimits {
  // Most rows a result (or the groups, or the rows before ORDER BY) may
  // have; more is an InputError saying so.
  std::uint64_t max_rows = 10'000'000;
};

QueryResult run_cpu_serial(const LogicalQuery& query, const PhysicalPlan& plan, const SourceText& source,
                           const ExecutionLimits& limits);

}  // namespace gpuolap::sql
