// gpuolap optimize, groupby-shared and join-shared: the memory-contention
// paper's placement optimizer over a table's column (stored beside the
// table), and its two operators, grouped aggregation (Q2) and the
// foreign-key join (Q1), with every variant selectable, timed (--timing)
// and checked against cpu-serial (--selfcheck).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "commands.hpp"
#include "gpuolap/error.hpp"
#include "groupby/shared_memory/placement_file.hpp"
#include "groupby/shared_memory/shared_aggregation.hpp"
#include "sql/result_format.hpp"
#include "table/database.hpp"
#include "table/date.hpp"

namespace gpuolap::cli {
namespace {

using namespace groupby;

const table::Column& column_of(const table::Table& t, const std::string& name, const std::string& what) {
  const table::Column* c = t.find(name);
  if (!c) throw InputError(fmt::format("{}: table '{}' has no column '{}'", what, t.name, name));
  return *c;
}

// A column of dense codes 0..C-1: integers (C = the largest + 1), strings
// (C = the dictionary's size: codes are dense) or dates from 1970 on.
std::vector<std::uint32_t> codes_of(const table::Column& c, std::uint32_t& cardinality, const std::string& what) {
  if (c.type == table::ColumnType::Double)
    throw InputError(fmt::format("{}: column '{}' is double; codes are integers, strings or dates", what, c.name));
  const std::size_t n = c.size();
  std::vector<std::uint32_t> codes(n);
  std::uint64_t top = 0;
  for (std::size_t r = 0; r < n; ++r) {
    if (c.is_null(r))
      throw InputError(fmt::format("{}: column '{}', row {}: NULL is not a code (the operator needs every row coded)",
                                   what, c.name, r + 1));
    const std::int64_t v = c.type == table::ColumnType::Int64 ? c.int64s[r] : c.int32s[r];
    if (v < 0 || v >= (std::int64_t{1} << 24))
      throw InputError(fmt::format("{}: column '{}', row {}: {} is not a code from 0 to 2^24 - 1", what, c.name,
                                   r + 1, v));
    codes[r] = static_cast<std::uint32_t>(v);
    top = std::max<std::uint64_t>(top, codes[r] + std::uint64_t{1});
  }
  if (c.type == table::ColumnType::String) top = std::max<std::uint64_t>(top, c.dictionary.size());
  cardinality = static_cast<std::uint32_t>(std::max<std::uint64_t>(top, 1));
  return codes;
}

// A value column as the operators take it: doubles, or integers that fit 4
// bytes (the paper's column width; int64 sums of them are exact).
struct Values {
  SharedValueType type = SharedValueType::Double;
  std::vector<double> doubles;
  std::vector<std::int32_t> ints;
  const void* data() const { return type == SharedValueType::Double ? static_cast<const void*>(doubles.data()) : ints.data(); }
};
Values values_of(const table::Column& c, const std::string& what) {
  Values v;
  for (std::size_t r = 0; r < c.size(); ++r)
    if (c.is_null(r))
      throw InputError(fmt::format("{}: column '{}', row {}: NULL values are not supported by this operator", what,
                                   c.name, r + 1));
  if (c.type == table::ColumnType::Double) {
    v.doubles = c.doubles;
    return v;
  }
  if (c.type != table::ColumnType::Int64)
    throw InputError(fmt::format("{}: column '{}' is {}; SUM needs an integer or double column", what, c.name,
                                 table::type_name(c.type)));
  v.type = SharedValueType::Int32;
  v.ints.resize(c.size());
  for (std::size_t r = 0; r < c.size(); ++r) {
    const std::int64_t x = c.int64s[r];
    if (x < std::numeric_limits<std::int32_t>::min() || x > std::numeric_limits<std::int32_t>::max())
      throw InputError(fmt::format("{}: column '{}', row {}: {} does not fit the operator's 4-byte integers", what,
                                   c.name, r + 1, x));
    v.ints[r] = static_cast<std::int32_t>(x);
  }
  return v;
}

// The shape the options ask for. For the operators, threads a block left
// at 0 stay 0 (the kernel picks them by its shared memory); a placement's
// shape records 512 then (threads do not change its chunks).
LaunchShape shape_of(const SharedCommandOptions& o, int word_bytes, bool for_kernel) {
  LaunchShape s;
  s.block_threads = o.block_threads ? o.block_threads : (for_kernel ? 0 : 512);
  if (o.rows_per_block) s.rows_per_block = o.rows_per_block;
  s.word_bytes = word_bytes;
  LaunchShape checked = s;
  if (checked.block_threads == 0) checked.block_threads = 1024;
  check_shape(checked);
  return s;
}

void print_placement_stats(const Placement& p, std::ostream& out) {
  const PlacementStats& s = p.stats;
  out << fmt::format("placement for {}s: {}; budget {}, window {}\n", placement_goal_name(p.goal), describe(p.shape),
                     p.budget == 0 ? std::string("unbounded") : fmt::format("{}", p.budget), p.window);
  out << fmt::format("  values {}, slots {} ({} rows of {} banks), copies a value {:.3f}, most copies of one value {}, "
                     "replicated values {}, copies the budget refused {}\n",
                     p.cardinality, s.slots, s.slots / p.banks(), p.banks(), s.copies_per_value, s.max_copies,
                     s.replicated_values, s.budget_refusals);
  out << fmt::format("  per chunk ({} chunks)      distinct banks  read rounds  write rounds  read-conflicted  "
                     "write-conflicted  window conflicts\n",
                     s.chunks);
  for (const auto& [name, c] : {std::pair{"before", s.before}, std::pair{"after", s.after}})
    out << fmt::format("  {:<24} {:>15.2f} {:>12.2f} {:>13.2f} {:>16} {:>17} {:>17}\n", name, c.distinct_banks,
                       c.read_rounds, c.write_rounds, c.read_conflicted_chunks, c.write_conflicted_chunks,
                       c.window_conflicts);
  out << fmt::format("  optimization {:.3f} s on {} threads\n", s.seconds, s.threads);
}

// The stored placement of table.column for `goal`, current for this table
// file and made for `shape`; otherwise one made now (said on stderr), or
// nullopt when none is stored.
std::optional<Placement> placement_for(const table::Database& db, const std::string& table, const std::string& column,
                                       PlacementGoal goal, const LaunchShape& shape,
                                       const std::vector<std::uint32_t>& codes, std::uint32_t cardinality,
                                       const std::string& what) {
  auto stored = load_placement(db.dir(), table, column, goal);
  if (!stored) return std::nullopt;
  const bool current = stored->table_stamp == table_file_stamp(db.table_path(table)) &&
                       stored->placement.column.size() == codes.size() && stored->placement.cardinality == cardinality;
  if (current && same_chunks(stored->placement.shape, shape)) {
    // Every row must name a copy of its own value: a file edited and
    // re-checksummed would otherwise give wrong groups, not an error.
    try {
      check_placement(stored->placement, codes);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", placement_path(db.dir(), table, column, goal).string(), e.what()));
    }
    return std::move(stored->placement);
  }
  PlacementOptions o;
  o.goal = goal;
  o.shape = shape;
  if (o.shape.block_threads == 0) o.shape.block_threads = stored->placement.shape.block_threads;
  o.budget = stored->placement.budget;
  o.window = stored->placement.window;
  std::cerr << fmt::format("{}: the stored placement of {}.{} was made {}; re-planned for {} (not stored: run "
                           "gpuolap optimize to keep it)\n",
                           what, table, column,
                           current ? fmt::format("for {}", describe(stored->placement.shape))
                                   : std::string("for another version of the table"),
                           describe(shape));
  return optimize_placement(codes, cardinality, o);
}

// The gpu engine's options from the command's.
SharedGpuOptions gpu_options_of(const SharedCommandOptions& o, const LaunchShape& shape) {
  SharedGpuOptions go;
  go.shape = shape;
  go.copies = o.copies;
  go.device = o.device;
  go.timing = o.timing;
  return go;
}

[[noreturn]] void no_placement(const std::string& what, const SharedCommandOptions& o, const std::string& column,
                               PlacementGoal goal) {
  const std::string_view g = placement_goal_name(goal);
  throw InputError(fmt::format("{}: no placement of {}.{} for {}s: run gpuolap optimize --db {} --table {} --column {} "
                               "--for {}",
                               what, o.table, column, g, o.db, o.table, column, g));
}

void print_stages(const std::vector<std::pair<std::string, double>>& stages, const std::string& plan, double wall) {
  std::cerr << "  plan: " << plan << "\n";
  for (const auto& [name, ms] : stages) std::cerr << fmt::format("  {:<20} {:>10.3f} ms\n", name, ms);
  std::cerr << fmt::format("  {:<20} {:>10.3f} ms\n", "wall", wall);
}

std::string key_text(const table::Column& key, std::uint32_t code) {
  if (key.type == table::ColumnType::String) {
    const std::string text(key.dictionary.at(code));
    return sql::csv_field(text, text.empty());
  }
  if (key.type == table::ColumnType::Date) return table::format_date(static_cast<std::int32_t>(code));
  return fmt::format("{}", code);
}

bool same(const GroupedResult& a, const GroupedResult& b) {
  if (a.count != b.count || a.sum_ints != b.sum_ints || a.sum_doubles.size() != b.sum_doubles.size()) return false;
  for (std::size_t g = 0; g < a.sum_doubles.size(); ++g) {
    const double p = a.sum_doubles[g], q = b.sum_doubles[g];
    if (p == q || (p != p && q != q)) continue;
    if (std::abs(p - q) > 1e-9 * std::max(std::abs(p), std::abs(q))) return false;
  }
  for (std::size_t g = 0; g < a.count.size(); ++g) {
    if (a.count[g] == 0) continue;
    if (!a.min_ints.empty() && (a.min_ints[g] != b.min_ints[g] || a.max_ints[g] != b.max_ints[g])) return false;
    if (!a.min_doubles.empty() &&
        (std::memcmp(&a.min_doubles[g], &b.min_doubles[g], 8) != 0 || std::memcmp(&a.max_doubles[g], &b.max_doubles[g], 8) != 0))
      return false;
  }
  return true;
}

}  // namespace

int run_optimize(const OptimizeOptions& o) {
  const table::Database db(o.db);
  if (o.show) {
    // The stored placement's statistics, and whether it is current.
    const PlacementGoal goal = parse_placement_goal(o.goal);
    const auto stored = load_placement(db.dir(), o.table, o.column, goal);
    if (!stored)
      throw InputError(fmt::format("optimize: no placement of {}.{} for {}s in {}", o.table, o.column,
                                   placement_goal_name(goal), o.db));
    print_placement_stats(stored->placement, std::cout);
    const bool current = db.has_table(o.table) && stored->table_stamp == table_file_stamp(db.table_path(o.table));
    std::cout << (current ? "current: made for this version of the table\n"
                          : "stale: the table changed since; queries re-plan in memory until gpuolap optimize "
                            "runs again\n");
    return 0;
  }
  const auto t = db.load(o.table);
  std::uint32_t cardinality = 0;
  const auto codes = codes_of(column_of(*t, o.column, "optimize"), cardinality, "optimize");
  PlacementOptions po;
  po.goal = parse_placement_goal(o.goal);
  po.shape = shape_of(o, o.word_bytes ? o.word_bytes : (po.goal == PlacementGoal::Write ? 8 : 4), false);
  if (o.budget == "unbounded") {
    po.budget = 0;
  } else {
    try {
      std::size_t used = 0;
      po.budget = std::stod(o.budget, &used);
      if (used != o.budget.size()) throw std::invalid_argument(o.budget);
    } catch (const std::exception&) {
      throw InputError(fmt::format("optimize: --budget is copies a value on average (at least 1) or 'unbounded', not '{}'", o.budget));
    }
  }
  po.window = o.window;
  po.threads = o.threads;
  StoredPlacement s;
  s.table = o.table;
  s.column = o.column;
  s.table_stamp = table_file_stamp(db.table_path(o.table));
  s.placement = optimize_placement(codes, cardinality, po);
  store_placement(db.dir(), s);
  print_placement_stats(s.placement, std::cout);
  std::cout << fmt::format("stored {}\n", placement_path(db.dir(), s.table, s.column, po.goal).string());
  return 0;
}

int run_groupby_shared(const SharedCommandOptions& o) {
  const std::string what = "groupby-shared";
  const table::Database db(o.db);
  const auto t = db.load(o.table);
  const table::Column& key = column_of(*t, o.by, what);
  std::uint32_t cardinality = 0;
  const auto codes = codes_of(key, cardinality, what);
  Values values;
  GroupedInput in;
  in.rows = codes.size();
  in.groups = cardinality;
  in.codes = codes.data();
  if (!o.sum.empty()) {
    values = values_of(column_of(*t, o.sum, what), what);
    in.value_type = values.type;
    in.values = values.data();
    in.min_max = o.min_max;
  } else if (o.min_max) {
    throw InputError("groupby-shared: --min-max needs --sum's column");
  }
  const LaunchShape shape = shape_of(o, grouped_word_bytes(in), true);
  const bool gpu = o.engine == "gpu" || (o.engine == "auto" && shared_gpu_available());
  if ((gpu || o.selfcheck) && !shared_gpu_available())
    throw InputError("groupby-shared: the gpu engine (and --selfcheck) needs an NVIDIA GPU, and this machine has none "
                     "(--engine cpu-serial runs on the CPU)");
  // The placement matters only to the gpu engine's placement variant (and
  // auto, which prefers it, and the self-check, which runs it).
  const bool wants_placement = o.selfcheck || (gpu && (o.variant == "auto" || o.variant == "placement"));
  const auto placement = wants_placement ? placement_for(db, o.table, o.by, PlacementGoal::Write, shape, codes,
                                                         cardinality, what)
                                         : std::nullopt;
  SharedGpuOptions go = gpu_options_of(o, shape);
  auto run_variant = [&](SharedVariant v) {
    GroupedInput run = in;
    if (v == SharedVariant::Placement) {
      if (!placement) no_placement(what, o, o.by, PlacementGoal::Write);
      run.codes = placement->column.data();
      run.placement = &*placement;
    }
    go.variant = v;
    return grouped_gpu(run, go);
  };
  if (o.selfcheck) {
    const GroupedResult want = grouped_cpu(in);
    int failures = 0;
    std::cout << "variant,result,plan\n";
    for (SharedVariant v : all_shared_variants()) {
      if (v == SharedVariant::Placement && !placement) continue;
      try {
        const GroupedResult got = run_variant(v);
        const bool ok = same(want, got);
        failures += !ok;
        std::cout << fmt::format("{},{},\"{}\"\n", shared_variant_name(v), ok ? "equal" : "DIFFERENT", got.plan);
      } catch (const InputError& e) {
        std::cout << fmt::format("{},refused,\"{}\"\n", shared_variant_name(v), e.what());
      }
    }
    return failures ? 1 : 0;
  }
  std::string why = "asked for";
  const SharedVariant variant =
      o.variant != "auto" ? parse_shared_variant(o.variant) : choose_shared_variant(in, placement.has_value(), why);
  GroupedResult r;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < std::max(1, o.repeat); ++i) r = gpu ? run_variant(variant) : grouped_cpu(in);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                      std::max(1, o.repeat);
  std::string out = sql::csv_field(o.by) + ",count";
  if (in.values) out += ",sum(" + o.sum + ")";
  if (in.min_max) out += ",min(" + o.sum + "),max(" + o.sum + ")";
  out += '\n';
  const bool ints = in.value_type == SharedValueType::Int32;
  for (std::uint32_t g = 0; g < cardinality; ++g) {
    if (r.count[g] == 0) continue;
    out += key_text(key, g) + fmt::format(",{}", r.count[g]);
    if (in.values) out += "," + (ints ? fmt::format("{}", r.sum_ints[g]) : sql::double_text(r.sum_doubles[g]));
    if (in.min_max)
      out += ints ? fmt::format(",{},{}", r.min_ints[g], r.max_ints[g])
                  : "," + sql::double_text(r.min_doubles[g]) + "," + sql::double_text(r.max_doubles[g]);
    out += '\n';
  }
  std::cout << out;
  std::cout.flush();
  if (o.timing) {
    std::cerr << fmt::format("groupby-shared: {} rows, {} codes, engine {}\n", in.rows, cardinality, gpu ? "gpu" : "cpu-serial");
    if (gpu) std::cerr << fmt::format("  variant {}: {}\n", shared_variant_name(variant), why);
    print_stages(r.stage_ms, r.plan, wall);
  }
  return 0;
}

