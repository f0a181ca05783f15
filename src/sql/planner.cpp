#include "sql/plan.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <limits>
#include <memory>

#include "sql/binder.hpp"
#include "sql/recent_cache.hpp"

namespace gpuolap::sql {

namespace {

std::size_t table_rows(const table::Table& t) { return t.columns.empty() ? 0 : column_rows(t.columns.front()); }

// An array lookup needs integer keys (or dates), no NULL, no key twice, and
// a span of at most 4 slots a row or 2^20 slots: then a join is one load per row.
void choose_join_method(const table::Column& key, JoinStep& step) {
  if (key.type != table::ColumnType::Int64 && key.type != table::ColumnType::Date) {
    step.why = "hash: the key is not an integer";
    return;
  }
  std::size_t rows = column_rows(key);
  bool has_null = false;
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  for (std::size_t r = 0; r < rows; ++r) {
    if (key.is_null(r)) {
      has_null = true;
      continue;
    }
    std::int64_t v = key.type == table::ColumnType::Int64 ? key.int64s[r] : key.int32s[r];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (rows == 0 || lo > hi) {
    step.why = "hash: the dimension has no keys";
    return;
  }
  if (has_null) {
    step.why = "hash: the key has NULLs";
    return;
  }
  unsigned __int128 span = static_cast<unsigned __int128>(static_cast<__int128>(hi) - lo + 1);
  // Up to 2^20 slots (4 MiB) an array beats a hash table however sparse the
  // keys: SSB's date keys (yyyymmdd, 2,557 over a span of 61,131) fit in L2.
  if (span > static_cast<unsigned __int128>(std::max<std::size_t>(4 * rows + 64, std::size_t{1} << 20))) {
    step.why = "hash: the keys are sparse (" + std::to_string(rows) + " keys over a span of " +
               (span > std::numeric_limits<std::uint64_t>::max() ? std::string("2^64") : std::to_string(static_cast<std::uint64_t>(span))) + ")";
    return;
  }
  std::vector<std::uint8_t> seen(static_cast<std::size_t>(span), 0);
  for (std::size_t r = 0; r < rows; ++r) {
    std::int64_t v = key.type == table::ColumnType::Int64 ? key.int64s[r] : key.int32s[r];
    if (seen[static_cast<std::size_t>(v - lo)]++) {
      step.why = "hash: a key repeats (" + std::to_string(v) + "), so a row may match several";
      return;
    }
  }
  step.method = JoinMethod::ArrayLookup;
  step.key_min = lo;
  step.key_span = static_cast<std::int64_t>(span);
  step.why = "array lookup: the keys are unique integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]" +
             (span > 4 * rows + 64 ? " (" + std::to_string(rows) + " keys over " + std::to_string(static_cast<std::uint64_t>(span)) +
                                         " slots, within 2^20)"
                                   : "");
}

ExprPtr column_expr(const LogicalQuery& q, int t, int c, int location) {
  Expr e;
  e.kind = ExprKind::InputColumn;
  e.table = t;
  e.column = c;
  e.type = column_sql_type(q.tables[t].table->columns[c].type);
  e.location = location;
  return std::make_shared<const Expr>(std::move(e));
}

// Why the rows reach the aggregation sorted on the grouping keys ("" when
// they do not): one grouping set, its keys columns of the fact table that
// form a prefix of the order the table is stored in. Filters and joins
// keep the fact table's order.
std::string sorted_on_keys(const LogicalQuery& q, const PhysicalPlan& plan) {
  if (plan.fact_table < 0 || q.grouping_sets.size() != 1) return "";
  return stored_sorted_on(q, plan.fact_table, q.grouping_sets[0]);
}

// Most slots of a perfect hash: 2^20 group ids of 4 bytes per set and thread.
constexpr std::uint64_t kMostPerfectSlots = std::uint64_t{1} << 20;

// The least and greatest non-NULL value of an integer or date column
// (lo > hi when there is none), on every core: this planning pass read the
// key columns once a query on one core (some 20 ms of a 90 ms CUBE over
// 5 M rows on the 2-core VM), a serial step before a parallel plan.
std::pair<std::int64_t, std::int64_t> value_range(const table::Column& c) {
  using Range = std::pair<std::int64_t, std::int64_t>;
  const Range none{std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()};
  return tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, column_rows(c), 1 << 16), none,
      [&](const tbb::blocked_range<std::size_t>& rows, Range range) {
        const auto scan = [&](const auto& values) {
          for (std::size_t r = rows.begin(); r != rows.end(); ++r) {
            if (c.is_null(r)) continue;
            range.first = std::min<std::int64_t>(range.first, values[r]);
            range.second = std::max<std::int64_t>(range.second, values[r]);
          }
        };
        if (c.type == table::ColumnType::Int64) scan(c.int64s);
        else scan(c.int32s);
        return range;
      },
      [](Range a, Range b) { return Range{std::min(a.first, b.first), std::max(a.second, b.second)}; });
}

// value_range of a table's column, kept per table and column (the few most
// recent), as the shared route keeps its column facts: a query repeated
// over tables held in memory (the server, `sql --repeat`) does not read its
// key columns again. A GROUP BY of 1,024 groups over 10 M rows spent 5 of
// its 20 ms on the 2-core VM finding the key's range.
std::pair<std::int64_t, std::int64_t> kept_value_range(const std::shared_ptr<const table::Table>& table, int column) {
  struct Entry {
    std::shared_ptr<const table::Table> table;
    int column;
    std::pair<std::int64_t, std::int64_t> range;
  };
  static RecentCache<Entry> cache(16);
  return cache
      .get([&](const Entry& e) { return e.table == table && e.column == column; },
           [&] { return std::make_shared<const Entry>(Entry{table, column, value_range(table->columns[column])}); })
      ->range;
}

// A perfect hash of the set's keys, or one of no slots when a key is not a
// column or the product of the cardinalities is too large.
PerfectHash perfect_hash_of(const LogicalQuery& q, const std::vector<int>& set) {
  PerfectHash hash;
  if (set.empty()) return hash;
  std::uint64_t slots = 1;
  for (int k : set) {
    const Expr& key = *q.group_keys[k];
    if (key.kind != ExprKind::InputColumn) return {};
    const table::Column& c = q.tables[key.table].table->columns[key.column];
    PerfectHash::Key part{key.table, key.column, 0, slots};
    std::uint64_t cardinality = 0;
    if (c.type == table::ColumnType::String) {
      cardinality = c.dictionary.size();
    } else if (c.type == table::ColumnType::Double) {
      return {};
    } else {
      // (Kept per table and column: a CUBE's sets, and the next query, share them.)
      auto [lo, hi] = kept_value_range(q.tables[key.table].table, key.column);
      if (lo > hi) {
        lo = hi = 0;
      } else if (static_cast<unsigned __int128>(static_cast<__int128>(hi) - lo + 1) > kMostPerfectSlots) {
        return {};
      }
      part.min = lo;
      cardinality = static_cast<std::uint64_t>(hi - lo + 1);
    }
    // Ids up to 2^62: beyond the array's limit they are hashed.
    if (cardinality + 1 > kMostPerfectSlots || slots > (std::uint64_t{1} << 62) / (cardinality + 1)) return {};
    part.radix = cardinality + 1;
    slots *= cardinality + 1;
    hash.keys.push_back(part);
  }
  hash.slots = slots;
  return hash;
}

}  // namespace

