#include "sql/ordered_route.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "gpuolap/elapsed.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/huge_pages.hpp"
#include "groupby/ordered_aggregation.hpp"
#include "sql/cube_route.hpp"
#include "sql/execution.hpp"
#include "sql/plan.hpp"
#include "sql/recent_cache.hpp"
#include "sql/shared_route.hpp"

namespace gpuolap::sql {
namespace {

const table::Column& column_of(const LogicalQuery& q, const Expr& e) { return q.tables[e.table].table->columns[e.column]; }

// A stored column as the operator views it: dates and string codes are
// 4-byte integers (codes in the strings' byte order, so MIN and MAX of
// codes are those of the strings).
groupby::ColumnView view_of(const table::Column& c) {
  groupby::ColumnView v;
  v.name = c.name;
  v.nulls = c.nulls.empty() ? nullptr : c.nulls.data();
  switch (c.type) {
    case table::ColumnType::Int64:
      v.type = groupby::ValueType::Int64;
      v.values = c.int64s.data();
      break;
    case table::ColumnType::Double:
      v.type = groupby::ValueType::Double;
      v.values = c.doubles.data();
      break;
    case table::ColumnType::Date:
    case table::ColumnType::String:
      v.type = groupby::ValueType::Int32;
      v.values = c.int32s.data();
      break;
  }
  return v;
}

// The query as the operator's input, over the table's own columns (host
// memory, no copy): the keys in the order the table is stored in, each
// aggregated column once.
groupby::OrderedInput input_of(const LogicalQuery& q) {
  const table::Table& t = *q.tables[0].table;
  groupby::OrderedInput in;
  in.rows = t.row_count();
  std::vector<int> keys;
  for (const ExprPtr& k : q.group_keys) keys.push_back(k->column);
  std::sort(keys.begin(), keys.end(), [&](int a, int b) {
    const auto rank = [&](int c) { return std::find(t.sort_order.begin(), t.sort_order.end(), t.columns[c].name); };
    return rank(a) < rank(b);
  });
  for (int k : keys) in.keys.push_back(view_of(t.columns[k]));
  std::vector<int> value_columns;
  for (const AggregateCall& a : q.aggregates) {
    groupby::Aggregate agg;
    agg.kind = groupby_kind(a.function);
    if (a.argument) {
      const auto at = std::find(value_columns.begin(), value_columns.end(), a.argument->column);
      agg.value = static_cast<int>(at - value_columns.begin());
      if (at == value_columns.end()) {
        value_columns.push_back(a.argument->column);
        in.values.push_back(view_of(t.columns[a.argument->column]));
      }
    }
    in.aggregates.push_back(agg);
  }
  return in;
}

// The table's key and value columns on the GPU, kept per table and set of
// columns (the four most recent sets; each keeps its table alive): a query
// over the same columns uploads nothing, whatever its aggregates.
struct ResidentEntry {
  std::shared_ptr<const table::Table> table;
  std::string columns;  // the input's column names, keys first
  std::unique_ptr<groupby::OrderedResidentColumns> resident;
};

std::string column_signature(const groupby::OrderedInput& in) {
  std::string s;
  for (const auto& k : in.keys) s += k.name + ',';
  s += '|';
  for (const auto& v : in.values) s += v.name + ',';
  return s;
}

std::shared_ptr<const ResidentEntry> resident_columns(const std::shared_ptr<const table::Table>& table,
                                                      const groupby::OrderedInput& in) {
  static RecentCache<ResidentEntry> cache(4);
  const std::string columns = column_signature(in);
  return cache.get([&](const ResidentEntry& e) { return e.table == table && e.columns == columns; },
                   [&] {
                     auto e = std::make_shared<ResidentEntry>();
                     e->table = table;
                     e->columns = columns;
                     e->resident = std::make_unique<groupby::OrderedResidentColumns>(in);
                     return std::shared_ptr<const ResidentEntry>(std::move(e));
                   });
}

// A result column of the operator as the values SQL evaluates over; a
// string column's codes become its strings through the dictionary of
// `source`, the table column they came from.
ValueVector values_of(groupby::ResultColumn& c, std::size_t rows, SqlType type, const table::Column& source) {
  ValueVector v(type);
  if (c.nulls.empty()) resize_on_huge_pages(v.nulls, rows);  // zeros: no NULL
  else v.nulls = std::move(c.nulls);
  switch (type) {
    case SqlType::Double:
      v.doubles = std::move(c.doubles);
      break;
    case SqlType::String:
      v.strings.resize(rows);
      for (std::size_t i = 0; i < rows; ++i)
        if (!v.nulls[i]) v.strings[i] = source.dictionary[c.ints[i]];
      break;
    default:  // Int64, Date
      v.ints = std::move(c.ints);
      break;
  }
  return v;
}

}  // namespace

std::string ordered_route_refusal(const LogicalQuery& q) {
  if (std::string why = cube_route_refusal(q); !why.empty()) return why;
  if (q.grouping_sets.size() != 1) return "it has " + std::to_string(q.grouping_sets.size()) + " grouping sets";
  if (q.grouping_sets[0].size() != q.group_keys.size()) return "its grouping set leaves out a GROUP BY key";
  if (q.group_keys.size() > groupby::kMaxKeys)
    return "it groups by more than " + std::to_string(groupby::kMaxKeys) + " columns";
  if (q.tables[0].table->row_count() > groupby::kMaxRows) return "the table has 2^32 rows or more";
  if (stored_sorted_on(q, 0, q.grouping_sets[0]).empty()) {
    const std::string order = sort_order_text(*q.tables[0].table);
    return q.tables[0].name + (order.empty() ? " is not stored sorted" : " is stored sorted by (" + order + ")") +
           ", not on the grouping keys";
  }
  return {};
}

std::vector<std::string> ordered_route_plan(const LogicalQuery& q) {
  const groupby::OrderedInput in = input_of(q);
  const groupby::OrderedPlan plan = groupby::choose_ordered_plan(in, {});
  std::vector<std::string> lines{"ordered aggregation (src/groupby/) over " + q.tables[0].name + ", on the GPU: " +
                                     stored_sorted_on(q, 0, q.grouping_sets[0]) +
                                     ", so a group ends where its key changes (no hash table)",
                                 "  the operator's auto: " + plan.why};
  const std::vector<std::string> finish = execution::finish_plan_lines(q);
  lines.insert(lines.end(), finish.begin(), finish.end());
  return lines;
}

QueryResult run_ordered_route(const LogicalQuery& q, const SourceText& source, const ExecutionLimits& limits) {
  require_gpu(groupby::gpu_available());
  auto start = std::chrono::steady_clock::now();
  const groupby::OrderedInput host = input_of(q);
  const auto entry = resident_columns(q.tables[0].table, host);
  std::vector<OperatorTiming> timings{{"columns on the GPU (kept per table and columns)", seconds_since(start), 0}};

  start = std::chrono::steady_clock::now();
  const groupby::OrderedPlan plan = groupby::choose_ordered_plan(host, {});
  groupby::OrderedGpuOptions options;
  options.device = entry->resident->device();
  options.input_on_device = true;
  options.timing = true;  // the operator's stages, in --timing's lines below it
  // The resident columns with this query's aggregates: an entry is shared by
  // every query over the same key and value columns (in the same order, so
  // the aggregates' value indexes hold), whatever it computes.
  groupby::OrderedInput on_device = entry->resident->input();
  on_device.aggregates = host.aggregates;
  groupby::OrderedResult r = groupby::aggregate_gpu(on_device, plan, options);
  timings.push_back({"ordered aggregation (" + std::string(groupby::architecture_name(plan.architecture)) +
                         ", groups downloaded)",
                     seconds_since(start), r.groups});
  for (const auto& [stage, ms] : r.stage_ms) timings.push_back({"  " + stage, ms / 1e3, r.groups});
  if (r.groups > limits.max_rows) execution::too_many(limits.max_rows, "groups");

  // The groups of the one set: keys in the query's order, then the finals.
  start = std::chrono::steady_clock::now();
  execution::Groups groups(q, source, q.grouping_sets, 1, limits.max_rows);
  resize_on_huge_pages(groups.set_of, r.groups);  // every group in set 0
  for (std::size_t k = 0; k < q.group_keys.size(); ++k) {
    const table::Column& c = column_of(q, *q.group_keys[k]);
    const auto at = std::find_if(host.keys.begin(), host.keys.end(), [&](const auto& v) { return v.name == c.name; });
    groups.keys[k] = values_of(r.keys[at - host.keys.begin()], r.groups, q.group_keys[k]->type, c);
  }
  for (std::size_t a = 0; a < q.aggregates.size(); ++a) {
    const AggregateCall& call = q.aggregates[a];
    const table::Column& source_column = call.argument ? column_of(q, *call.argument) : column_of(q, *q.group_keys[0]);
    groups.finals.push_back(values_of(r.aggregates[a], r.groups, call.result_type, source_column));
  }
  timings.push_back({"groups to SQL values", seconds_since(start), r.groups});
  return execution::finish_groups(q, std::move(groups), source, limits.max_rows, std::move(timings));
}

}  // namespace gpuolap::sql