int run_join_shared(const SharedCommandOptions& o) {
  const std::string what = "join-shared";
  const table::Database db(o.db);
  const auto f = db.load(o.table);
  const auto d = db.load(o.dim);
  std::uint32_t fk_cardinality = 0;
  const auto keys = codes_of(column_of(*f, o.fk, what), fk_cardinality, what);
  // The dimension by id: ids 0..n-1, each once (the paper's dense coding).
  const table::Column& id = column_of(*d, o.id, what);
  const Values b = values_of(column_of(*d, o.value, what), what);
  const std::size_t n = d->row_count();
  if (n == 0 || n > (std::size_t{1} << 24))
    throw InputError(fmt::format("{}: the dimension '{}' must have from 1 to 2^24 rows, not {}", what, o.dim, n));
  Values by_id;
  by_id.type = b.type;
  by_id.ints.resize(b.type == SharedValueType::Int32 ? n : 0);
  by_id.doubles.resize(b.type == SharedValueType::Double ? n : 0);
  std::vector<std::uint8_t> seen(n, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::int64_t k = id.type == table::ColumnType::Int64 && !id.is_null(r) ? id.int64s[r] : -1;
    if (k < 0 || static_cast<std::size_t>(k) >= n || seen[k])
      throw InputError(fmt::format("{}: {}.{}, row {}: the ids must be the integers 0..{} each once (dense codes)",
                                   what, o.dim, o.id, r + 1, n - 1));
    seen[k] = 1;
    if (b.type == SharedValueType::Int32) by_id.ints[k] = b.ints[r];
    else by_id.doubles[k] = b.doubles[r];
  }
  JoinInput in;
  in.rows = keys.size();
  in.keys = keys.data();
  in.dim_rows = static_cast<std::uint32_t>(n);
  in.value_type = by_id.type;
  in.dim_values = by_id.data();
  const LaunchShape shape = shape_of(o, join_word_bytes(in), true);
  const bool gpu = o.engine == "gpu" || (o.engine == "auto" && shared_gpu_available());
  if ((gpu || o.selfcheck) && !shared_gpu_available())
    throw InputError("join-shared: the gpu engine (and --selfcheck) needs an NVIDIA GPU, and this machine has none "
                     "(--engine cpu-serial runs on the CPU)");
  // The placement is over the foreign keys' codes, all of them below the
  // dimension's size (a key without a match has no copy to name).
  std::optional<Placement> placement;
  const bool wants_placement = o.selfcheck || (gpu && o.variant == "placement");
  if (wants_placement && fk_cardinality <= n)
    placement = placement_for(db, o.table, o.fk, PlacementGoal::Read, shape, keys, fk_cardinality, what);
  SharedGpuOptions go = gpu_options_of(o, shape);
  auto run_variant = [&](SharedVariant v) {
    JoinInput run = in;
    if (v == SharedVariant::Placement) {
      if (!placement) no_placement(what, o, o.fk, PlacementGoal::Read);
      run.keys = placement->column.data();
      run.placement = &*placement;
    }
    go.variant = v;
    return join_gpu(run, go);
  };
  auto text = [&](const JoinResult& r) {
    return in.value_type == SharedValueType::Int32 ? fmt::format("{},{}", r.matched, r.sum_int)
                                                   : fmt::format("{},{}", r.matched, sql::double_text(r.sum_double));
  };
  if (o.selfcheck) {
    const JoinResult want = join_cpu(in);
    int failures = 0;
    std::cout << "variant,result,plan\n";
    for (SharedVariant v : all_shared_variants()) {
      if (!join_has_variant(v) || (v == SharedVariant::Placement && !placement)) continue;
      try {
        const JoinResult got = run_variant(v);
        const bool ok = got.matched == want.matched && got.sum_int == want.sum_int &&
                        std::abs(got.sum_double - want.sum_double) <= 1e-9 * std::abs(want.sum_double);
        failures += !ok;
        std::cout << fmt::format("{},{},\"{}\"\n", shared_variant_name(v), ok ? "equal" : "DIFFERENT", got.plan);
      } catch (const InputError& e) {
        std::cout << fmt::format("{},refused,\"{}\"\n", shared_variant_name(v), e.what());
      }
    }
    return failures ? 1 : 0;
  }
  SharedVariant variant = SharedVariant::OneCopy;
  if (o.variant != "auto") variant = parse_shared_variant(o.variant);
  JoinResult r;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < std::max(1, o.repeat); ++i) r = gpu ? run_variant(variant) : join_cpu(in);
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                      std::max(1, o.repeat);
  std::cout << "count,sum(" << o.dim << "." << o.value << ")\n" << text(r) << "\n";
  std::cout.flush();
  if (o.timing) {
    std::cerr << fmt::format("join-shared: {} rows, {} dimension rows, engine {}\n", in.rows, n, gpu ? "gpu" : "cpu-serial");
    print_stages(r.stage_ms, r.plan, wall);
  }
  return 0;
}

}  // namespace gpuolap::cli
