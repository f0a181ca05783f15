#include "sql/shared_route.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <memory>

#include "gpuolap/elapsed.hpp"
#include "gpuolap/error.hpp"
#include "groupby/shared_memory/shared_aggregation.hpp"
#include "sql/execution.hpp"
#include "sql/recent_cache.hpp"

namespace gpuolap::sql {
namespace {

using groupby::SharedValueType;

// A block's state must fit the shared memory of the GPUs we run on (an H100
// gives 227 KB a block; an A100 163 KB): the route keeps under this.
constexpr std::size_t kSharedBudget = 160 * 1024;
constexpr std::uint32_t kMaxCodes = 1u << 24;

const table::Column& column_of(const LogicalQuery& q, const Expr& e) { return q.tables[e.table].table->columns[e.column]; }

bool is_column(const ExprPtr& e) { return e && e->kind == ExprKind::InputColumn; }

// The one column every aggregate with an argument reads, or nullptr (none
// has one); `same` false when two read different columns.
const Expr* value_argument(const LogicalQuery& q, bool& same) {
  const Expr* arg = nullptr;
  same = true;
  for (const AggregateCall& a : q.aggregates)
    if (a.argument) {
      if (arg && (arg->table != a.argument->table || arg->column != a.argument->column)) same = false;
      arg = a.argument.get();
    }
  return arg;
}

// Whether any row of `n` satisfies `bad`, on TBB's threads (the checks scan
// whole columns before every query).
template <typename F>
bool any_row(std::size_t n, F&& bad) {
  std::atomic<bool> found{false};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 16), [&](const auto& r) {
    if (found.load(std::memory_order_relaxed)) return;
    for (std::size_t i = r.begin(); i < r.end(); ++i)
      if (bad(i)) {
        found = true;
        return;
      }
  });
  return found;
}

// What the route asks of a column, found in one parallel pass and kept per
// table and column (a repeated query does not scan its columns again); each
// entry keeps its table alive, so its columns cannot change under it.
struct ColumnFacts {
  bool nulls = false;
  std::uint64_t codes = 1;  // integers: the largest + 1, or kMaxCodes + 1 past 0..2^24-1; strings: the dictionary's size
  bool fits_int32 = true;   // integers
};

ColumnFacts scan_facts(const table::Column& c) {
  ColumnFacts f;
  f.nulls = !c.nulls.empty() && any_row(c.nulls.size(), [&](std::size_t i) { return c.nulls[i] != 0; });
  if (c.type == table::ColumnType::String) f.codes = std::max<std::uint64_t>(c.dictionary.size(), 1);
  if (c.type != table::ColumnType::Int64) return f;
  struct Range {
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  };
  const auto& v = c.int64s;
  const Range r = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, v.size(), 1 << 16), Range{},
      [&](const auto& rows, Range acc) {
        for (std::size_t i = rows.begin(); i < rows.end(); ++i) acc.lo = std::min(acc.lo, v[i]), acc.hi = std::max(acc.hi, v[i]);
        return acc;
      },
      [](Range a, Range b) { return Range{std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; });
  if (v.empty()) return f;
  f.codes = r.lo < 0 || r.hi >= kMaxCodes ? kMaxCodes + 1 : static_cast<std::uint64_t>(r.hi) + 1;
  f.fits_int32 = r.lo >= std::numeric_limits<std::int32_t>::min() && r.hi <= std::numeric_limits<std::int32_t>::max();
  return f;
}

ColumnFacts facts_of(const std::shared_ptr<const table::Table>& table, int column) {
  struct Entry {
    std::shared_ptr<const table::Table> table;
    int column;
    ColumnFacts facts;
  };
  static RecentCache<Entry> cache(16);
  return cache
      .get([&](const Entry& e) { return e.table == table && e.column == column; },
           [&] { return std::make_shared<const Entry>(Entry{table, column, scan_facts(table->columns[column])}); })
      ->facts;
}

ColumnFacts facts_of(const LogicalQuery& q, const Expr& e) { return facts_of(q.tables[e.table].table, e.column); }

