// cpu-parallel: the plan of cpu-serial on all cores (TBB). The fact table
// is cut into batches that threads scan, filter and join on their own;
// each thread aggregates into hash tables of its own (per grouping set, or
// only the finest for the lattice), merged at the end; rows of a query
// without aggregates are kept per batch and joined in batch order.
#pragma once

#include "sql/cpu_serial.hpp"

namespace gpuolap::sql {

QueryResult run_cpu_parallel(const LogicalQuery& query, const PhysicalPlan& plan, const SourceText& source,
                             const ExecutionLimits& limits);

}  // namespace gpuolap::sql
