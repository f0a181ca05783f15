#include "sql/cpu_serial.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "gpuolap/error.hpp"
#include "sql/binder.hpp"

namespace gpuolap::sql {

namespace {

constexpr std::size_t kBatchRows = 4096;
constexpr std::uint32_t kNoRow = std::numeric_limits<std::uint32_t>::max();

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Rows of the joined tables: for each table of FROM joined so far, the row
// of that table in each row of the batch.
struct Batch {
  std::vector<std::vector<std::uint32_t>> rows;
  std::size_t size = 0;

  void keep(const std::vector<std::uint32_t>& positions) {
    for (auto& r : rows) {
      if (r.empty()) continue;
      std::vector<std::uint32_t> kept(positions.size());
      for (std::size_t i = 0; i < positions.size(); ++i) kept[i] = r[positions[i]];
      r = std::move(kept);
    }
    size = positions.size();
  }
};

ValueVector gather(const table::Column& c, const std::vector<std::uint32_t>& rows,
                   const std::vector<std::uint32_t>& positions) {
  ValueVector out(column_sql_type(c.type));
  out.reserve(positions.size());
  for (std::uint32_t p : positions) {
    std::uint32_t r = rows[p];
    if (c.is_null(r)) {
      out.push_null();
      continue;
    }
    switch (c.type) {
      case table::ColumnType::Int64: out.push_int(c.int64s[r]); break;
      case table::ColumnType::Double: out.push_double(c.doubles[r]); break;
      case table::ColumnType::Date: out.push_int(c.int32s[r]); break;
      case table::ColumnType::String: out.push_string(c.dictionary[c.int32s[r]]); break;
    }
  }
  return out;
}

class BatchColumns : public LeafSource {
 public:
  BatchColumns(const LogicalQuery& q, const Batch& b) : q_(q), b_(b) {}
  ValueVector leaf(const Expr& e, const std::vector<std::uint32_t>& positions) const override {
    return gather(q_.tables[e.table].table->columns[e.column], b_.rows[e.table], positions);
  }

 private:
  const LogicalQuery& q_;
  const Batch& b_;
};

// A dimension's key column, ready to be looked up: an array indexed by
// key - min, or chains of rows per key in a hash table.
class DimensionIndex {
 public:
  DimensionIndex(const table::Column& key, const JoinStep& step) : key_(key), method_(step.method), min_(step.key_min) {
    const std::size_t rows = column_rows(key);
    if (method_ == JoinMethod::ArrayLookup) {
      slots_.assign(static_cast<std::size_t>(step.key_span), kNoRow);
      for (std::size_t r = 0; r < rows; ++r) slots_[static_cast<std::size_t>(int_key(key, r) - min_)] = static_cast<std::uint32_t>(r);
      return;
    }
    next_.assign(rows, kNoRow);
    for (std::size_t r = rows; r-- > 0;) {  // chains in row order
      if (key.is_null(r)) continue;
      std::uint32_t& head = key.type == table::ColumnType::String || key.type == table::ColumnType::Double
                                ? bytes_heads_.try_emplace(bytes_key(key, r), kNoRow).first->second
                                : int_heads_.try_emplace(int_key(key, r), kNoRow).first->second;
      next_[r] = head;
      head = static_cast<std::uint32_t>(r);
    }
  }

  // The first dimension row whose key equals row `r` of `probe` (same type).
  std::uint32_t first(const table::Column& probe, std::uint32_t r) const {
    if (probe.is_null(r)) return kNoRow;
    if (method_ == JoinMethod::ArrayLookup) {
      std::int64_t v = int_key(probe, r);
      if (v < min_ || static_cast<std::uint64_t>(v - min_) >= slots_.size()) return kNoRow;
      return slots_[static_cast<std::size_t>(v - min_)];
    }
    if (probe.type == table::ColumnType::String || probe.type == table::ColumnType::Double) {
      auto it = bytes_heads_.find(bytes_key(probe, r));
      return it == bytes_heads_.end() ? kNoRow : it->second;
    }
    auto it = int_heads_.find(int_key(probe, r));
    return it == int_heads_.end() ? kNoRow : it->second;
  }
  std::uint32_t next(std::uint32_t row) const { return method_ == JoinMethod::ArrayLookup ? kNoRow : next_[row]; }

