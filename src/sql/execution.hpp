// The pieces both CPU engines run a plan with: batches of joined rows (the
// scan, the filters, the dimension lookups), aggregate states that can be
// merged, the groups of the grouping sets (fed from rows, merged from
// another thread's, or derived from a finer set: the lattice), and the end
// of a query (HAVING, the select list, ORDER BY, OFFSET/LIMIT).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "sql/expression.hpp"
#include "sql/id_table.hpp"
#include "sql/logical_query.hpp"
#include "sql/plan.hpp"
#include "sql/query_result.hpp"

namespace gpuolap::sql::execution {

constexpr std::size_t kBatchRows = 4096;
constexpr std::uint32_t kNoRow = 0xFFFFFFFFu;

// Rows of the joined tables: for each table of FROM joined so far, the row
// of that table in each row of the batch.
struct Batch {
  std::vector<std::vector<std::uint32_t>> rows;
  std::size_t size = 0;
  void keep(const std::vector<std::uint32_t>& positions);
};

// The leaves of row expressions: the columns of the batch's tables.
class BatchColumns : public LeafSource {
 public:
  BatchColumns(const LogicalQuery& q, const Batch& b) : q_(q), b_(b) {}
  ValueVector leaf(const Expr& e, const std::vector<std::uint32_t>& positions) const override;
  const table::Column* input_column(const Expr& e, const std::vector<std::uint32_t>& positions,
                                    std::vector<std::uint32_t>& rows) const override;

 private:
  const LogicalQuery& q_;
  const Batch& b_;
};

// A dimension's key column, ready to be looked up: an array indexed by
// key - min, or chains of rows per key in a hash table.
class DimensionIndex {
 public:
  // Rows where `allowed` (when not empty) holds 0 are left out.
  DimensionIndex(const table::Column& key, const JoinStep& step, const std::vector<std::uint8_t>& allowed);
  // The first dimension row whose key equals row `r` of `probe` (same type), or kNoRow.
  std::uint32_t first(const table::Column& probe, std::uint32_t r) const;
  std::uint32_t next(std::uint32_t row) const { return method_ == JoinMethod::ArrayLookup ? kNoRow : next_[row]; }
  // Every match of the rows `probe_rows` of `probe`: for each, its index in
  // probe_rows (`positions`) and the dimension row (`matches`), in order.
  void probe_all(const table::Column& probe, const std::vector<std::uint32_t>& probe_rows,
                 std::vector<std::uint32_t>& positions, std::vector<std::uint32_t>& matches) const;

 private:
  JoinMethod method_;
  std::int64_t min_;
  std::vector<std::uint32_t> slots_, next_;
  std::unordered_map<std::int64_t, std::uint32_t> int_heads_;
  std::unordered_map<std::string, std::uint32_t> bytes_heads_;
};

// Seconds and output rows of the operators of the row pipeline: the scan
// (index 0), then each join.
struct PipelineTimes {
  std::vector<double> seconds;
  std::vector<std::uint64_t> rows_out;
  void add(const PipelineTimes& other);
};

// The scan, its filters and the joins of a plan, batch by batch. The
// dimension indexes are built once; rows() may run on several threads.
class JoinedRows {
 public:
  JoinedRows(const LogicalQuery& q, const PhysicalPlan& plan, const SourceText& source);
  std::size_t fact_rows() const { return fact_rows_; }
  // Rows [begin, end) of the fact table, filtered and joined.
  Batch rows(std::size_t begin, std::size_t end, PipelineTimes& times) const;
  PipelineTimes empty_times() const;
  // The operators' names, in PipelineTimes' order.
  std::vector<std::string> operator_names() const;
  double index_seconds() const { return index_seconds_; }
  // The name of that step for --timing, with the joins it moved first.
  const std::string& index_label() const { return index_label_; }

 private:
  const LogicalQuery& q_;
  const PhysicalPlan& plan_;
  const SourceText& source_;
  std::vector<DimensionIndex> indexes_;
  // The leading joins probed before the scan's filters: array lookups whose
  // dimensions' own filters keep at most 1 in kSelectiveJoin of their rows.
  static constexpr std::size_t kSelectiveJoin = 16;
  std::size_t early_joins_ = 0;
  std::string index_label_ = "filter dimensions, build their indexes";
  std::size_t fact_rows_ = 0;
  double index_seconds_ = 0;
};

// One aggregate's running state for every group: a count, and only the
// state its function and argument type need (a double sum, a 128-bit sum
// for SUM and AVG of integers, the best value for MIN/MAX, the
// distinct values), so that a group of SUM(double) holds 16 bytes, not 49.
class AggregateState {
 public:
  AggregateState(const AggregateCall& call, const SourceText& source);
  void add_group();
  void update(std::uint32_t g, const ValueVector* arg, std::size_t i);
  // update(groups[i], arg, i) for every row i of a batch, in row order.
  void update_rows(const std::vector<std::uint32_t>& groups, const ValueVector* arg);
  // Adds to `tasks` the appending of the groups of `parts` (the same
  // aggregate) after these, a task per column (concatenate.hpp).
  void append_all(const std::vector<const AggregateState*>& parts, std::vector<std::function<void()>>& tasks);
  // Folds group `og` of `other` (the same aggregate) into group `g`.
  void merge(std::uint32_t g, const AggregateState& other, std::uint32_t og);
  // The final values, a row per group. `shown(g)` says whether group g is
  // in the answer: a group of a set only derived from (the lattice's hidden
  // finest set) gets NULL, and its integer sum is not range-checked, as no
  // one reads it.
  template <class Shown>
  ValueVector finish(const Shown& shown) const;