std::string stored_sorted_on(const LogicalQuery& q, int table, const std::vector<int>& set) {
  if (table < 0 || set.empty()) return "";
  const table::Table& stored = *q.tables[table].table;
  std::vector<std::string> key_columns;
  for (int k : set) {
    const Expr& key = *q.group_keys[k];
    if (key.kind != ExprKind::InputColumn || key.table != table) return "";
    key_columns.push_back(stored.columns[key.column].name);
  }
  std::sort(key_columns.begin(), key_columns.end());
  key_columns.erase(std::unique(key_columns.begin(), key_columns.end()), key_columns.end());
  if (stored.sort_order.size() < key_columns.size()) return "";
  std::vector<std::string> prefix(stored.sort_order.begin(), stored.sort_order.begin() + key_columns.size());
  std::sort(prefix.begin(), prefix.end());
  if (prefix != key_columns) return "";
  return q.tables[table].name + " is stored sorted by (" + sort_order_text(stored) + "), whose prefix is the grouping keys";
}

std::string sort_order_text(const table::Table& table) {
  std::string order;
  for (const auto& c : table.sort_order) order += (order.empty() ? "" : ", ") + c;
  return order;
}

PhysicalPlan plan_query(const LogicalQuery& q, const SourceText& source, const PlanOptions& options) {
  PhysicalPlan plan;
  plan.engine = options.engine;
  const int n = static_cast<int>(q.tables.size());
  for (const auto& t : q.tables) {
    if (table_rows(*t.table) >= std::numeric_limits<std::uint32_t>::max()) {
      source.fail(t.location, "table " + t.name + " has too many rows (at most 2^32 - 1)");
    }
  }
  std::vector<ExprPtr> filters = q.filters;
  if (n > 0) {
    plan.fact_table = 0;
    for (int t = 1; t < n; ++t) {
      if (table_rows(*q.tables[t].table) > table_rows(*q.tables[plan.fact_table].table)) plan.fact_table = t;
    }
    std::vector<bool> joined(n, false), used(q.joins.size(), false);
    joined[plan.fact_table] = true;
    // Dimensions with filters of their own join first: their lookups drop
    // rows before the others are looked up.
    std::vector<int> own_filters(n, 0);
    for (const auto& f : q.filters) {
      std::vector<bool> used(n, false);
      tables_used(*f, used);
      if (std::count(used.begin(), used.end(), true) == 1) ++own_filters[std::find(used.begin(), used.end(), true) - used.begin()];
    }
    for (;;) {
      int best = -1;
      for (std::size_t j = 0; j < q.joins.size(); ++j) {
        const JoinEquality& e = q.joins[j];
        if (used[j] || joined[e.left_table] == joined[e.right_table]) continue;
        int dimension = joined[e.left_table] ? e.right_table : e.left_table;
        if (best < 0) best = static_cast<int>(j);
        const JoinEquality& b = q.joins[best];
        int best_dimension = joined[b.left_table] ? b.right_table : b.left_table;
        if (own_filters[dimension] > own_filters[best_dimension]) best = static_cast<int>(j);
      }
      if (best < 0) break;
      const JoinEquality& e = q.joins[best];
      bool l = joined[e.left_table];
      JoinStep step;
      step.dimension = l ? e.right_table : e.left_table;
      step.dimension_column = l ? e.right_column : e.left_column;
      step.probe_table = l ? e.left_table : e.right_table;
      step.probe_column = l ? e.left_column : e.right_column;
      choose_join_method(q.tables[step.dimension].table->columns[step.dimension_column], step);
      if (own_filters[step.dimension] > 0) {
        step.why += "; joined early: " + std::to_string(own_filters[step.dimension]) + " filter(s) of its own";
      }
      joined[step.dimension] = true;
      used[best] = true;
      plan.joins.push_back(std::move(step));
    }
    for (int t = 0; t < n; ++t) {
      if (!joined[t]) {
        source.fail(q.tables[t].location, "table \"" + q.tables[t].alias +
                                              "\" is joined to the others by no equality of columns (cross joins are "
                                              "not supported; join each dimension to the fact table)");
      }
    }
    // Equalities between tables already joined another way: filters.
    for (std::size_t j = 0; j < q.joins.size(); ++j) {
      if (used[j]) continue;
      const JoinEquality& e = q.joins[j];
      Expr eq;
      eq.kind = ExprKind::Compare;
      eq.type = SqlType::Bool;
      eq.op = "=";
      eq.location = e.location;
      eq.children = {column_expr(q, e.left_table, e.left_column, e.location),
                     column_expr(q, e.right_table, e.right_column, e.location)};
      filters.push_back(std::make_shared<const Expr>(std::move(eq)));
    }
  }
  // Each filter right after the last table it reads has been joined.
  for (const auto& f : filters) {
    std::vector<bool> used(std::max(n, 1), false);
    tables_used(*f, used);
    int last_step = -1;
    for (std::size_t s = 0; s < plan.joins.size(); ++s) {
      if (used[plan.joins[s].dimension]) last_step = static_cast<int>(s);
    }
    if (last_step < 0) {
      plan.scan_filters.push_back(f);
    } else if (std::count(used.begin(), used.end(), true) == 1) {
      plan.joins[last_step].dimension_filters.push_back(f);
    } else {
      plan.joins[last_step].filters.push_back(f);
    }
  }
  if (q.aggregated) {
    plan.aggregation = AggregationMethod::Hash;
    plan.aggregation_why = options.engine == SqlEngine::CpuSerial
                               ? "hash: a hash table per grouping set"
                               : "hash: thread-local hash tables per grouping set, merged";
    plan.aggregated_sets = q.grouping_sets;
    const std::size_t sets = q.grouping_sets.size();
    if (std::string sorted = sorted_on_keys(q, plan); !sorted.empty()) {
      plan.aggregation = AggregationMethod::Ordered;
      plan.aggregation_why = "ordered: " + sorted + ", so a group ends where its key changes (no hash table)" +
                             (options.engine == SqlEngine::CpuParallel
                                  ? "; the rows cut into ranges at group starts, one task each, their groups appended in order"
                                  : "");
    } else if (sets == 1 && !q.grouping_sets[0].empty()) {
      plan.aggregation_why += " (the input is not sorted on the grouping keys)";
    }
    if (options.grouping_sets) {
      plan.grouping_sets = *options.grouping_sets;
      plan.grouping_sets_why = "asked for (--grouping-sets)";
    } else if (sets > 1) {
      plan.grouping_sets = GroupingSetsMethod::Lattice;
      plan.grouping_sets_why = std::to_string(sets) + " grouping sets: the rows are aggregated once, into the finest";
    } else {
      plan.grouping_sets = GroupingSetsMethod::PerSet;
      plan.grouping_sets_why = "one grouping set";
    }
    if (plan.grouping_sets == GroupingSetsMethod::Lattice) {
      std::vector<int> finest;
      for (const auto& set : q.grouping_sets) {
        for (int k : set) {
          if (std::find(finest.begin(), finest.end(), k) == finest.end()) finest.push_back(k);
        }
      }
      std::size_t fed = sets;
      for (std::size_t s = 0; s < sets; ++s) {
        if (q.grouping_sets[s].size() == finest.size()) fed = s;
      }
      if (fed == sets) plan.aggregated_sets.push_back(finest);
      plan.fed_sets = {fed};
    } else {
      for (std::size_t s = 0; s < sets; ++s) plan.fed_sets.push_back(s);
    }
    if (options.engine == SqlEngine::CpuParallel && plan.aggregation == AggregationMethod::Hash) {
      std::string perfect;
      plan.perfect_hashes.resize(plan.aggregated_sets.size());
      std::uint64_t budget = 4 * kMostPerfectSlots;  // slots of all sets, per thread
      for (std::size_t s = 0; s < plan.aggregated_sets.size(); ++s) {
        PerfectHash hash = perfect_hash_of(q, plan.aggregated_sets[s]);
        if (hash.slots == 0) continue;
        const bool fed = std::find(plan.fed_sets.begin(), plan.fed_sets.end(), s) != plan.fed_sets.end();
        hash.hashed = !fed || hash.slots > kMostPerfectSlots || hash.slots > budget;
        if (!hash.hashed) budget -= hash.slots;
        perfect += (perfect.empty() ? "" : ", ") + std::string("set ") + std::to_string(s + 1) + ": " +
                   std::to_string(hash.slots) + (hash.hashed ? " ids, hashed" : " slots");
        plan.perfect_hashes[s] = std::move(hash);
      }
      if (!perfect.empty()) {
        plan.aggregation_why += "; group ids straight from dictionary codes and small integer ranges (a perfect hash; " +
                                perfect + ")";
      }
    }
  }
  return plan;
}

