#include "sql/execution.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <utility>

#include "gpuolap/elapsed.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/huge_pages.hpp"
#include "sql/binder.hpp"
#include "sql/concatenate.hpp"

namespace gpuolap::sql::execution {

namespace {

using Clock = std::chrono::steady_clock;

ValueVector gather(const table::Column& c, const std::vector<std::uint32_t>& rows,
                   const std::vector<std::uint32_t>& positions) {
  // Written in place (no push per row): the leaves of every expression of
  // every batch come through here.
  const std::size_t n = positions.size();
  ValueVector out(column_sql_type(c.type));
  out.nulls.assign(n, 0);
  if (!c.nulls.empty()) {
    for (std::size_t i = 0; i < n; ++i) out.nulls[i] = c.nulls[rows[positions[i]]];
  }
  switch (c.type) {
    case table::ColumnType::Int64:
      out.ints.resize(n);
      for (std::size_t i = 0; i < n; ++i) out.ints[i] = c.int64s[rows[positions[i]]];
      break;
    case table::ColumnType::Double:
      out.doubles.resize(n);
      for (std::size_t i = 0; i < n; ++i) out.doubles[i] = c.doubles[rows[positions[i]]];
      break;
    case table::ColumnType::Date:
      out.ints.resize(n);
      for (std::size_t i = 0; i < n; ++i) out.ints[i] = c.int32s[rows[positions[i]]];
      break;
    case table::ColumnType::String:
      out.strings.resize(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (!out.nulls[i]) out.strings[i] = c.dictionary[c.int32s[rows[positions[i]]]];
      }
      break;
  }
  return out;
}

std::int64_t int_key(const table::Column& c, std::size_t r) {
  return c.type == table::ColumnType::Int64 ? c.int64s[r] : c.int32s[r];
}
std::string bytes_key(const table::Column& c, std::size_t r) {
  if (c.type == table::ColumnType::String) return std::string(c.dictionary[c.int32s[r]]);
  double d = c.doubles[r] == 0 ? 0.0 : c.doubles[r];
  std::string s(sizeof d, '\0');
  std::memcpy(s.data(), &d, sizeof d);
  return s;
}


}  // namespace

void too_many(std::uint64_t limit, const char* what) {
  throw InputError("the query's " + std::string(what) + " has more than " + std::to_string(limit) +
                   " rows, the limit (--max-rows); add a LIMIT or a narrower WHERE, or raise the limit");
}

void Batch::keep(const std::vector<std::uint32_t>& positions) {
  // Every row kept once, in order (a join that matched each row once, a
  // filter that kept all): nothing to copy. A hash join's repeated matches
  // can make as many positions without being this.
  if (positions.size() == size) {
    std::uint32_t i = 0;
    while (i < positions.size() && positions[i] == i) ++i;
    if (i == positions.size()) return;
  }
  for (auto& r : rows) {
    if (r.empty()) continue;
    std::vector<std::uint32_t> kept(positions.size());
    for (std::size_t i = 0; i < positions.size(); ++i) kept[i] = r[positions[i]];
    r = std::move(kept);
  }
  size = positions.size();
}

ValueVector BatchColumns::leaf(const Expr& e, const std::vector<std::uint32_t>& positions) const {
  return gather(q_.tables[e.table].table->columns[e.column], b_.rows[e.table], positions);
}

const table::Column* BatchColumns::input_column(const Expr& e, const std::vector<std::uint32_t>& positions,
                                                std::vector<std::uint32_t>& rows) const {
  if (e.kind != ExprKind::InputColumn) return nullptr;
  const table::Column& c = q_.tables[e.table].table->columns[e.column];
  const std::vector<std::uint32_t>& table_rows = b_.rows[e.table];
  rows.resize(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) rows[i] = table_rows[positions[i]];
  return &c;
}

DimensionIndex::DimensionIndex(const table::Column& key, const JoinStep& step, const std::vector<std::uint8_t>& allowed)
    : method_(step.method), min_(step.key_min) {
  const std::size_t rows = column_rows(key);
  if (method_ == JoinMethod::ArrayLookup) {
    slots_.assign(static_cast<std::size_t>(step.key_span), kNoRow);
    for (std::size_t r = 0; r < rows; ++r) {
      if (allowed.empty() || allowed[r]) slots_[static_cast<std::size_t>(int_key(key, r) - min_)] = static_cast<std::uint32_t>(r);
    }
    return;
  }
  next_.assign(rows, kNoRow);
  for (std::size_t r = rows; r-- > 0;) {  // chains in row order
    if (key.is_null(r) || (!allowed.empty() && !allowed[r])) continue;
    std::uint32_t& head = key.type == table::ColumnType::String || key.type == table::ColumnType::Double
                              ? bytes_heads_.try_emplace(bytes_key(key, r), kNoRow).first->second
                              : int_heads_.try_emplace(int_key(key, r), kNoRow).first->second;
    next_[r] = head;
    head = static_cast<std::uint32_t>(r);
  }
}


void DimensionIndex::probe_all(const table::Column& probe, const std::vector<std::uint32_t>& probe_rows,
                               std::vector<std::uint32_t>& positions, std::vector<std::uint32_t>& matches) const {
  const std::size_t n = probe_rows.size();
  positions.clear();
  matches.clear();
  positions.reserve(n);
  matches.reserve(n);
  if (method_ == JoinMethod::ArrayLookup && probe.nulls.empty() && probe.type != table::ColumnType::String &&
      probe.type != table::ColumnType::Double) {
    // The star join's common case: one load a row, no per-row dispatch.
    // Unsigned arithmetic folds "below min" into "beyond the span".
    // Every row is written and the count advanced only on a match: no
    // branch on the data, no push_back's capacity test.
    auto lookup = [&](const auto* keys) {
      positions.resize(n);
      matches.resize(n);
      std::size_t found = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t slot = static_cast<std::uint64_t>(static_cast<std::int64_t>(keys[probe_rows[i]]) - min_);
        const std::uint32_t match = slot < slots_.size() ? slots_[slot] : kNoRow;
        positions[found] = static_cast<std::uint32_t>(i);
        matches[found] = match;
        found += match != kNoRow;
      }
      positions.resize(found);
      matches.resize(found);
    };
    if (probe.type == table::ColumnType::Int64) lookup(probe.int64s.data());
    else lookup(probe.int32s.data());
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::uint32_t m = first(probe, probe_rows[i]); m != kNoRow; m = next(m)) {
      positions.push_back(static_cast<std::uint32_t>(i));
      matches.push_back(m);
    }
  }
}