 private:
  static std::int64_t int_key(const table::Column& c, std::size_t r) {
    return c.type == table::ColumnType::Int64 ? c.int64s[r] : c.int32s[r];
  }
  static std::string bytes_key(const table::Column& c, std::size_t r) {
    if (c.type == table::ColumnType::String) return c.dictionary[c.int32s[r]];
    double d = c.doubles[r] == 0 ? 0.0 : c.doubles[r];
    std::string s(sizeof d, '\0');
    std::memcpy(s.data(), &d, sizeof d);
    return s;
  }

  const table::Column& key_;
  JoinMethod method_;
  std::int64_t min_;
  std::vector<std::uint32_t> slots_, next_;
  std::unordered_map<std::int64_t, std::uint32_t> int_heads_;
  std::unordered_map<std::string, std::uint32_t> bytes_heads_;
};

// One aggregate's running state for every group.
class AggregateState {
 public:
  AggregateState(const AggregateCall& call, const SourceText& source)
      : call_(&call), source_(&source), best_(call.result_type) {}

  void add_group() {
    count_.push_back(0);
    int_sum_.push_back(0);
    double_sum_.push_back(0);
    wide_sum_.push_back(0);
    best_.push_null();
    if (call_->distinct) distinct_.emplace_back();
  }

  void update(std::uint32_t g, const ValueVector* arg, std::size_t i) {
    if (call_->function == AggregateFunction::CountStar) {
      ++count_[g];
      return;
    }
    if (arg->is_null(i)) return;
    if (call_->distinct) {
      std::string key;
      append_key_bytes(*arg, i, key);
      distinct_[g].insert(std::move(key));
      return;
    }
    ++count_[g];
    switch (call_->function) {
      case AggregateFunction::Sum:
      case AggregateFunction::Avg:
        if (arg->type == SqlType::Double) {
          double_sum_[g] += arg->doubles[i];
        } else if (call_->function == AggregateFunction::Avg) {
          wide_sum_[g] += arg->ints[i];
        } else if (__builtin_add_overflow(int_sum_[g], arg->ints[i], &int_sum_[g])) {
          source_->fail(call_->location, "bigint out of range (the integer sum overflows 64 bits)");
        }
        break;
      case AggregateFunction::Min:
      case AggregateFunction::Max:
        if (best_.is_null(g)) {
          best_.set_from(g, *arg, i);
        } else {
          int c = compare_values(*arg, i, best_, g);
          if (call_->function == AggregateFunction::Min ? c < 0 : c > 0) best_.set_from(g, *arg, i);
        }
        break;
      default: break;
    }
  }

  ValueVector finish() const {
    const std::size_t groups = count_.size();
    if (call_->function == AggregateFunction::Min || call_->function == AggregateFunction::Max) return best_;
    ValueVector out(call_->result_type);
    out.reserve(groups);
    for (std::size_t g = 0; g < groups; ++g) {
      switch (call_->function) {
        case AggregateFunction::CountStar:
        case AggregateFunction::Count:
          out.push_int(call_->distinct ? static_cast<std::int64_t>(distinct_[g].size()) : count_[g]);
          break;
        case AggregateFunction::Sum:
          if (count_[g] == 0) out.push_null();
          else if (call_->result_type == SqlType::Double) out.push_double(double_sum_[g]);
          else out.push_int(int_sum_[g]);
          break;
        case AggregateFunction::Avg:
          if (count_[g] == 0) out.push_null();
          else if (call_->argument->type == SqlType::Double) out.push_double(double_sum_[g] / static_cast<double>(count_[g]));
          else out.push_double(static_cast<double>(static_cast<long double>(wide_sum_[g]) / count_[g]));
          break;
        default: break;
      }
    }
    return out;
  }

