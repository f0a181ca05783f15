#include "sql/cpu_parallel.hpp"

#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <chrono>
#include <memory>

#include "gpuolap/elapsed.hpp"
#include "sql/execution.hpp"

namespace gpuolap::sql {

using namespace execution;

namespace {
using Clock = std::chrono::steady_clock;
// Above this many groups in the thread-local tables together, they are
// merged in parallel parts: a serial merge of T tables of G groups each costs
// T x G hash operations on one core.
constexpr std::size_t kParallelMergeGroups = std::size_t{1} << 16;

// Whether rows a and b of a column hold the same grouping value: NULLs are
// one group, as are -0.0 and 0.0, and every NaN (as append_key_bytes).
bool same_value(const table::Column& c, std::size_t a, std::size_t b) {
  const bool null_a = c.is_null(a), null_b = c.is_null(b);
  if (null_a || null_b) return null_a == null_b;
  switch (c.type) {
    case table::ColumnType::Int64: return c.int64s[a] == c.int64s[b];
    case table::ColumnType::Double: {
      const double x = c.doubles[a], y = c.doubles[b];
      return x == y || (x != x && y != y);
    }
    default: return c.int32s[a] == c.int32s[b];  // dates, and strings by their codes
  }
}

// The first row at or after `from` (> 0) whose keys differ from row
// from - 1's, or `rows`. The table is sorted on the keys, so the rows equal
// to from - 1 are contiguous: a gallop, then a binary search, so that a
// long group costs a logarithm of its length.
std::size_t next_group_start(const std::vector<const table::Column*>& keys, std::size_t from, std::size_t rows) {
  const std::size_t anchor = from - 1;
  const auto same = [&](std::size_t r) {
    return std::all_of(keys.begin(), keys.end(), [&](const table::Column* c) { return same_value(*c, anchor, r); });
  };
  std::size_t lo = from, hi = from, step = 1;  // rows [from, lo) equal the anchor
  while (hi < rows && same(hi)) {
    lo = hi + 1;
    hi = from + step;
    step *= 2;
  }
  hi = std::min(hi, rows);
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (same(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The ordered path's partition plan (the cube-creation paper's
// defParallelPlan): the fact rows, stored sorted on the grouping keys, cut
// into `ranges` contiguous ranges, each cut moved forward to where the keys
// change, so that no group spans two ranges (a group longer than a range
// leaves the next ranges empty). Returns ranges + 1 cuts.
std::vector<std::size_t> cuts_at_group_starts(const LogicalQuery& q, const PhysicalPlan& plan, std::size_t rows,
                                              std::size_t ranges) {
  std::vector<const table::Column*> keys;
  for (int k : q.grouping_sets[0]) {
    const Expr& key = *q.group_keys[k];  // a column of the fact table (the planner's condition for Ordered)
    keys.push_back(&q.tables[plan.fact_table].table->columns[key.column]);
  }
  std::vector<std::size_t> cuts{0};
  for (std::size_t r = 1; r < ranges; ++r) {
    const std::size_t even = rows / ranges * r + std::min(r, rows % ranges);
    cuts.push_back(even <= cuts.back() ? cuts.back() : next_group_start(keys, even, rows));
  }
  cuts.push_back(rows);
  return cuts;
}
}  // namespace

QueryResult run_cpu_parallel(const LogicalQuery& q, const PhysicalPlan& plan, const SourceText& source,
                             const ExecutionLimits& limits) {
  const JoinedRows joined(q, plan, source);
  const std::size_t batches = (joined.fact_rows() + kBatchRows - 1) / kBatchRows;
  const int threads = tbb::this_task_arena::max_concurrency();
  std::vector<OperatorTiming> timings;
  timings.push_back({joined.index_label(), joined.index_seconds(), 0});
  Clock::time_point start = Clock::now();

  if (q.aggregated && plan.aggregation == AggregationMethod::Ordered) {
    // One set, its groups in key order: each range's groups in order, the
    // ranges appended in order. More ranges than threads balance ranges
    // that filters thin unevenly.
    const std::size_t ranges =
        std::max<std::size_t>(1, std::min<std::size_t>(4 * static_cast<std::size_t>(threads), joined.fact_rows() / kBatchRows));
    const std::vector<std::size_t> cuts = cuts_at_group_starts(q, plan, joined.fact_rows(), ranges);
    std::vector<std::unique_ptr<Groups>> range_groups(ranges);
    tbb::parallel_for(std::size_t{0}, ranges, [&](std::size_t r) {
      auto groups = std::make_unique<Groups>(q, source, plan.aggregated_sets, q.grouping_sets.size(), limits.max_rows);
      groups->ordered = true;
      PipelineTimes times = joined.empty_times();
      for (std::size_t begin = cuts[r]; begin < cuts[r + 1]; begin += kBatchRows) {
        Batch batch = joined.rows(begin, std::min(cuts[r + 1], begin + kBatchRows), times);
        if (batch.size == 0) continue;
        BatchColumns leaves(q, batch);
        Evaluator evaluator(leaves, &source);
        groups->consume(batch, evaluator, plan.fed_sets);
      }
      groups->finish();  // each range's finals, in parallel: appended instead of the states
      range_groups[r] = std::move(groups);
    });
    timings.push_back({"scan + join + aggregate (ordered, " + std::to_string(ranges) + " ranges cut at group starts, " +
                           std::to_string(threads) + " threads)",
                       seconds_since(start), 0});
    start = Clock::now();
    Groups all(q, source, plan.aggregated_sets, q.grouping_sets.size(), limits.max_rows);
    all.ordered = true;
    std::vector<const Groups*> parts;
    for (const auto& groups : range_groups) parts.push_back(groups.get());
    all.append_all(parts, /*finished=*/true);
    timings.push_back({"append the ranges' groups in order", seconds_since(start), all.set_of.size()});
    return finish_groups(q, std::move(all), source, limits.max_rows, std::move(timings));
  }

  if (q.aggregated) {
    tbb::enumerable_thread_specific<std::unique_ptr<Groups>> local([&] {
      auto groups = std::make_unique<Groups>(q, source, plan.aggregated_sets, q.grouping_sets.size(), limits.max_rows);
      groups->use_perfect_hashes(plan.perfect_hashes);
      return groups;
    });
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, batches), [&](const tbb::blocked_range<std::size_t>& range) {
      Groups& groups = *local.local();
      PipelineTimes times = joined.empty_times();
      for (std::size_t b = range.begin(); b != range.end(); ++b) {
        Batch batch = joined.rows(b * kBatchRows, std::min(joined.fact_rows(), (b + 1) * kBatchRows), times);
        if (batch.size == 0) continue;
        BatchColumns leaves(q, batch);
        Evaluator evaluator(leaves, &source);
        groups.consume(batch, evaluator, plan.fed_sets);
      }
    });
    timings.push_back({"scan + join + aggregate (hash, thread-local, " + std::to_string(threads) + " threads)",
                       seconds_since(start), 0});
    start = Clock::now();
    Groups merged(q, source, plan.aggregated_sets, q.grouping_sets.size(), limits.max_rows);
    // Groups are merged, and the lattice derives coarser sets, by their ids.
    merged.use_perfect_hashes(plan.perfect_hashes);
    std::vector<const Groups*> partial;
    std::size_t partial_groups = 0;
    for (auto& groups : local) {
      partial.push_back(groups.get());
      partial_groups += groups->set_of.size();
    }
    std::string how = "merge " + std::to_string(partial.size()) + " thread-local tables";
    // T tables of G groups: serially T x G hash operations; in parts about
    // T x G / threads, and the parts, which share no group, appended.
    if (partial.size() > 1 && partial_groups > kParallelMergeGroups) {
      // Many groups: merged part by part in parallel (a group is in the
      // same part in every thread's table), then the parts appended.
      const std::size_t parts = std::min<std::size_t>(256, 2 * static_cast<std::size_t>(threads));
      std::vector<std::vector<std::uint8_t>> part_of(partial.size());
      tbb::parallel_for(std::size_t{0}, partial.size(), [&](std::size_t t) { part_of[t] = partial[t]->parts_of_groups(parts); });
      std::vector<PerfectHash> hashed_ids = plan.perfect_hashes;  // a part's ids are few: hashed, no arrays
      for (auto& h : hashed_ids) h.hashed = true;
      std::vector<std::unique_ptr<Groups>> merged_parts(parts);
      tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t p) {
        merged_parts[p] = std::make_unique<Groups>(q, source, plan.aggregated_sets, q.grouping_sets.size(), limits.max_rows);
        merged_parts[p]->use_perfect_hashes(hashed_ids);
        for (std::size_t t = 0; t < partial.size(); ++t) {
          merged_parts[p]->merge_from(*partial[t], &part_of[t], static_cast<std::uint8_t>(p));
        }
      });
      std::vector<const Groups*> disjoint;
      for (const auto& m : merged_parts) disjoint.push_back(m.get());
      merged.append_all(disjoint);
      how += " in " + std::to_string(parts) + " parts in parallel, appended";
    } else {
      for (const Groups* groups : partial) merged.merge_from(*groups);
    }
    timings.push_back({how, seconds_since(start), merged.set_of.size()});
    if (plan.fed_sets.size() < plan.aggregated_sets.size()) {
      start = Clock::now();
      std::vector<std::string> lines = merged.derive(plan.fed_sets, /*parallel=*/true);
      std::string what = "lattice:";
      for (const auto& l : lines) what += " " + l + ";";
      timings.push_back({what, seconds_since(start), merged.set_of.size()});
    }
    merged.finish();
    return finish_groups(q, std::move(merged), source, limits.max_rows, std::move(timings));
  }