std::uint32_t DimensionIndex::first(const table::Column& probe, std::uint32_t r) const {
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

AggregateState::AggregateState(const AggregateCall& call, const SourceText& source)
    : call_(&call), source_(&source), best_(call.result_type) {
  const bool sum = call.function == AggregateFunction::Sum || call.function == AggregateFunction::Avg;
  const bool double_argument = call.argument && call.argument->type == SqlType::Double;
  double_sums_ = sum && double_argument;
  wide_sums_ = sum && !double_argument;
  best_values_ = call.function == AggregateFunction::Min || call.function == AggregateFunction::Max;
}

void AggregateState::add_group() {
  count_.push_back(0);
  if (double_sums_) double_sum_.push_back(0);
  if (wide_sums_) wide_sum_.push_back(0);
  if (best_values_) best_.push_null();
  if (call_->distinct) distinct_.emplace_back();
}

void AggregateState::append_all(const std::vector<const AggregateState*>& parts,
                                std::vector<std::function<void()>>& tasks) {
  add_concatenation(tasks, count_, parts, &AggregateState::count_);
  add_concatenation(tasks, double_sum_, parts, &AggregateState::double_sum_);
  add_concatenation(tasks, wide_sum_, parts, &AggregateState::wide_sum_);
  add_concatenation(tasks, distinct_, parts, &AggregateState::distinct_);
  std::vector<const ValueVector*> best;
  for (const AggregateState* p : parts) best.push_back(&p->best_);
  best_.append_all(best, tasks);
}

void AggregateState::update(std::uint32_t g, const ValueVector* arg, std::size_t i) {
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
      if (double_sums_) double_sum_[g] += arg->doubles[i];
      else wide_sum_[g] += arg->ints[i];
      break;
    case AggregateFunction::Min:
    case AggregateFunction::Max:
      if (best_.is_null(g)) {
        best_.set_from(g, *arg, i);
      } else {
        int c = compare_extremes(*arg, i, best_, g);
        if (call_->function == AggregateFunction::Min ? c < 0 : c > 0) best_.set_from(g, *arg, i);
      }
      break;
    default: break;
  }
}