// Why a value column cannot be a 4- or 8-byte operand; "" when it can.
std::string value_refusal(const table::Column& c, const ColumnFacts& f) {
  if (f.nulls) return "the aggregated column " + c.name + " has NULLs";
  if (c.type == table::ColumnType::Double) return {};
  if (c.type != table::ColumnType::Int64) return "the aggregated column " + c.name + " is not a number";
  if (!f.fits_int32) return "the aggregated column " + c.name + " has integers past 4 bytes";
  return {};
}

struct Values {
  SharedValueType type = SharedValueType::Double;
  std::vector<std::int32_t> ints;
};

std::size_t value_bytes(const table::Column& c) { return c.type == table::ColumnType::Double ? 8 : 4; }

// Columns coded and kept on the GPU for the route, per table and columns,
// so that a query repeated over tables held in memory neither codes nor
// uploads them again.
struct ResidentEntry {
  std::shared_ptr<const table::Table> table;
  int key = -1, value = -1;
  std::uint32_t codes = 0;  // groups, or the dimension's rows
  SharedValueType type = SharedValueType::Double;
  groupby::SharedVariant variant = groupby::SharedVariant::OneCopy;
  std::string why;
  std::unique_ptr<groupby::SharedResidentColumns> columns;
};

template <class Make>
std::shared_ptr<const ResidentEntry> resident_columns(const std::shared_ptr<const table::Table>& table, int key,
                                                      int value, std::uint32_t codes, Make&& make) {
  static RecentCache<ResidentEntry> cache(4);
  return cache.get(
      [&](const ResidentEntry& e) { return e.table == table && e.key == key && e.value == value && e.codes == codes; },
      make);
}

std::string group_refusal(const LogicalQuery& q) {
  if (q.grouping_sets.size() != 1 || q.group_keys.size() != 1 || q.grouping_sets[0] != std::vector<int>{0})
    return "it is not a GROUP BY of one key";
  if (!is_column(q.group_keys[0])) return "its key is an expression";
  const table::Column& key = column_of(q, *q.group_keys[0]);
  if (key.type != table::ColumnType::Int64 && key.type != table::ColumnType::String)
    return "its key " + key.name + " is not an integer or string column";
  const ColumnFacts kf = facts_of(q, *q.group_keys[0]);
  if (kf.nulls) return "its key " + key.name + " has NULLs";
  const std::uint64_t codes = kf.codes;
  if (codes > kMaxCodes) return "its key " + key.name + " has values outside 0..2^24-1";
  bool same = true;
  const Expr* arg = value_argument(q, same);
  if (!same) return "its aggregates read more than one column";
  std::size_t slot_bytes = 4;
  if (arg) {
    const std::string why = value_refusal(column_of(q, *arg), facts_of(q, *arg));
    if (!why.empty()) return why;
    slot_bytes += 8;
    for (const AggregateCall& a : q.aggregates)
      if (a.function == AggregateFunction::Min || a.function == AggregateFunction::Max) slot_bytes = 4 + 8 + 16;
  }
  if (codes * slot_bytes > kSharedBudget)
    return std::to_string(codes) + " groups of " + std::to_string(slot_bytes) + " bytes pass a block's shared memory";
  return {};
}

// The join's sides: the dimension (its dense id and the aggregated column)
// and the fact's foreign key.
struct JoinSides {
  int fact = -1, fk = -1, dim = -1, id = -1;
};