std::string expression_text(const LogicalQuery& q, const Expr& e) {
  auto child = [&](std::size_t i) { return expression_text(q, *e.children[i]); };
  switch (e.kind) {
    case ExprKind::Constant: {
      const ValueVector& v = e.constant;
      if (v.type == SqlType::Null || v.is_null(0)) return "NULL";
      if (v.type == SqlType::String) return "'" + v.strings[0] + "'";
      if (v.type == SqlType::Double) return format_double_shortest(v.doubles[0]);
      if (v.type == SqlType::Date) return "date '" + format_date(v.ints[0]) + "'";
      if (v.type == SqlType::Interval) return "interval '" + std::to_string(v.ints[0]) + "' day";
      if (v.type == SqlType::Bool) return v.ints[0] ? "true" : "false";
      return std::to_string(v.ints[0]);
    }
    case ExprKind::InputColumn: return q.tables[e.table].alias + "." + q.tables[e.table].table->columns[e.column].name;
    case ExprKind::GroupKey: return expression_text(q, *q.group_keys[e.index]);
    case ExprKind::Aggregate: {
      const AggregateCall& a = q.aggregates[e.index];
      static const char* names[] = {"sum", "count", "count", "avg", "min", "max"};
      std::string name = names[static_cast<int>(a.function)];
      if (!a.argument) return name + "(*)";
      return name + "(" + (a.distinct ? "DISTINCT " : "") + expression_text(q, *a.argument) + ")";
    }
    case ExprKind::Grouping: {
      std::string s = "GROUPING(";
      for (std::size_t i = 0; i < e.keys.size(); ++i) s += (i ? ", " : "") + expression_text(q, *q.group_keys[e.keys[i]]);
      return s + ")";
    }
    case ExprKind::Arithmetic:
    case ExprKind::Compare: return "(" + child(0) + " " + e.op + " " + child(1) + ")";
    case ExprKind::Negate: return "(-" + child(0) + ")";
    case ExprKind::And:
    case ExprKind::Or: {
      std::string s = "(";
      for (std::size_t i = 0; i < e.children.size(); ++i) s += (i ? (e.kind == ExprKind::And ? " AND " : " OR ") : "") + child(i);
      return s + ")";
    }
    case ExprKind::Not: return "(NOT " + child(0) + ")";
    case ExprKind::IsNull: return "(" + child(0) + (e.negated ? " IS NOT NULL)" : " IS NULL)");
    case ExprKind::Like: return "(" + child(0) + (e.negated ? " NOT LIKE " : " LIKE ") + child(1) + ")";
    case ExprKind::In: {
      std::string s = "(" + child(0) + " IN (";
      for (std::size_t i = 1; i < e.children.size(); ++i) s += (i > 1 ? ", " : "") + child(i);
      return s + "))";
    }
    case ExprKind::Case: {
      std::string s = "CASE";
      for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) s += " WHEN " + child(i) + " THEN " + child(i + 1);
      return s + " ELSE " + child(e.children.size() - 1) + " END";
    }
    case ExprKind::Cast: return "CAST(" + child(0) + " AS " + std::string(type_name(e.type)) + ")";
    case ExprKind::Extract: return "EXTRACT(" + e.op + " FROM " + child(0) + ")";
  }
  return "?";
}