  // Rows: each batch projects its own, kept in batch order.
  std::vector<std::vector<ValueVector>> outputs(batches), order_keys(batches);
  std::vector<std::size_t> batch_rows(batches, 0);
  std::atomic<std::uint64_t> total{0};
  const auto project = [&](std::size_t b) {
    PipelineTimes times = joined.empty_times();
    Batch batch = joined.rows(b * kBatchRows, std::min(joined.fact_rows(), (b + 1) * kBatchRows), times);
    BatchColumns leaves(q, batch);
    Evaluator evaluator(leaves, &source);
    const std::vector<std::uint32_t> positions = all_positions(batch.size);
    for (const auto& o : q.outputs) outputs[b].push_back(evaluator.evaluate(*o.expr, positions));
    for (const auto& k : q.order_by) order_keys[b].push_back(evaluator.evaluate(*k.expr, positions));
    batch_rows[b] = batch.size;
    return batch.size;
  };
  const std::uint64_t wanted = q.limit && q.order_by.empty() ? static_cast<std::uint64_t>(*q.limit + q.offset) : ~0ull;
  std::size_t evaluated = batches;  // batches whose rows are kept
  if (q.limit && q.order_by.empty()) {
    // LIMIT without ORDER BY: cpu-serial stops at the first batch that
    // starts with enough rows, and so must this — in rows kept and in
    // errors raised (a division by zero in a batch past the limit is not
    // an error of the query). Waves of batches run in parallel; a batch's
    // error counts only if the rows before it fall short of the limit.
    const std::size_t wave = std::max<std::size_t>(1, threads);
    std::uint64_t kept = 0;
    evaluated = 0;
    while (evaluated < batches && kept < wanted) {
      const std::size_t first = evaluated, end = std::min(batches, first + wave);
      std::vector<std::exception_ptr> failures(end - first);
      tbb::parallel_for(tbb::blocked_range<std::size_t>(first, end), [&](const tbb::blocked_range<std::size_t>& r) {
        for (std::size_t b = r.begin(); b != r.end(); ++b) {
          try {
            project(b);
          } catch (...) {
            failures[b - first] = std::current_exception();
          }
        }
      });
      for (std::size_t b = first; b < end && kept < wanted; ++b, ++evaluated) {
        if (failures[b - first]) std::rethrow_exception(failures[b - first]);
        kept += batch_rows[b];
      }
    }
    total = kept;
  } else {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, batches), [&](const tbb::blocked_range<std::size_t>& range) {
      for (std::size_t b = range.begin(); b != range.end(); ++b)
        if ((total += project(b)) > limits.max_rows) too_many(limits.max_rows, "result");
    });
  }
  timings.push_back({"scan + join + project (" + std::to_string(threads) + " threads)", seconds_since(start), total});
  start = Clock::now();
  std::vector<ValueVector> all_outputs, all_keys;
  for (const auto& o : q.outputs) all_outputs.emplace_back(o.expr->type);
  for (const auto& k : q.order_by) all_keys.emplace_back(k.expr->type);
  std::size_t rows = 0;
  for (std::size_t b = 0; b < evaluated && rows < wanted; ++b) {
    std::size_t n = outputs[b].empty() ? 0 : outputs[b][0].size();
    for (std::size_t o = 0; o < all_outputs.size(); ++o) {
      for (std::size_t i = 0; i < n; ++i) all_outputs[o].push_from(outputs[b][o], i);
    }
    for (std::size_t o = 0; o < all_keys.size(); ++o) {
      for (std::size_t i = 0; i < n; ++i) all_keys[o].push_from(order_keys[b][o], i);
    }
    rows += n;
  }
  timings.push_back({"concatenate", seconds_since(start), rows});
  return finish_rows(q, std::move(all_outputs), std::move(all_keys), rows, limits.max_rows, std::move(timings));
}

}  // namespace gpuolap::sql