void AggregateState::update_rows(const std::vector<std::uint32_t>& groups, const ValueVector* arg) {
  const std::size_t n = groups.size();
  // The common aggregates in one loop each, without the per-row dispatch;
  // the sums add the rows in the same order as update() would.
  if (call_->function == AggregateFunction::CountStar) {
    for (std::size_t i = 0; i < n; ++i) ++count_[groups[i]];
    return;
  }
  // Each loop keeps a run of rows of one group in registers (an aggregate
  // without GROUP BY, sorted input, a skewed key), adding in row order.
  const bool sum = call_->function == AggregateFunction::Sum || call_->function == AggregateFunction::Avg;
  if (sum && !call_->distinct && double_sums_) {
    for (std::size_t i = 0; i < n;) {
      const std::uint32_t g = groups[i];
      std::int64_t count = count_[g];
      double total = double_sum_[g];
      for (; i < n && groups[i] == g; ++i) {
        if (arg->nulls[i]) continue;
        ++count;
        total += arg->doubles[i];
      }
      count_[g] = count;
      double_sum_[g] = total;
    }
    return;
  }
  if (sum && !call_->distinct && wide_sums_) {  // of integers: exact in 128 bits, the range checked at the end
    for (std::size_t i = 0; i < n;) {
      const std::uint32_t g = groups[i];
      std::int64_t count = count_[g];
      __int128 total = wide_sum_[g];
      for (; i < n && groups[i] == g; ++i) {
        if (arg->nulls[i]) continue;
        ++count;
        total += arg->ints[i];
      }
      count_[g] = count;
      wide_sum_[g] = total;
    }
    return;
  }
  if (!call_->distinct && call_->function == AggregateFunction::Count) {
    for (std::size_t i = 0; i < n;) {
      const std::uint32_t g = groups[i];
      std::int64_t count = count_[g];
      for (; i < n && groups[i] == g; ++i) count += arg->nulls[i] == 0;
      count_[g] = count;
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) update(groups[i], arg, i);
}

template <class Shown>
ValueVector AggregateState::finish(const Shown& shown) const {
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
        if (count_[g] == 0 || !shown(g)) {
          out.push_null();
        } else if (call_->result_type == SqlType::Double) {
          out.push_double(double_sum_[g]);
        } else {
          if (wide_sum_[g] > std::numeric_limits<std::int64_t>::max() || wide_sum_[g] < std::numeric_limits<std::int64_t>::min())
            source_->fail(call_->location, "bigint out of range (the integer sum leaves 64 bits)");
          out.push_int(static_cast<std::int64_t>(wide_sum_[g]));
        }
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

void AggregateState::merge(std::uint32_t g, const AggregateState& other, std::uint32_t og) {
  count_[g] += other.count_[og];
  if (double_sums_) double_sum_[g] += other.double_sum_[og];
  if (wide_sums_) wide_sum_[g] += other.wide_sum_[og];
  if (best_values_ && !other.best_.is_null(og)) {
    int c = best_.is_null(g) ? 0 : compare_extremes(other.best_, og, best_, g);
    if (best_.is_null(g) || (call_->function == AggregateFunction::Min ? c < 0 : c > 0)) best_.set_from(g, other.best_, og);
  }
  if (call_->distinct) distinct_[g].insert(other.distinct_[og].begin(), other.distinct_[og].end());
}

void PipelineTimes::add(const PipelineTimes& other) {
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    seconds[i] += other.seconds[i];
    rows_out[i] += other.rows_out[i];
  }
}

JoinedRows::JoinedRows(const LogicalQuery& q, const PhysicalPlan& plan, const SourceText& source)
    : q_(q), plan_(plan), source_(source) {
  Clock::time_point start = Clock::now();
  for (const auto& j : plan.joins) {
    std::vector<std::uint8_t> allowed;
    if (!j.dimension_filters.empty()) {
      // The dimension's own filters, over all its rows at once.
      Batch all;
      all.rows.resize(q.tables.size());
      all.size = q.tables[j.dimension].table->row_count();
      all.rows[j.dimension] = all_positions(all.size);
      BatchColumns leaves(q, all);
      Evaluator evaluator(leaves, &source);
      std::vector<std::uint32_t> kept = all_positions(all.size);
      for (const auto& f : j.dimension_filters) kept = evaluator.select(*f, kept);
      allowed.assign(all.size, 0);
      for (std::uint32_t r : kept) allowed[r] = 1;
    }
    indexes_.emplace_back(q.tables[j.dimension].table->columns[j.dimension_column], j, allowed);
    // A leading array-lookup join whose dimension keeps at most 1/16 of
    // its rows runs before the scan's filters (a hash join's probe costs
    // more than a comparison, so it keeps its place): SSB Q1.2's date
    // keeps 31 of 2,557 days, and the scan compared the discount and
    // quantity of every row first (1.6-1.7 x DuckDB at SF 10, 16 cores).
    const std::size_t dimension_rows = q.tables[j.dimension].table->row_count();
    const std::size_t kept = static_cast<std::size_t>(std::count(allowed.begin(), allowed.end(), std::uint8_t{1}));
    if (early_joins_ + 1 == indexes_.size() && j.method == JoinMethod::ArrayLookup && !plan.scan_filters.empty() &&
        !allowed.empty() && kept * kSelectiveJoin <= dimension_rows) {
      ++early_joins_;
      index_label_ += (early_joins_ == 1 ? "; looked up before the scan's filters: " : ", ") +
                      q.tables[j.dimension].alias + " (" + std::to_string(kept) + " of " +
                      std::to_string(dimension_rows) + " rows kept)";
    }
  }
  index_seconds_ = seconds_since(start);
  fact_rows_ = plan.fact_table < 0 ? 1 : q.tables[plan.fact_table].table->row_count();
}

PipelineTimes JoinedRows::empty_times() const {
  PipelineTimes t;
  t.seconds.assign(plan_.joins.size() + 1, 0);
  t.rows_out.assign(plan_.joins.size() + 1, 0);
  return t;
}

std::vector<std::string> JoinedRows::operator_names() const {
  std::vector<std::string> names{plan_.fact_table < 0 ? "one row" : "scan " + q_.tables[plan_.fact_table].alias + " + filter"};
  for (std::size_t s = 0; s < plan_.joins.size(); ++s) {
    const JoinStep& j = plan_.joins[s];
    names.push_back("join " + q_.tables[j.dimension].alias +
                    (j.method == JoinMethod::ArrayLookup ? " (array lookup)" : " (hash)") + " + filter" +
                    (s < early_joins_ ? ", before the scan's filters" : ""));
  }
  return names;
}

Batch JoinedRows::rows(std::size_t begin, std::size_t end, PipelineTimes& times) const {
  Clock::time_point start = Clock::now();
  Batch batch;
  batch.rows.resize(q_.tables.size());
  batch.size = end - begin;
  if (plan_.fact_table >= 0) {
    auto& rows = batch.rows[plan_.fact_table];
    rows.resize(batch.size);
    for (std::size_t i = 0; i < batch.size; ++i) rows[i] = static_cast<std::uint32_t>(begin + i);
  }
  BatchColumns leaves(q_, batch);
  Evaluator evaluator(leaves, &source_);
  auto join = [&](std::size_t s) {
    const Clock::time_point join_start = Clock::now();
    const JoinStep& step = plan_.joins[s];
    const table::Column& probe = q_.tables[step.probe_table].table->columns[step.probe_column];
    std::vector<std::uint32_t> positions, matches;
    indexes_[s].probe_all(probe, batch.rows[step.probe_table], positions, matches);
    batch.keep(positions);
    batch.rows[step.dimension] = std::move(matches);
    for (const auto& f : step.filters) batch.keep(evaluator.select(*f, all_positions(batch.size)));
    times.seconds[s + 1] += seconds_since(join_start);
    times.rows_out[s + 1] += batch.size;
  };
  // The joins that drop most rows first (a lookup costs about what one
  // comparison does), then the scan's filters over what they left, then
  // the other joins.
  for (std::size_t s = 0; s < early_joins_ && batch.size > 0; ++s) join(s);
  start = Clock::now();
  if (batch.size > 0) {
    for (const auto& f : plan_.scan_filters) batch.keep(evaluator.select(*f, all_positions(batch.size)));
  }
  times.seconds[0] += seconds_since(start);
  times.rows_out[0] += batch.size;
  for (std::size_t s = early_joins_; s < plan_.joins.size() && batch.size > 0; ++s) join(s);
  return batch;
}

// How many lookups ahead of the current one a loop over ids prefetches.
constexpr std::size_t kPrefetchAhead = 16;

Groups::Groups(const LogicalQuery& query, const SourceText& src, std::vector<std::vector<int>> grouping_sets,
               std::size_t visible, std::uint64_t most_groups)
    : q(query), source(src), sets(std::move(grouping_sets)), visible_sets(visible), max_groups(most_groups) {
  per_set.resize(sets.size());
  for (const auto& set : sets) {
    std::vector<bool> in(q.group_keys.size(), false);
    for (int k : set) in[k] = true;
    in_set.push_back(in);
  }
  for (const auto& k : q.group_keys) keys.emplace_back(k->type);
  for (const auto& a : q.aggregates) aggregates.emplace_back(a, source);
}

std::uint32_t Groups::find_or_add(std::size_t set, const std::string& key_bytes, const std::vector<ValueVector>& key_values,
                                  std::size_t row) {
  auto [it, inserted] = per_set[set].try_emplace(key_bytes, 0);
  if (inserted) it->second = add(set, key_values, row);
  return it->second;
}

std::uint32_t Groups::add(std::size_t set, const std::vector<ValueVector>& key_values, std::size_t row) {
  if (set_of.size() >= max_groups) too_many(max_groups, "groups");
  set_of.push_back(static_cast<std::uint32_t>(set));
  for (std::size_t k = 0; k < keys.size(); ++k) {
    if (in_set[set][k]) keys[k].push_from(key_values[k], row);
    else keys[k].push_null();
  }
  for (auto& a : aggregates) a.add_group();
  return static_cast<std::uint32_t>(set_of.size() - 1);
}

void Groups::use_perfect_hashes(const std::vector<PerfectHash>& hashes) {
  perfect = hashes;
  perfect_groups.resize(perfect.size());
  hashed_groups.resize(perfect.size());
  for (std::size_t s = 0; s < perfect.size(); ++s) {
    if (!perfect[s].hashed) perfect_groups[s].assign(perfect[s].slots, kNoRow);
  }
}

std::uint32_t& Groups::group_of_id(std::size_t set, std::uint64_t id) {
  // unordered_map's references stay valid as it grows.
  static_assert(IdTable::kAbsent == kNoRow);
  return perfect[set].hashed ? hashed_groups[set][id] : perfect_groups[set][id];
}

std::uint32_t Groups::add_with_id(std::size_t set, const std::vector<ValueVector>& key_values, std::size_t row,
                                  std::uint64_t id) {
  const std::uint32_t g = add(set, key_values, row);
  perfect_id.resize(set_of.size(), kNoId);
  perfect_id[g] = id;
  return g;
}

void Groups::consume(const Batch& batch, const Evaluator& rows, const std::vector<std::size_t>& fed) {
  const std::size_t count = batch.size;
  const std::vector<std::uint32_t> positions = all_positions(count);
  std::vector<ValueVector> key_values, arguments;
  // Sets with a perfect hash read the key columns' codes; their key values
  // are needed only for a row that starts a group.
  const bool all_perfect = std::all_of(fed.begin(), fed.end(), [&](std::size_t s) {
    return s < perfect.size() && perfect[s].slots > 0;
  });
  if (!all_perfect) {
    for (const auto& k : q.group_keys) key_values.push_back(rows.evaluate(*k, positions));
  }
  for (const auto& a : q.aggregates) arguments.push_back(a.argument ? rows.evaluate(*a.argument, positions) : ValueVector());
  std::string key_bytes;
  std::vector<std::uint64_t> slots;
  std::vector<std::uint32_t> group_of_row;
  for (std::size_t s : fed) {
    if (s < perfect.size() && perfect[s].slots > 0) {
      slots.assign(count, 0);
      for (const auto& key : perfect[s].keys) {
        const table::Column& c = q.tables[key.table].table->columns[key.column];
        const std::uint32_t* table_rows = batch.rows[key.table].data();
        // The column's type and whether it has NULLs decided once a batch,
        // not once a row: this loop and the next are the whole scan.
        auto add_ids = [&](auto code_of, auto nullable) {
          for (std::size_t i = 0; i < count; ++i) {
            const std::uint32_t r = table_rows[i];
            if (nullable && c.nulls[r]) continue;  // NULL: value 0
            slots[i] += static_cast<std::uint64_t>(code_of(r) + 1) * key.stride;
          }
        };
        auto by_type = [&](auto nullable) {
          switch (c.type) {
            case table::ColumnType::Int64: return add_ids([&](std::uint32_t r) { return c.int64s[r] - key.min; }, nullable);
            case table::ColumnType::Date:
              return add_ids([&](std::uint32_t r) { return std::int64_t{c.int32s[r]} - key.min; }, nullable);
            default: return add_ids([&](std::uint32_t r) { return std::int64_t{c.int32s[r]}; }, nullable);
          }
        };
        if (c.nulls.empty()) by_type(std::false_type{});
        else by_type(std::true_type{});
      }
      group_of_row.resize(count);
      auto new_group = [&](std::size_t i) {
        // A new group needs its key values: the batch's keys are evaluated
        // once, at its first new group (a batch of known groups needs none;
        // evaluating one row at a time cost more than the whole scan when
        // a batch brings many new groups).
        if (key_values.empty()) {
          for (const auto& k : q.group_keys) key_values.push_back(rows.evaluate(*k, positions));
        }
        return add_with_id(s, key_values, i, slots[i]);
      };
      if (!perfect[s].hashed) {
        std::uint32_t* group_at = perfect_groups[s].data();  // sized once, by use_perfect_hashes
        for (std::size_t i = 0; i < count; ++i) {
          std::uint32_t g = group_at[slots[i]];
          if (g == kNoRow) g = group_at[slots[i]] = new_group(i);
          group_of_row[i] = g;
        }
      } else {
        for (std::size_t i = 0; i < count; ++i) {
          if (i + kPrefetchAhead < count) hashed_groups[s].prefetch(slots[i + kPrefetchAhead]);
          std::uint32_t& g = hashed_groups[s][slots[i]];  // (valid until the table's next call)
          if (g == kNoRow) g = new_group(i);
          group_of_row[i] = g;
        }
      }
      for (std::size_t a = 0; a < aggregates.size(); ++a) aggregates[a].update_rows(group_of_row, &arguments[a]);
      continue;
    }
    group_of_row.resize(count);
    if (sets[s].empty() && !ordered && count > 0) {
      // The empty grouping set (an aggregate without GROUP BY): one group.
      key_bytes.clear();
      std::fill(group_of_row.begin(), group_of_row.end(), find_or_add(s, key_bytes, key_values, 0));
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        std::uint32_t g;
        if (!ordered) {
          key_bytes.clear();
          for (int k : sets[s]) append_key_bytes(key_values[k], i, key_bytes);
          g = find_or_add(s, key_bytes, key_values, i);
        } else {
          // Sorted rows: the row's group is the last one if it has the
          // last group's keys (compared as values, no key bytes built).
          const std::uint32_t last = static_cast<std::uint32_t>(set_of.size() - 1);
          const bool same = !set_of.empty() && std::all_of(sets[s].begin(), sets[s].end(), [&](int k) {
            return same_group_value(key_values[k], i, keys[k], last);
          });
          g = same ? last : add(s, key_values, i);
        }
        group_of_row[i] = g;
      }
    }
    for (std::size_t a = 0; a < aggregates.size(); ++a) aggregates[a].update_rows(group_of_row, &arguments[a]);
  }
}

