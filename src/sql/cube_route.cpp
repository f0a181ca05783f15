#include "sql/cube_route.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "cube/full_cube.hpp"
#include "gpuolap/elapsed.hpp"
#include "gpuolap/error.hpp"
#include "sql/execution.hpp"
#include "sql/recent_cache.hpp"

namespace gpuolap::sql {
namespace {

const std::string& column_name(const LogicalQuery& q, const Expr& e) {
  return q.tables[e.table].table->columns[e.column].name;
}

// The cube the query asks for: its keys as grouping columns, its sets as
// masks over them, its aggregates as measures.
cube::CubeSpec spec_of(const LogicalQuery& q) {
  cube::CubeSpec spec;
  for (const ExprPtr& k : q.group_keys) spec.columns.push_back(column_name(q, *k));
  for (const auto& set : q.grouping_sets) {
    cube::SetMask mask = 0;
    for (int k : set) mask |= cube::SetMask{1} << k;
    spec.sets.push_back(mask);
  }
  for (const AggregateCall& a : q.aggregates)
    spec.measures.push_back({groupby_kind(a.function), a.argument ? column_name(q, *a.argument) : std::string()});
  return spec;
}

// A column of the cube's result as the values SQL evaluates over.
ValueVector values_of(const table::Column& c, SqlType type) {
  ValueVector v(type);
  const std::size_t n = c.size();
  v.nulls.assign(n, 0);
  if (!c.nulls.empty()) v.nulls = c.nulls;
  switch (c.type) {
    case table::ColumnType::Int64:
      v.ints = c.int64s;
      break;
    case table::ColumnType::Double:
      v.doubles = c.doubles;
      break;
    case table::ColumnType::Date:
      v.ints.assign(c.int32s.begin(), c.int32s.end());
      break;
    case table::ColumnType::String:
      v.strings.resize(n);
      for (std::size_t i = 0; i < n; ++i)
        if (!v.nulls[i]) v.strings[i] = c.dictionary[c.int32s[i]];
      break;
  }
  return v;
}

// The last few tables coded for a spec, kept so that a query repeated over
// tables held in memory finds its table coded and, on the GPU, resident:
// coding and uploading 5 M rows took most of the route's 14.7 ms on an
// H200's host.
struct PreparedEntry {
  PreparedEntry(std::shared_ptr<const table::Table> t, std::string k, const cube::CubeSpec& spec)
      : table(std::move(t)), key(std::move(k)), prepared(*table, spec) {}
  std::shared_ptr<const table::Table> table;
  std::string key;  // the spec's signature
  cube::PreparedCube prepared;
};

std::string signature(const cube::CubeSpec& spec) {
  std::string s;
  for (const std::string& c : spec.columns) s += c + ',';
  s += '|';
  for (cube::SetMask m : spec.sets) s += std::to_string(m) + ',';
  s += '|';
  for (const cube::CubeSpec::Measure& m : spec.measures) s += cube::measure_name(m) + ',';
  return s;
}

std::shared_ptr<const PreparedEntry> prepared_cube(const std::shared_ptr<const table::Table>& table,
                                                   const cube::CubeSpec& spec) {
  static RecentCache<PreparedEntry> cache(4);
  const std::string key = signature(spec);
  return cache.get([&](const PreparedEntry& e) { return e.table == table && e.key == key; },
                   [&] { return std::make_shared<const PreparedEntry>(table, key, spec); });
}

}  // namespace

groupby::AggregateKind groupby_kind(AggregateFunction f) {
  switch (f) {
    case AggregateFunction::CountStar: return groupby::AggregateKind::CountStar;
    case AggregateFunction::Count: return groupby::AggregateKind::Count;
    case AggregateFunction::Sum: return groupby::AggregateKind::Sum;
    case AggregateFunction::Avg: return groupby::AggregateKind::Avg;
    case AggregateFunction::Min: return groupby::AggregateKind::Min;
    default: return groupby::AggregateKind::Max;
  }
}

std::string cube_route_refusal(const LogicalQuery& q) {
  if (!q.aggregated) return "the query has no GROUP BY";
  if (q.group_keys.empty()) return "it groups by no column (GROUP BY () alone)";
  if (q.tables.size() != 1) return "it reads more than one table";
  if (!q.filters.empty()) return "it has a WHERE clause";
  if (q.group_keys.size() > cube::kMaxColumns)
    return "it groups by more than " + std::to_string(cube::kMaxColumns) + " columns";
  for (const ExprPtr& k : q.group_keys)
    if (k->kind != ExprKind::InputColumn) return "a GROUP BY key is an expression, not a column";
  for (std::size_t s = 0; s < q.grouping_sets.size(); ++s)
    if (std::find(q.grouping_sets.begin(), q.grouping_sets.begin() + s, q.grouping_sets[s]) != q.grouping_sets.begin() + s)
      return "a grouping set appears twice";
  if (q.aggregates.empty()) return "it computes no aggregate";
  if (q.aggregates.size() > groupby::kMaxAggregates)
    return "it computes more than " + std::to_string(groupby::kMaxAggregates) + " aggregates";
  for (const AggregateCall& a : q.aggregates) {
    if (a.distinct) return "an aggregate is DISTINCT";
    if (a.argument && a.argument->kind != ExprKind::InputColumn) return "an aggregate's argument is an expression, not a column";
  }
  return {};
}

std::vector<std::string> cube_route_plan(const LogicalQuery& q, cube::Algorithm algorithm) {
  const cube::CubeSpec spec = spec_of(q);
  std::vector<std::string> lines{
      "cube operator (src/cube/) over " + q.tables[0].name +
      (algorithm == cube::Algorithm::GpuLattice
           ? ", on the GPU: gpu-lattice — the rows read once for the finest set, each other set from its smallest "
             "computed parent"
           : ", on the CPU: cpu-partitioned — the keys coded densely once, the rows cut at intersection borders (sorted "
             "or scattered into key ranges), a range per task, each other set from its smallest computed parent")};
  std::string sets;
  for (cube::SetMask s : spec.sets) sets += (sets.empty() ? "" : ", ") + cube::set_text(spec, s);
  lines.push_back("  grouping sets (" + std::to_string(spec.sets.size()) + "): " + sets);
  const std::vector<std::string> finish = execution::finish_plan_lines(q);
  lines.insert(lines.end(), finish.begin(), finish.end());
  return lines;
}

QueryResult run_cube_route(const LogicalQuery& q, cube::Algorithm algorithm, const SourceText& source,
                           const ExecutionLimits& limits) {
  auto start = std::chrono::steady_clock::now();
  const cube::CubeSpec spec = spec_of(q);
  cube::BuildOptions options;
  options.algorithm = algorithm;
  const cube::CubeResult cells = prepared_cube(q.tables[0].table, spec)->prepared.build(options);
  std::vector<OperatorTiming> timings{
      {"cube operator (" + std::string(cube::algorithm_name(algorithm)) + ")", seconds_since(start), cells.table.row_count()}};
  if (cells.table.row_count() > limits.max_rows) execution::too_many(limits.max_rows, "groups");

  // The cells as the groups of the grouping sets: set of each from its
  // GROUPING bits, keys and aggregates column by column.
  start = std::chrono::steady_clock::now();
  execution::Groups groups(q, source, q.grouping_sets, q.grouping_sets.size(), limits.max_rows);
  const table::Column& grouping = cells.table.columns[0];
  const std::size_t n = spec.columns.size();
  std::vector<std::int64_t> id_of_set;
  for (cube::SetMask mask : spec.sets) {
    std::int64_t id = 0;
    for (std::size_t i = 0; i < n; ++i) id = id << 1 | ((mask >> i) & 1 ? 0 : 1);
    id_of_set.push_back(id);
  }
  // The result lists the sets in order: a set's rows follow the last one's.
  std::size_t set = 0;
  groups.set_of.resize(cells.table.row_count());
  for (std::size_t r = 0; r < cells.table.row_count(); ++r) {
    while (grouping.int64s[r] != id_of_set[set]) ++set;
    groups.set_of[r] = static_cast<std::uint32_t>(set);
  }
  for (std::size_t k = 0; k < n; ++k) groups.keys[k] = values_of(cells.table.columns[1 + k], q.group_keys[k]->type);
  for (std::size_t a = 0; a < q.aggregates.size(); ++a)
    groups.finals.push_back(values_of(cells.table.columns[1 + n + a], q.aggregates[a].result_type));
  timings.push_back({"cells to groups", seconds_since(start), cells.table.row_count()});
  return execution::finish_groups(q, std::move(groups), source, limits.max_rows, std::move(timings));
}

}  // namespace gpuolap::sql