 private:
  const AggregateCall* call_;
  const SourceText* source_;
  std::vector<std::int64_t> count_;
  std::vector<double> double_sum_;
  // SUM and AVG of integers: exact in 128 bits, as PostgreSQL's numeric. A
  // SUM is checked against bigint's range once, at the end, so whether it
  // fails does not depend on the order its rows are added in (as the GPU
  // routes' sums, which add in no fixed order).
  std::vector<__int128> wide_sum_;
  ValueVector best_;
  std::vector<std::unordered_set<std::string>> distinct_;
  // Which of the states above this aggregate keeps (count_ always).
  bool double_sums_ = false, wide_sums_ = false, best_values_ = false;
};

// The groups of the grouping sets: a hash table per set from the bytes of
// its keys to a group; each group's key values (NULL where its set rolls
// the key up) and aggregate states. `sets` may hold one set more than the
// query's, hidden: the finest grouping, which the lattice aggregates from
// the rows and derives the others from.
struct Groups {
  Groups(const LogicalQuery& q, const SourceText& source, std::vector<std::vector<int>> sets, std::size_t visible_sets,
         std::uint64_t max_groups);

  // Rows arrive sorted on the keys of the one set: a key equal to the
  // last one's is its group; another starts a group (no hash table).
  bool ordered = false;

  // Per set, where it has one, a perfect hash of its keys (the plan's) and
  // the group of each slot.
  std::vector<PerfectHash> perfect;
  std::vector<std::vector<std::uint32_t>> perfect_groups;
  std::vector<IdTable> hashed_groups;  // sets whose ids are hashed
  std::vector<std::uint64_t> perfect_id;  // per group: its id in its set's perfect hash, or kNoId
  static constexpr std::uint64_t kNoId = ~std::uint64_t{0};
  void use_perfect_hashes(const std::vector<PerfectHash>& hashes);

  // Aggregates the batch's rows into the sets `fed`.
  void consume(const Batch& batch, const Evaluator& rows, const std::vector<std::size_t>& fed);
  // Folds another Groups of the same sets (a thread's) into this one; with
  // `part_of`, only its groups of part `part` (see parts_of_groups).
  void merge_from(const Groups& other, const std::vector<std::uint8_t>* part_of = nullptr, std::uint8_t part = 0);
  // Appends the groups of `parts` after these, in order, each a group of
  // its own (parts that share no group: the ordered path's ranges, the
  // parts of a parallel merge), without a lookup: every column of keys,
  // ids and states concatenated by a task of its own, the tasks in
  // parallel. The appended groups are not entered in the lookup tables, so
  // nothing may be merged into them afterwards (derive() only reads them).
  // With `finished`, the parts have been finish()ed (in parallel, by their
  // owners): their finals are appended instead of their states, and these
  // groups are finished too.
  // `parallel`: the tasks on TBB's threads (cpu-serial runs them in turn).
  void append_all(const std::vector<const Groups*>& parts, bool finished = false, bool parallel = true);
  // Splits the groups into `parts` (at most 256) parts by a hash of their
  // set and id (or key bytes): a group falls in the same part in every
  // thread's Groups, so the parts merge independently.
  std::vector<std::uint8_t> parts_of_groups(std::size_t parts) const;
  // Fills every set not in `computed` from the smallest computed set that
  // contains it; returns a line per derived set saying from which.
  // `parallel`: a wave's sets derived at once on TBB's threads (cpu-parallel).
  std::vector<std::string> derive(std::vector<std::size_t> computed, bool parallel);
  // The groups of set `s` from those of its computed `parent`, added to `into`.
  void derive_into(std::size_t s, std::size_t parent, Groups& into) const;
  // Adds the row of an empty grouping set over no rows; computes the finals.
  void finish();
  // The groups of the query's sets (not the hidden one), in order.
  std::vector<std::uint32_t> visible_groups() const;

  const LogicalQuery& q;
  const SourceText& source;
  std::vector<std::vector<int>> sets;
  std::size_t visible_sets;
  std::uint64_t max_groups;
  std::vector<std::unordered_map<std::string, std::uint32_t>> per_set;
  std::vector<std::vector<bool>> in_set;  // [set][key]
  std::vector<std::uint32_t> set_of;
  std::vector<ValueVector> keys;
  std::vector<AggregateState> aggregates;
  std::vector<ValueVector> finals;

 private:
  std::uint32_t add(std::size_t set, const std::vector<ValueVector>& key_values, std::size_t row);
  std::uint32_t find_or_add(std::size_t set, const std::string& key_bytes, const std::vector<ValueVector>& key_values,
                            std::size_t row);
  // The group of set `set` whose perfect-hash id is `id`, or kNoRow.
  std::uint32_t& group_of_id(std::size_t set, std::uint64_t id);
  std::uint32_t add_with_id(std::size_t set, const std::vector<ValueVector>& key_values, std::size_t row, std::uint64_t id);
};

// The plan lines (EXPLAIN) of what finish_groups does after an operator's
// groups: "having", "sort", "limit", each where the query asks for it.
std::vector<std::string> finish_plan_lines(const LogicalQuery& q);

// HAVING, the select list, ORDER BY and OFFSET/LIMIT over the groups. The
// groups are used up: where every group is answered, a column read once is
// moved into the result.
QueryResult finish_groups(const LogicalQuery& q, Groups&& groups, const SourceText& source,
                          std::uint64_t max_rows, std::vector<OperatorTiming> timings);
// ORDER BY and OFFSET/LIMIT over projected rows.
QueryResult finish_rows(const LogicalQuery& q, std::vector<ValueVector> outputs, std::vector<ValueVector> order_keys,
                        std::size_t rows, std::uint64_t max_rows, std::vector<OperatorTiming> timings);

[[noreturn]] void too_many(std::uint64_t limit, const char* what);

}  // namespace gpuolap::sql::execution