std::vector<std::uint8_t> Groups::parts_of_groups(std::size_t parts) const {
  std::vector<std::uint8_t> part_of(set_of.size());
  std::string key_bytes;
  for (std::uint32_t g = 0; g < set_of.size(); ++g) {
    const std::size_t s = set_of[g];
    std::uint64_t h;
    if (g < perfect_id.size() && perfect_id[g] != kNoId) {
      h = perfect_id[g];
    } else {
      key_bytes.clear();
      for (int k : sets[s]) append_key_bytes(keys[k], g, key_bytes);
      h = std::hash<std::string>()(key_bytes);
    }
    h = (h ^ (s * 0x9E3779B97F4A7C15ull)) * 0xBF58476D1CE4E5B9ull;  // mix, so that parts are even
    part_of[g] = static_cast<std::uint8_t>((h >> 32) % parts);
  }
  return part_of;
}

void Groups::merge_from(const Groups& other, const std::vector<std::uint8_t>* part_of, std::uint8_t part) {
  std::string key_bytes;
  for (std::uint32_t og = 0; og < other.set_of.size(); ++og) {
    if (const std::uint32_t ahead = og + kPrefetchAhead; ahead < other.perfect_id.size()) {
      const std::size_t s = other.set_of[ahead];
      if (other.perfect_id[ahead] != kNoId && s < perfect.size() && perfect[s].hashed)
        hashed_groups[s].prefetch(other.perfect_id[ahead]);
    }
    if (part_of && (*part_of)[og] != part) continue;
    const std::size_t s = other.set_of[og];
    std::uint32_t g;
    const std::uint64_t id = og < other.perfect_id.size() ? other.perfect_id[og] : kNoId;
    if (id != kNoId && s < perfect.size() && perfect[s].slots > 0) {
      std::uint32_t& slot = group_of_id(s, id);
      if (slot == kNoRow) slot = add_with_id(s, other.keys, og, id);
      g = slot;
    } else {
      key_bytes.clear();
      for (int k : sets[s]) append_key_bytes(other.keys[k], og, key_bytes);
      g = find_or_add(s, key_bytes, other.keys, og);
    }
    for (std::size_t a = 0; a < aggregates.size(); ++a) aggregates[a].merge(g, other.aggregates[a], og);
  }
}