std::string join_refusal(const LogicalQuery& q, JoinSides& sides) {
  if (q.tables.size() != 2 || q.joins.size() != 1) return "it is not a join of two tables";
  if (!q.group_keys.empty()) return "it groups the join";
  bool same = true;
  const Expr* arg = value_argument(q, same);
  if (!same || !arg) return "its aggregates do not all read one dimension column";
  for (const AggregateCall& a : q.aggregates)
    if (a.function == AggregateFunction::Min || a.function == AggregateFunction::Max)
      return "the join's operator sums and counts (no MIN/MAX)";
  const JoinEquality& j = q.joins[0];
  sides.dim = arg->table;
  if (j.left_table == sides.dim) sides.id = j.left_column, sides.fact = j.right_table, sides.fk = j.right_column;
  else if (j.right_table == sides.dim) sides.id = j.right_column, sides.fact = j.left_table, sides.fk = j.left_column;
  else return "the aggregated column is not on the join";
  const table::Table& dim = *q.tables[sides.dim].table;
  const table::Column& id = dim.columns[sides.id];
  const table::Column& fk = q.tables[sides.fact].table->columns[sides.fk];
  if (id.type != table::ColumnType::Int64 || fk.type != table::ColumnType::Int64)
    return "the join's columns are not integers";
  const std::size_t n = dim.row_count();
  if (n == 0 || n > kMaxCodes) return "the dimension has no rows or more than 2^24";
  std::vector<std::uint8_t> seen(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::int64_t k = id.is_null(r) ? -1 : id.int64s[r];
    if (k < 0 || static_cast<std::size_t>(k) >= n || seen[k])
      return "the dimension's key " + id.name + " is not the integers 0..n-1 each once";
    seen[k] = 1;
  }
  const table::Column& b = dim.columns[arg->column];
  const std::string why = value_refusal(b, facts_of(q.tables[sides.dim].table, arg->column));
  if (!why.empty()) return why;
  if (n * value_bytes(b) > kSharedBudget) return "the dimension's column passes a block's shared memory";
  return {};
}

// An aggregate's final value from the operator's count and sum (and min/max).
void push_final(ValueVector& out, const AggregateCall& a, std::int64_t count, bool ints, std::int64_t isum, double dsum,
                std::int64_t imin, double dmin, std::int64_t imax, double dmax) {
  switch (a.function) {
    case AggregateFunction::CountStar:
    case AggregateFunction::Count:
      out.push_int(count);
      return;
    case AggregateFunction::Sum:
      if (count == 0) out.push_null();
      else if (ints) out.push_int(isum);
      else out.push_double(dsum);
      return;
    case AggregateFunction::Avg:
      if (count == 0) out.push_null();
      else out.push_double((ints ? static_cast<double>(isum) : dsum) / static_cast<double>(count));
      return;
    case AggregateFunction::Min:
      if (ints) out.push_int(imin);
      else out.push_double(dmin);
      return;
    case AggregateFunction::Max:
      if (ints) out.push_int(imax);
      else out.push_double(dmax);
      return;
  }
}

}  // namespace

std::string shared_route_refusal(const LogicalQuery& q) {
  if (!q.aggregated || q.aggregates.empty()) return "the query computes no aggregate";
  if (!q.filters.empty()) return "it has a WHERE clause";
  for (const AggregateCall& a : q.aggregates) {
    if (a.distinct) return "an aggregate is DISTINCT";
    if (a.argument && !is_column(a.argument)) return "an aggregate's argument is an expression";
  }
  if (q.tables.size() == 1) return group_refusal(q);
  JoinSides sides;
  return join_refusal(q, sides);
}

std::vector<std::string> shared_route_plan(const LogicalQuery& q) {
  std::vector<std::string> lines;
  if (q.tables.size() == 1)
    lines.push_back("shared-memory grouped aggregation (src/groupby/shared_memory/) over " + q.tables[0].name +
                    ", on the GPU: the groups' running aggregates in each block's shared memory, the variant by "
                    "the skew of a sample (gpuolap groupby-shared runs a stored placement)");
  else
    lines.push_back("shared-memory foreign-key join (src/groupby/shared_memory/) of " + q.tables[0].name + " and " +
                    q.tables[1].name + ", on the GPU: the dimension's column in each block's shared memory");
  const std::vector<std::string> finish = execution::finish_plan_lines(q);
  lines.insert(lines.end(), finish.begin(), finish.end());
  return lines;
}

void require_gpu(bool available) {
  if (!available)
    throw InputError("the gpu engine needs an NVIDIA GPU: " + groupby::shared_gpu_problem() +
                     " (--engine cpu-parallel answers the query)");
}