 private:
  const AggregateCall* call_;
  const SourceText* source_;
  std::vector<std::int64_t> count_, int_sum_;
  std::vector<double> double_sum_;
  std::vector<__int128> wide_sum_;  // AVG of integers: exact, as PostgreSQL's numeric
  ValueVector best_;
  std::vector<std::unordered_set<std::string>> distinct_;
};

// The groups of every grouping set: a hash table per set from the bytes of
// its keys to a group; each group's key values (NULL where its set rolls
// the key up) and aggregate states.
struct Groups {
  std::vector<std::unordered_map<std::string, std::uint32_t>> per_set;
  std::vector<std::vector<bool>> in_set;  // [set][key]
  std::vector<std::uint32_t> set_of;
  std::vector<ValueVector> keys;
  std::vector<AggregateState> aggregates;
  std::vector<ValueVector> finals;

  std::uint32_t add(std::size_t set, const std::vector<ValueVector>& key_values, std::size_t i) {
    std::uint32_t g = static_cast<std::uint32_t>(set_of.size());
    set_of.push_back(static_cast<std::uint32_t>(set));
    for (std::size_t k = 0; k < keys.size(); ++k) {
      if (in_set[set][k]) keys[k].push_from(key_values[k], i);
      else keys[k].push_null();
    }
    for (auto& a : aggregates) a.add_group();
    return g;
  }
};

class GroupColumns : public LeafSource {
 public:
  explicit GroupColumns(const Groups& g) : g_(g) {}
  ValueVector leaf(const Expr& e, const std::vector<std::uint32_t>& positions) const override {
    if (e.kind == ExprKind::Grouping) {
      ValueVector out(SqlType::Int64);
      for (std::uint32_t p : positions) {
        std::int64_t bits = 0;
        for (int k : e.keys) bits = (bits << 1) | (g_.in_set[g_.set_of[p]][k] ? 0 : 1);
        out.push_int(bits);
      }
      return out;
    }
    const ValueVector& from = e.kind == ExprKind::GroupKey ? g_.keys[e.index] : g_.finals[e.index];
    ValueVector out(from.type);
    out.reserve(positions.size());
    for (std::uint32_t p : positions) out.push_from(from, p);
    return out;
  }