void Groups::append_all(const std::vector<const Groups*>& parts, bool finished, bool parallel) {
  std::size_t total = set_of.size();
  bool ids = !perfect_id.empty();
  for (const Groups* p : parts) {
    total += p->set_of.size();
    ids = ids || !p->perfect_id.empty();
  }
  if (total > max_groups) too_many(max_groups, "groups");
  Tasks tasks;
  if (ids) {
    // A Groups' ids stop at its last group that has one: padded with kNoId.
    // This one's count is read here: set_of grows in a task beside this one.
    const std::size_t before = set_of.size();
    tasks.push_back([this, &parts, total, before] {
      perfect_id.resize(before, kNoId);
      perfect_id.reserve(total);
      for (const Groups* p : parts) {
        perfect_id.insert(perfect_id.end(), p->perfect_id.begin(), p->perfect_id.end());
        perfect_id.resize(perfect_id.size() + p->set_of.size() - p->perfect_id.size(), kNoId);
      }
    });
  }
  add_concatenation(tasks, set_of, parts, &Groups::set_of);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::vector<const ValueVector*> columns;
    for (const Groups* p : parts) columns.push_back(&p->keys[k]);
    keys[k].append_all(columns, tasks);
  }
  if (finished) {
    for (const Groups* p : parts)
      if (p->finals.size() != aggregates.size()) throw std::logic_error("Groups::append_all: a part is not finished");
    // Sized before the tasks take references to its elements.
    finals.clear();
    for (const auto& call : q.aggregates) finals.emplace_back(call.result_type);
  }
  for (std::size_t a = 0; a < aggregates.size(); ++a) {
    if (finished) {
      std::vector<const ValueVector*> columns;
      for (const Groups* p : parts) columns.push_back(&p->finals[a]);
      finals[a].append_all(columns, tasks);  // finals is sized above: its elements stay put
    } else {
      std::vector<const AggregateState*> states;
      for (const Groups* p : parts) states.push_back(&p->aggregates[a]);
      aggregates[a].append_all(states, tasks);
    }
  }
  if (parallel) {
    tbb::parallel_for(std::size_t{0}, tasks.size(), [&](std::size_t t) { tasks[t](); });
  } else {
    for (auto& task : tasks) task();
  }
}