std::vector<std::string> explain_lines(const LogicalQuery& q, const PhysicalPlan& plan) {
  std::vector<std::string> lines;
  std::string indent;
  auto add = [&](const std::string& s) { lines.push_back(indent + s); };
  auto filters_text = [&](const std::vector<ExprPtr>& fs) {
    std::string s;
    for (const auto& f : fs) s += (s.empty() ? "" : " AND ") + expression_text(q, *f);
    return s;
  };
  if (q.limit || q.offset > 0) {
    add("Limit" + (q.limit ? " " + std::to_string(*q.limit) : std::string()) +
        (q.offset > 0 ? " offset " + std::to_string(q.offset) : std::string()));
    indent += "  ";
  }
  if (!q.order_by.empty()) {
    std::string keys;
    for (const auto& k : q.order_by) {
      keys += (keys.empty() ? "" : ", ") + expression_text(q, *k.expr) + (k.descending ? " DESC" : "") +
              (k.nulls_first ? " NULLS FIRST" : " NULLS LAST");
    }
    add("Sort: " + keys);
    indent += "  ";
  }
  std::string outputs;
  for (const auto& o : q.outputs) outputs += (outputs.empty() ? "" : ", ") + expression_text(q, *o.expr) + " AS " + o.name;
  add("Project: " + outputs);
  indent += "  ";
  if (q.having) {
    add("Filter (HAVING): " + expression_text(q, *q.having));
    indent += "  ";
  }
  if (plan.aggregation != AggregationMethod::None) {
    std::string keys, aggs;
    for (const auto& k : q.group_keys) keys += (keys.empty() ? "" : ", ") + expression_text(q, *k);
    for (std::size_t i = 0; i < q.aggregates.size(); ++i) {
      Expr ref;
      ref.kind = ExprKind::Aggregate;
      ref.index = static_cast<int>(i);
      aggs += (aggs.empty() ? "" : ", ") + expression_text(q, ref);
    }
    add("Aggregate (" + plan.aggregation_why + ")");
    add(std::string("  grouping sets by ") +
        (plan.grouping_sets == GroupingSetsMethod::Lattice ? "the lattice: the finest from the rows, each other from its "
                                                             "smallest computed parent"
                                                           : "one pass over the rows per set") +
        " — " + plan.grouping_sets_why);
    add("  keys: " + (keys.empty() ? std::string("none") : keys));
    std::string sets;
    for (const auto& s : q.grouping_sets) {
      std::string one;
      for (int k : s) one += (one.empty() ? "" : ", ") + expression_text(q, *q.group_keys[k]);
      sets += (sets.empty() ? "" : " ") + std::string("(") + one + ")";
    }
    add("  grouping sets (" + std::to_string(q.grouping_sets.size()) + "): " + sets);
    add("  aggregates: " + (aggs.empty() ? std::string("none") : aggs));
    indent += "  ";
  }
  for (std::size_t s = plan.joins.size(); s-- > 0;) {
    const JoinStep& j = plan.joins[s];
    const auto& d = q.tables[j.dimension];
    add(std::string("Join ") + (j.method == JoinMethod::ArrayLookup ? "(array lookup)" : "(hash)") + " " + d.name +
        (d.alias != d.name ? " AS " + d.alias : "") + " on " + q.tables[j.probe_table].alias + "." +
        q.tables[j.probe_table].table->columns[j.probe_column].name + " = " + d.alias + "." +
        d.table->columns[j.dimension_column].name + " — " + j.why);
    if (!j.dimension_filters.empty()) add("  filter of " + d.alias + " before the lookup: " + filters_text(j.dimension_filters));
    if (!j.filters.empty()) add("  filter: " + filters_text(j.filters));
    indent += "  ";
  }
  if (plan.fact_table < 0) {
    add("Result: one row");
  } else {
    const auto& f = q.tables[plan.fact_table];
    add("Scan " + f.name + (f.alias != f.name ? " AS " + f.alias : "") + " (" + std::to_string(table_rows(*f.table)) +
        " rows" + (plan.joins.empty() ? ")" : "; the fact table: the largest)"));
  }
  if (!plan.scan_filters.empty()) add("  filter: " + filters_text(plan.scan_filters));
  return lines;
}

}  // namespace gpuolap::sql