 private:
  const Groups& g_;
};

// Collects the timings of operators that run batch by batch.
struct Timer {
  std::vector<OperatorTiming>& timings;
  std::size_t index;
  Clock::time_point start = Clock::now();
  Timer(std::vector<OperatorTiming>& t, std::size_t i) : timings(t), index(i) {}
  void stop(std::uint64_t rows) {
    timings[index].seconds += seconds_since(start);
    timings[index].rows_out += rows;
  }
};

[[noreturn]] void too_many(std::uint64_t limit, const char* what) {
  throw InputError("the query's " + std::string(what) + " has more than " + std::to_string(limit) +
                   " rows, the limit (--max-rows); add a LIMIT or a narrower WHERE, or raise the limit");
}

}  // namespace

QueryResult run_cpu_serial(const LogicalQuery& q, const PhysicalPlan& plan, const SourceText& source,
                           const ExecutionLimits& limits) {
  QueryResult result;
  std::vector<OperatorTiming>& timings = result.timings;
  const std::size_t tables = q.tables.size();

  // Operators in pipeline order.
  const std::size_t t_scan = timings.size();
  timings.push_back({plan.fact_table < 0 ? "one row" : "scan " + q.tables[plan.fact_table].alias + " + filter", 0, 0});
  std::vector<DimensionIndex> indexes;
  std::vector<std::size_t> t_join;
  for (const auto& j : plan.joins) {
    Clock::time_point start = Clock::now();
    indexes.emplace_back(q.tables[j.dimension].table->columns[j.dimension_column], j);
    t_join.push_back(timings.size());
    timings.push_back({std::string("join ") + q.tables[j.dimension].alias +
                           (j.method == JoinMethod::ArrayLookup ? " (array lookup)" : " (hash)") + " + filter",
                       seconds_since(start), 0});
  }
  const std::size_t t_consume = timings.size();
  timings.push_back({q.aggregated ? "aggregate (hash, one table per grouping set)" : "project", 0, 0});

  // What the batches feed: the groups, or the output rows.
  Groups groups;
  const std::size_t key_count = q.group_keys.size();
  if (q.aggregated) {
    groups.per_set.resize(q.grouping_sets.size());
    for (const auto& set : q.grouping_sets) {
      std::vector<bool> in(key_count, false);
      for (int k : set) in[k] = true;
      groups.in_set.push_back(in);
    }
    for (const auto& k : q.group_keys) groups.keys.emplace_back(k->type);
    for (const auto& a : q.aggregates) groups.aggregates.emplace_back(a, source);
  }
  std::vector<ValueVector> outputs, order_keys;
  for (const auto& o : q.outputs) outputs.emplace_back(o.expr->type);
  for (const auto& k : q.order_by) order_keys.emplace_back(k.expr->type);
  const bool stop_early = !q.aggregated && q.order_by.empty() && q.limit.has_value();
  const std::uint64_t wanted = q.limit ? static_cast<std::uint64_t>(*q.limit) + static_cast<std::uint64_t>(q.offset) : 0;
  std::size_t output_rows = 0;

  const std::size_t fact_rows = plan.fact_table < 0 ? 1 : q.tables[plan.fact_table].table->row_count();
  std::string key_bytes;
  for (std::size_t begin = 0; begin < fact_rows; begin += kBatchRows) {
    if (stop_early && output_rows >= wanted) break;
    Timer scan(timings, t_scan);
    Batch batch;
    batch.rows.resize(tables);
    batch.size = std::min(kBatchRows, fact_rows - begin);
    if (plan.fact_table >= 0) {
      auto& rows = batch.rows[plan.fact_table];
      rows.resize(batch.size);
      for (std::size_t i = 0; i < batch.size; ++i) rows[i] = static_cast<std::uint32_t>(begin + i);
    }
    BatchColumns leaves(q, batch);
    Evaluator evaluator(leaves, &source);
    for (const auto& f : plan.scan_filters) batch.keep(evaluator.select(*f, all_positions(batch.size)));
    scan.stop(batch.size);

    for (std::size_t s = 0; s < plan.joins.size() && batch.size > 0; ++s) {
      Timer join(timings, t_join[s]);
      const JoinStep& step = plan.joins[s];
      const table::Column& probe = q.tables[step.probe_table].table->columns[step.probe_column];
      std::vector<std::uint32_t> positions, matches;
      for (std::size_t i = 0; i < batch.size; ++i) {
        for (std::uint32_t m = indexes[s].first(probe, batch.rows[step.probe_table][i]); m != kNoRow; m = indexes[s].next(m)) {
          positions.push_back(static_cast<std::uint32_t>(i));
          matches.push_back(m);
        }
      }
      batch.keep(positions);
      batch.rows[step.dimension] = std::move(matches);
      for (const auto& f : step.filters) batch.keep(evaluator.select(*f, all_positions(batch.size)));
      join.stop(batch.size);
    }
    if (batch.size == 0) continue;

    Timer consume(timings, t_consume);
    const std::vector<std::uint32_t> positions = all_positions(batch.size);
    if (q.aggregated) {
      std::vector<ValueVector> key_values, arguments;
      for (const auto& k : q.group_keys) key_values.push_back(evaluator.evaluate(*k, positions));
      for (const auto& a : q.aggregates) {
        arguments.push_back(a.argument ? evaluator.evaluate(*a.argument, positions) : ValueVector());
      }
      for (std::size_t s = 0; s < q.grouping_sets.size(); ++s) {
        auto& table = groups.per_set[s];
        for (std::size_t i = 0; i < batch.size; ++i) {
          key_bytes.clear();
          for (int k : q.grouping_sets[s]) append_key_bytes(key_values[k], i, key_bytes);
          auto [it, inserted] = table.try_emplace(key_bytes, 0);
          if (inserted) {
            if (groups.set_of.size() >= limits.max_rows) too_many(limits.max_rows, "groups");
            it->second = groups.add(s, key_values, i);
          }
          for (std::size_t a = 0; a < q.aggregates.size(); ++a) groups.aggregates[a].update(it->second, &arguments[a], i);
        }
      }
    } else {
      for (std::size_t o = 0; o < q.outputs.size(); ++o) {
        ValueVector v = evaluator.evaluate(*q.outputs[o].expr, positions);
        for (std::size_t i = 0; i < v.size(); ++i) outputs[o].push_from(v, i);
      }
      for (std::size_t o = 0; o < q.order_by.size(); ++o) {
        ValueVector v = evaluator.evaluate(*q.order_by[o].expr, positions);
        for (std::size_t i = 0; i < v.size(); ++i) order_keys[o].push_from(v, i);
      }
      output_rows += batch.size;
      if (output_rows > limits.max_rows && !stop_early) too_many(limits.max_rows, "result");
    }
    consume.stop(q.aggregated ? 0 : batch.size);
  }

  if (q.aggregated) {
    Clock::time_point start = Clock::now();
    // The empty grouping set has its one row even over no rows.
    for (std::size_t s = 0; s < q.grouping_sets.size(); ++s) {
      if (q.grouping_sets[s].empty() && groups.per_set[s].empty()) {
        std::vector<ValueVector> none(key_count);
        groups.per_set[s].emplace("", groups.add(s, none, 0));
      }
    }
    for (const auto& a : groups.aggregates) groups.finals.push_back(a.finish());
    timings[t_consume].seconds += seconds_since(start);
    timings[t_consume].rows_out = groups.set_of.size();

    GroupColumns leaves(groups);
    Evaluator evaluator(leaves, &source);
    std::vector<std::uint32_t> positions = all_positions(groups.set_of.size());
    if (q.having) {
      start = Clock::now();
      positions = evaluator.select(*q.having, positions);
      timings.push_back({"having", seconds_since(start), positions.size()});
    }
    start = Clock::now();
    for (std::size_t o = 0; o < q.outputs.size(); ++o) outputs[o] = evaluator.evaluate(*q.outputs[o].expr, positions);
    for (std::size_t o = 0; o < q.order_by.size(); ++o) order_keys[o] = evaluator.evaluate(*q.order_by[o].expr, positions);
    output_rows = positions.size();
    timings.push_back({"project", seconds_since(start), output_rows});
  }

  // ORDER BY: a stable sort of row numbers; then OFFSET and LIMIT.
  std::vector<std::uint32_t> order = all_positions(output_rows);
  if (!q.order_by.empty()) {
    Clock::time_point start = Clock::now();
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      for (std::size_t k = 0; k < q.order_by.size(); ++k) {
        const ValueVector& v = order_keys[k];
        bool an = v.is_null(a), bn = v.is_null(b);
        if (an || bn) {
          if (an && bn) continue;
          return an == q.order_by[k].nulls_first;
        }
        int c = compare_values(v, a, v, b);
        if (c != 0) return q.order_by[k].descending ? c > 0 : c < 0;
      }
      return false;
    });
    timings.push_back({"sort", seconds_since(start), output_rows});
  }
  std::size_t first = std::min<std::size_t>(static_cast<std::size_t>(q.offset), order.size());
  std::size_t last = q.limit ? std::min<std::size_t>(order.size(), first + static_cast<std::size_t>(*q.limit)) : order.size();
  if (last - first > limits.max_rows) too_many(limits.max_rows, "result");
  for (std::size_t o = 0; o < q.outputs.size(); ++o) {
    ValueVector column(outputs[o].type);
    column.reserve(last - first);
    for (std::size_t i = first; i < last; ++i) column.push_from(outputs[o], order[i]);
    result.names.push_back(q.outputs[o].name);
    result.columns.push_back(std::move(column));
  }
  result.rows = last - first;
  return result;
}

}  // namespace gpuolap::sql