std::vector<std::string> Groups::derive(std::vector<std::size_t> computed, bool parallel) {
  std::vector<std::string> lines;
  std::vector<std::size_t> group_count(sets.size(), 0);
  for (std::uint32_t s : set_of) ++group_count[s];
  const auto is_computed = [&](std::size_t s) { return std::find(computed.begin(), computed.end(), s) != computed.end(); };
  const auto contains = [&](std::size_t c, std::size_t s) {
    return std::all_of(sets[s].begin(), sets[s].end(), [&](int k) { return in_set[c][k]; });
  };
  // In waves: a set is derived once every set that could be its parent (a
  // larger set containing it, or an equal one listed before it) has been,
  // from the computed parent with the fewest groups; the sets of a wave are
  // derived at once, each into Groups of its own, then appended. ROLLUP x
  // ROLLUP's two sets under the finest are one wave: two passes over its
  // groups side by side instead of one after the other.
  for (;;) {
    std::vector<std::size_t> ready, parents;
    for (std::size_t s = 0; s < sets.size(); ++s) {
      if (is_computed(s)) continue;
      bool waits = false;
      for (std::size_t c = 0; c < sets.size() && !waits; ++c) {
        const bool could_parent = c != s && contains(c, s) &&
                                  (sets[c].size() > sets[s].size() || (sets[c].size() == sets[s].size() && c < s));
        waits = could_parent && !is_computed(c);
      }
      if (waits) continue;
      std::size_t parent = sets.size();
      for (std::size_t c : computed) {
        if (contains(c, s) && (parent == sets.size() || group_count[c] < group_count[parent])) parent = c;
      }
      if (parent == sets.size()) throw std::logic_error("Groups::derive: a set with no computed set containing it");
      ready.push_back(s);
      parents.push_back(parent);
    }
    if (ready.empty()) break;
    std::vector<std::unique_ptr<Groups>> derived(ready.size());
    const auto derive_one = [&](std::size_t i) {
      auto into = std::make_unique<Groups>(q, source, sets, visible_sets, max_groups);
      // Only the derived set's lookup: an array of every set's slots per wave would cost more than it saves.
      const std::size_t s = ready[i];
      into->perfect = perfect;
      into->perfect_groups.resize(perfect.size());
      into->hashed_groups.resize(perfect.size());
      if (s < perfect.size() && perfect[s].slots > 0 && !perfect[s].hashed) into->perfect_groups[s].assign(perfect[s].slots, kNoRow);
      derive_into(s, parents[i], *into);
      derived[i] = std::move(into);
    };
    if (parallel) {
      tbb::parallel_for(std::size_t{0}, ready.size(), derive_one);
    } else {
      for (std::size_t i = 0; i < ready.size(); ++i) derive_one(i);
    }
    std::vector<const Groups*> parts;
    for (const auto& d : derived) parts.push_back(d.get());
    append_all(parts, /*finished=*/false, parallel);
    for (std::size_t i = 0; i < ready.size(); ++i) {
      const std::size_t s = ready[i];
      group_count[s] = derived[i]->set_of.size();
      lines.push_back("set " + std::to_string(s + 1) + " (" + std::to_string(group_count[s]) + " groups) from set " +
                      std::to_string(parents[i] + 1) + " (" + std::to_string(group_count[parents[i]]) + " groups)");
      computed.push_back(s);
    }
  }
  return lines;
}