QueryResult run_shared_route(const LogicalQuery& q, const SourceText& source, const ExecutionLimits& limits) {
  require_gpu(groupby::shared_gpu_available());
  const auto start = std::chrono::steady_clock::now();
  bool same = true;
  const Expr* arg = value_argument(q, same);
  execution::Groups groups(q, source, q.grouping_sets, q.grouping_sets.size(), limits.max_rows);
  std::vector<OperatorTiming> timings;
  groupby::SharedGpuOptions options;
  if (q.tables.size() == 1) {
    const table::Column& key = column_of(q, *q.group_keys[0]);
    const table::Column* x = arg ? &column_of(q, *arg) : nullptr;
    const std::uint32_t codes = static_cast<std::uint32_t>(facts_of(q, *q.group_keys[0]).codes);
    const auto entry = resident_columns(
        q.tables[0].table, q.group_keys[0]->column, arg ? arg->column : -1, codes, [&] {
          auto e = std::make_shared<ResidentEntry>();
          e->table = q.tables[0].table;
          e->key = q.group_keys[0]->column;
          e->value = arg ? arg->column : -1;
          e->codes = codes;
          const std::size_t rows = e->table->row_count();
          std::vector<std::uint32_t> coded(rows);
          tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 1 << 16), [&](const auto& r) {
            for (std::size_t i = r.begin(); i < r.end(); ++i)
              coded[i] = static_cast<std::uint32_t>(key.type == table::ColumnType::String ? key.int32s[i] : key.int64s[i]);
          });
          std::vector<std::int32_t> ints;
          const void* values = nullptr;
          if (x) {
            e->type = x->type == table::ColumnType::Double ? SharedValueType::Double : SharedValueType::Int32;
            if (e->type == SharedValueType::Int32) {
              ints.resize(rows);
              tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 1 << 16), [&](const auto& r) {
                for (std::size_t i = r.begin(); i < r.end(); ++i) ints[i] = static_cast<std::int32_t>(x->int64s[i]);
              });
              values = ints.data();
            } else {
              values = x->doubles.data();
            }
          }
          groupby::GroupedInput probe;
          probe.rows = rows;
          probe.groups = codes;
          probe.codes = coded.data();
          probe.values = values;
          probe.value_type = e->type;
          e->variant = groupby::choose_shared_variant(probe, false, e->why);
          e->columns = std::make_unique<groupby::SharedResidentColumns>(coded.data(), rows, values, e->type);
          return std::shared_ptr<const ResidentEntry>(std::move(e));
        });
    groupby::GroupedInput in;
    in.rows = q.tables[0].table->row_count();
    in.groups = codes;
    in.codes = entry->columns->codes();
    in.values = entry->columns->values();
    in.value_type = entry->type;
    for (const AggregateCall& a : q.aggregates)
      in.min_max = in.min_max || a.function == AggregateFunction::Min || a.function == AggregateFunction::Max;
    options.variant = entry->variant;
    options.device = entry->columns->device();
    options.input_on_device = true;
    timings.push_back({"columns coded and kept on the GPU (once per table)", seconds_since(start), in.rows});
    const auto kernel_start = std::chrono::steady_clock::now();
    const groupby::GroupedResult r = groupby::grouped_gpu(in, options);
    timings.push_back({"shared-memory grouped aggregation (" + std::string(groupby::shared_variant_name(options.variant)) +
                           ": " + entry->why + ")",
                       seconds_since(kernel_start), 0});
    const auto finish_start = std::chrono::steady_clock::now();
    ValueVector keys(q.group_keys[0]->type);
    std::vector<ValueVector> finals;
    for (const AggregateCall& a : q.aggregates) finals.emplace_back(a.result_type);
    const bool ints = in.value_type == SharedValueType::Int32;
    for (std::uint32_t g = 0; g < in.groups; ++g) {
      if (r.count[g] == 0) continue;
      if (key.type == table::ColumnType::String) keys.push_string(std::string(key.dictionary[g]));
      else keys.push_int(g);
      for (std::size_t a = 0; a < q.aggregates.size(); ++a)
        push_final(finals[a], q.aggregates[a], r.count[g], ints, ints && x ? r.sum_ints[g] : 0,
                   !ints && x ? r.sum_doubles[g] : 0, r.min_ints.empty() ? 0 : r.min_ints[g],
                   r.min_doubles.empty() ? 0 : r.min_doubles[g], r.max_ints.empty() ? 0 : r.max_ints[g],
                   r.max_doubles.empty() ? 0 : r.max_doubles[g]);
    }
    if (keys.size() > limits.max_rows) execution::too_many(limits.max_rows, "groups");
    groups.set_of.assign(keys.size(), 0);
    groups.keys[0] = std::move(keys);
    groups.finals = std::move(finals);
    timings.back().rows_out = groups.set_of.size();
    timings.push_back({"groups", seconds_since(finish_start), groups.set_of.size()});
  } else {
    JoinSides sides;
    join_refusal(q, sides);
    const table::Table& dim = *q.tables[sides.dim].table;
    const table::Column& id = dim.columns[sides.id];
    const table::Column& b = dim.columns[arg->column];
    const table::Column& fk = q.tables[sides.fact].table->columns[sides.fk];
    const std::size_t n = dim.row_count();
    // The dimension's column by id; a key without a match as code n.
    Values by_id;
    std::vector<double> doubles;
    if (b.type == table::ColumnType::Double) {
      doubles.resize(n);
      for (std::size_t r = 0; r < n; ++r) doubles[id.int64s[r]] = b.doubles[r];
    } else {
      by_id.type = SharedValueType::Int32;
      by_id.ints.resize(n);
      for (std::size_t r = 0; r < n; ++r) by_id.ints[id.int64s[r]] = static_cast<std::int32_t>(b.int64s[r]);
    }
    const auto entry = resident_columns(
        q.tables[sides.fact].table, sides.fk, -1, static_cast<std::uint32_t>(n), [&] {
          auto e = std::make_shared<ResidentEntry>();
          e->table = q.tables[sides.fact].table;
          e->key = sides.fk;
          e->codes = static_cast<std::uint32_t>(n);
          std::vector<std::uint32_t> keys(fk.size());
          tbb::parallel_for(tbb::blocked_range<std::size_t>(0, keys.size(), 1 << 16), [&](const auto& r) {
            for (std::size_t i = r.begin(); i < r.end(); ++i) {
              const std::int64_t k = fk.is_null(i) ? -1 : fk.int64s[i];
              keys[i] = k >= 0 && static_cast<std::uint64_t>(k) < n ? static_cast<std::uint32_t>(k)
                                                                    : static_cast<std::uint32_t>(n);
            }
          });
          e->columns = std::make_unique<groupby::SharedResidentColumns>(keys.data(), keys.size(), nullptr,
                                                                        SharedValueType::Int32);
          return std::shared_ptr<const ResidentEntry>(std::move(e));
        });
    groupby::JoinInput in;
    in.rows = fk.size();
    in.keys = entry->columns->codes();
    in.dim_rows = static_cast<std::uint32_t>(n);
    in.value_type = by_id.type;
    in.dim_values = by_id.type == SharedValueType::Double ? static_cast<const void*>(doubles.data()) : by_id.ints.data();
    options.variant = groupby::SharedVariant::OneCopy;
    options.device = entry->columns->device();
    options.input_on_device = true;
    timings.push_back({"foreign keys coded and kept on the GPU (once per table)", seconds_since(start), in.rows});
    const auto kernel_start = std::chrono::steady_clock::now();
    const groupby::JoinResult r = groupby::join_gpu(in, options);
    timings.push_back({"shared-memory foreign-key join (shared: one copy)", seconds_since(kernel_start), 1});
    std::vector<ValueVector> finals;
    const bool ints = in.value_type == SharedValueType::Int32;
    for (const AggregateCall& a : q.aggregates) {
      finals.emplace_back(a.result_type);
      push_final(finals.back(), a, r.matched, ints, r.sum_int, r.sum_double, 0, 0, 0, 0);
    }
    groups.set_of.assign(1, 0);
    groups.finals = std::move(finals);
  }
  return execution::finish_groups(q, std::move(groups), source, limits.max_rows, std::move(timings));
}

}  // namespace gpuolap::sql
