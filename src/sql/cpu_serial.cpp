#include "sql/cpu_serial.hpp"

#include <chrono>

#include "gpuolap/elapsed.hpp"
#include "sql/execution.hpp"

namespace gpuolap::sql {

using namespace execution;

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

QueryResult run_cpu_serial(const LogicalQuery& q, const PhysicalPlan& plan, const SourceText& source,
                           const ExecutionLimits& limits) {
  const JoinedRows joined(q, plan, source);
  PipelineTimes times = joined.empty_times();
  double consume_seconds = 0;
  Groups groups(q, source, plan.aggregated_sets, q.grouping_sets.size(), limits.max_rows);
  groups.ordered = plan.aggregation == AggregationMethod::Ordered;
  std::vector<ValueVector> outputs, order_keys;
  for (const auto& o : q.outputs) outputs.emplace_back(o.expr->type);
  for (const auto& k : q.order_by) order_keys.emplace_back(k.expr->type);
  const bool stop_early = !q.aggregated && q.order_by.empty() && q.limit.has_value();
  const std::uint64_t wanted = q.limit ? static_cast<std::uint64_t>(*q.limit) + static_cast<std::uint64_t>(q.offset) : 0;
  std::size_t output_rows = 0;

  for (std::size_t begin = 0; begin < joined.fact_rows(); begin += kBatchRows) {
    if (stop_early && output_rows >= wanted) break;
    Batch batch = joined.rows(begin, std::min(joined.fact_rows(), begin + kBatchRows), times);
    if (batch.size == 0) continue;
    Clock::time_point start = Clock::now();
    BatchColumns leaves(q, batch);
    Evaluator evaluator(leaves, &source);
    if (q.aggregated) {
      groups.consume(batch, evaluator, plan.fed_sets);
    } else {
      const std::vector<std::uint32_t> positions = all_positions(batch.size);
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
    consume_seconds += seconds_since(start);
  }

  std::vector<OperatorTiming> timings;
  if (!plan.joins.empty()) timings.push_back({joined.index_label(), joined.index_seconds(), 0});
  std::vector<std::string> names = joined.operator_names();
  for (std::size_t i = 0; i < names.size(); ++i) timings.push_back({names[i], times.seconds[i], times.rows_out[i]});
  if (!q.aggregated) {
    timings.push_back({"project", consume_seconds, output_rows});
    return finish_rows(q, std::move(outputs), std::move(order_keys), output_rows, limits.max_rows, std::move(timings));
  }
  timings.push_back({std::string(groups.ordered ? "aggregate (ordered)" : "aggregate (hash)") + " of " +
                         std::to_string(plan.fed_sets.size()) + " set(s) from the rows",
                     consume_seconds, groups.set_of.size()});
  if (plan.fed_sets.size() < plan.aggregated_sets.size()) {
    Clock::time_point start = Clock::now();
    std::vector<std::string> lines = groups.derive(plan.fed_sets, /*parallel=*/false);
    std::string what = "lattice:";
    for (const auto& l : lines) what += " " + l + ";";
    timings.push_back({what, seconds_since(start), groups.set_of.size()});
  }
  groups.finish();
  return finish_groups(q, std::move(groups), source, limits.max_rows, std::move(timings));
}

}  // namespace gpuolap::sql