void Groups::derive_into(std::size_t s, std::size_t parent, Groups& into) const {
  std::string key_bytes;
  // Where both sets have perfect-hash ids, the child's id is the parent's
  // digits of the child's keys, re-weighted: no key bytes, no string hash.
  const bool by_ids =
      s < perfect.size() && parent < perfect.size() && perfect[s].slots > 0 && perfect[parent].slots > 0;
  std::vector<const PerfectHash::Key*> parent_key_of;  // per key of s: the same key in the parent's hash
  for (std::size_t j = 0; by_ids && j < sets[s].size(); ++j) {
    const auto at = std::find(sets[parent].begin(), sets[parent].end(), sets[s][j]) - sets[parent].begin();
    parent_key_of.push_back(&perfect[parent].keys[static_cast<std::size_t>(at)]);
  }
  for (std::uint32_t pg = 0; pg < set_of.size(); ++pg) {
    if (set_of[pg] != parent) continue;
    std::uint32_t g;
    const std::uint64_t parent_id = by_ids && pg < perfect_id.size() ? perfect_id[pg] : kNoId;
    if (parent_id != kNoId) {
      std::uint64_t id = 0;
      for (std::size_t j = 0; j < sets[s].size(); ++j) {
        const PerfectHash::Key& from = *parent_key_of[j];
        id += (parent_id / from.stride) % from.radix * perfect[s].keys[j].stride;
      }
      std::uint32_t& slot = into.group_of_id(s, id);
      if (slot == kNoRow) slot = into.add_with_id(s, keys, pg, id);
      g = slot;
    } else {
      key_bytes.clear();
      for (int k : sets[s]) append_key_bytes(keys[k], pg, key_bytes);
      g = into.find_or_add(s, key_bytes, keys, pg);
    }
    for (std::size_t a = 0; a < aggregates.size(); ++a) into.aggregates[a].merge(g, aggregates[a], pg);
  }
}

void Groups::finish() {
  // The empty grouping set has its one row even over no rows (its group
  // may have been appended from a derivation: set_of, not per_set, says).
  std::vector<bool> has_group(sets.size(), false);
  for (std::uint32_t s : set_of) has_group[s] = true;
  for (std::size_t s = 0; s < visible_sets; ++s) {
    if (sets[s].empty() && !has_group[s]) find_or_add(s, "", std::vector<ValueVector>(keys.size()), 0);
  }
  finals.clear();
  const auto shown = [&](std::size_t g) { return set_of[g] < visible_sets; };
  for (const auto& a : aggregates) finals.push_back(a.finish(shown));
}

std::vector<std::uint32_t> Groups::visible_groups() const {
  std::vector<std::uint32_t> out;
  if (visible_sets >= sets.size()) {  // every group (15 M of them in one set took a serial pass)
    resize_on_huge_pages(out, set_of.size());
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, out.size(), 1 << 16), [&](const auto& r) {
      for (std::size_t g = r.begin(); g < r.end(); ++g) out[g] = static_cast<std::uint32_t>(g);
    });
    return out;
  }
  out.reserve(set_of.size());
  for (std::uint32_t g = 0; g < set_of.size(); ++g) {
    if (set_of[g] < visible_sets) out.push_back(g);
  }
  return out;
}

