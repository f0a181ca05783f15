// The physical plan of a bound query: a scan of the fact table with the
// filters that need only it, the star join (each dimension joined by an
// array lookup when its key is dense, else by a hash table), the filters
// placed right after the joins they need, the aggregation, the sort and the
// limit — each choice with the reason for it, for EXPLAIN and --timing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sql/logical_query.hpp"
#include "sql/parse_tree.hpp"

namespace gpuolap::sql {

enum class JoinMethod : std::uint8_t { ArrayLookup, Hash };

struct JoinStep {
  int dimension = -1, dimension_column = -1;  // the table joined in, and its key
  int probe_table = -1, probe_column = -1;    // the joined table whose column looks it up
  JoinMethod method = JoinMethod::Hash;
  std::string why;
  std::int64_t key_min = 0, key_span = 0;  // ArrayLookup: the keys lie in [min, min + span)
  // Filters that read only this dimension: applied to the dimension once,
  // before the lookup structure is built, so its rows that fail them are
  // never found (a semi-join reduction).
  std::vector<ExprPtr> dimension_filters;
  std::vector<ExprPtr> filters;  // the others, applied once this dimension is joined
};

// Hash: a hash table from the keys to the group. Ordered: the input comes
// sorted on the grouping keys, so a group ends where its key changes and
// needs no hash table (one grouping set only).
enum class AggregationMethod : std::uint8_t { None, Hash, Ordered };

// How the grouping sets are computed: each from the rows (one pass per
// set), or the lattice: the finest grouping from the rows once, each other
// set from its smallest already computed parent. Cube (cpu-parallel only):
// the whole query's grouping by the full-cube operator's cpu-partitioned
// (cube_route.hpp), which codes the keys densely once and scatters the rows
// into key ranges; the planner's methods are not used then.
enum class GroupingSetsMethod : std::uint8_t { PerSet, Lattice, Cube };

// Gpu: grouping-set aggregations over one table, by the full-cube operator
// (cube_route.hpp, gpu-lattice); nothing else.
enum class SqlEngine : std::uint8_t { CpuSerial, CpuParallel, Gpu };

struct PlanOptions {
  SqlEngine engine = SqlEngine::CpuSerial;
  std::optional<GroupingSetsMethod> grouping_sets;  // empty: the planner chooses
};

// Group ids straight from the key columns (a perfect hash, as DuckDB
// does): each key a column of a table of FROM whose values map to
// 1..cardinality (dictionary codes of strings, integers minus their least),
// 0 for NULL; the id is the sum of value x stride. Where the product of the
// cardinalities is small the id indexes an array of groups; otherwise
// (`hashed`) the 64-bit id is the key of a hash table, still far cheaper
// than hashing the keys' bytes, and a coarser set's id follows from a finer
// one's by digit arithmetic (the lattice).
struct PerfectHash {
  struct Key {
    int table = -1, column = -1;
    std::int64_t min = 0;       // integers: the least value
    std::uint64_t stride = 1;
    std::uint64_t radix = 1;    // cardinality + 1
  };
  std::vector<Key> keys;        // in the set's order
  std::uint64_t slots = 0;      // the product of (cardinality + 1); 0: no perfect hash
  bool hashed = false;          // ids looked up in a hash table, not an array of `slots`
};

struct PhysicalPlan {
  int fact_table = -1;  // -1: no FROM (one row of no columns)
  std::vector<ExprPtr> scan_filters;
  std::vector<JoinStep> joins;
  AggregationMethod aggregation = AggregationMethod::None;
  std::string aggregation_why;
  SqlEngine engine = SqlEngine::CpuSerial;
  GroupingSetsMethod grouping_sets = GroupingSetsMethod::PerSet;
  std::string grouping_sets_why;
  // The sets the aggregation keeps: the query's, then (lattice, when no
  // set of the query is the finest) the finest grouping, hidden.
  std::vector<std::vector<int>> aggregated_sets;
  // The sets aggregated from the rows; the others are derived.
  std::vector<std::size_t> fed_sets;
  // cpu-parallel: per aggregated set, a perfect hash where its keys allow
  // one (slots 0: none); an array for fed sets within the slot budget.
  std::vector<PerfectHash> perfect_hashes;
};

// Chooses the fact table (the largest), the join order (each dimension by
// an equality to a table already joined) and the operators. Tables that no
// equality joins are an InputError at their position.
PhysicalPlan plan_query(const LogicalQuery& query, const SourceText& source, const PlanOptions& options);

// Why the rows of table `table` of `q` come sorted on the grouping keys of
// `set` (indexes into q.group_keys), in words; "" when they do not: every
// key a column of that table, together (in any order) a prefix of the
// order the table is stored in, so that equal keys are neighbours.
std::string stored_sorted_on(const LogicalQuery& q, int table, const std::vector<int>& set);
// A table's stored order as "c1, c2" ("" when the order is unknown).
std::string sort_order_text(const table::Table& table);

// The plan as indented lines (EXPLAIN).
std::vector<std::string> explain_lines(const LogicalQuery& query, const PhysicalPlan& plan);

// The text of an expression, for plans: column names, operators, constants.
std::string expression_text(const LogicalQuery& query, const Expr& e);

}  // namespace gpuolap::sql