namespace {

class GroupColumns : public LeafSource {
 public:
  explicit GroupColumns(Groups& g) : g_(g) {}
  // Columns of the groups that a read hands over instead of copying: each
  // is read once, for every group in order (see finish_groups).
  void hand_over(const std::set<std::pair<ExprKind, int>>& columns) {
    for (const auto& c : columns) state_[c] = State::HandedOver;
  }
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
    ValueVector& from = e.kind == ExprKind::GroupKey ? g_.keys[e.index] : g_.finals[e.index];
    const auto at = state_.find({e.kind, e.index});
    if (at != state_.end() && at->second == State::Moved)
      throw std::logic_error("a column of the groups was read after it was handed over");
    if (at != state_.end() && positions.size() == from.size()) {
      at->second = State::Moved;
      return std::move(from);
    }
    return gather_rows(from, positions);
  }

 private:
  enum class State : std::uint8_t { HandedOver, Moved };
  Groups& g_;
  mutable std::map<std::pair<ExprKind, int>, State> state_;
};

// How often each column of the groups (a GROUP BY key or an aggregate) is
// read by `e`.
void count_group_reads(const Expr& e, std::map<std::pair<ExprKind, int>, int>& reads) {
  if (e.kind == ExprKind::GroupKey || e.kind == ExprKind::Aggregate) ++reads[{e.kind, e.index}];
  for (const ExprPtr& c : e.children) count_group_reads(*c, reads);
}

}  // namespace

std::vector<std::string> finish_plan_lines(const LogicalQuery& q) {
  std::vector<std::string> lines;
  if (q.having) lines.push_back("having");
  if (!q.order_by.empty()) lines.push_back("sort");
  if (q.limit || q.offset) lines.push_back("limit");
  return lines;
}

QueryResult finish_groups(const LogicalQuery& q, Groups&& groups, const SourceText& source, std::uint64_t max_rows,
                          std::vector<OperatorTiming> timings) {
  GroupColumns leaves(groups);
  Evaluator evaluator(leaves, &source);
  std::vector<std::uint32_t> positions = groups.visible_groups();
  if (q.having) {
    Clock::time_point start = Clock::now();
    positions = evaluator.select(*q.having, positions);
    timings.push_back({"having", seconds_since(start), positions.size()});
  } else if (positions.size() == groups.set_of.size()) {
    // Every group, in order: a column that the select list and ORDER BY
    // read once is handed over, not copied (15 M groups' keys and sums
    // copied were the largest part of a GROUP BY answered on the GPU).
    std::map<std::pair<ExprKind, int>, int> reads;
    for (const auto& o : q.outputs) count_group_reads(*o.expr, reads);
    for (const auto& k : q.order_by) count_group_reads(*k.expr, reads);
    std::set<std::pair<ExprKind, int>> once;
    for (const auto& [column, n] : reads)
      if (n == 1) once.insert(column);
    leaves.hand_over(once);
  }
  Clock::time_point start = Clock::now();
  std::vector<ValueVector> outputs, order_keys;
  for (const auto& o : q.outputs) outputs.push_back(evaluator.evaluate(*o.expr, positions));
  for (const auto& k : q.order_by) order_keys.push_back(evaluator.evaluate(*k.expr, positions));
  timings.push_back({"project", seconds_since(start), positions.size()});
  return finish_rows(q, std::move(outputs), std::move(order_keys), positions.size(), max_rows, std::move(timings));
}

QueryResult finish_rows(const LogicalQuery& q, std::vector<ValueVector> outputs, std::vector<ValueVector> order_keys,
                        std::size_t rows, std::uint64_t max_rows, std::vector<OperatorTiming> timings) {
  // ORDER BY: a stable sort of row numbers; then OFFSET and LIMIT.
  std::vector<std::uint32_t> order;
  if (!q.order_by.empty()) {
    order = all_positions(rows);
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
    timings.push_back({"sort", seconds_since(start), rows});
  }
  std::size_t first = std::min<std::size_t>(static_cast<std::size_t>(q.offset), rows);
  std::size_t last = q.limit ? std::min<std::size_t>(rows, first + static_cast<std::size_t>(*q.limit)) : rows;
  if (last - first > max_rows) too_many(max_rows, "result");
  QueryResult result;
  // Rows in their order, all of them: the columns are the result as they
  // are (a copy of 15 M groups' columns was a serial pass of its own).
  const bool as_they_are = q.order_by.empty() && first == 0 && last == rows;
  for (std::size_t o = 0; o < q.outputs.size(); ++o) {
    result.names.push_back(q.outputs[o].name);
    if (as_they_are && outputs[o].size() == rows) {
      result.columns.push_back(std::move(outputs[o]));
      continue;
    }
    ValueVector column(outputs[o].type);
    column.reserve(last - first);
    for (std::size_t i = first; i < last; ++i) column.push_from(outputs[o], order.empty() ? i : order[i]);
    result.columns.push_back(std::move(column));
  }
  result.rows = last - first;
  result.timings = std::move(timings);
  return result;
}

}  // namespace gpuolap::sql::execution
