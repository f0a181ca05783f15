// gpuolap groupby-ordered: ordered aggregation over a table stored sorted on
// its grouping keys, with every architecture, variant and knob of the GPU
// form selectable, its kernels timed (--timing), and a self-check of every
// architecture and variant against cpu-serial on the table (--selfcheck).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "gpuolap/error.hpp"
#include "groupby/ordered_aggregation.hpp"
#include "sql/result_format.hpp"
#include "table/database.hpp"
#include "table/date.hpp"

namespace gpuolap::cli {
namespace {

using groupby::ColumnView;
using groupby::OrderedInput;
using groupby::OrderedResult;
using groupby::ValueType;

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string item; std::getline(s, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

ColumnView view_of(const table::Column& c) {
  ColumnView v;
  v.name = c.name;
  v.nulls = c.nulls.empty() ? nullptr : c.nulls.data();
  switch (c.type) {
    case table::ColumnType::Int64:
      v.type = ValueType::Int64;
      v.values = c.int64s.data();
      break;
    case table::ColumnType::Double:
      v.type = ValueType::Double;
      v.values = c.doubles.data();
      break;
    default:
      v.type = ValueType::Int32;
      v.values = c.int32s.data();
      break;
  }
  return v;
}

// As `gpuolap sql` writes CSV: NULL an empty field, an empty string "",
// doubles with 17 significant digits, NaN and Infinity by name.
std::string field(const groupby::ResultColumn& r, std::size_t g, const table::Column* source) {
  if (r.is_null(g)) return "";
  if (r.type == ValueType::Double) return sql::double_text(r.doubles[g]);
  if (source && source->type == table::ColumnType::Date) return table::format_date(static_cast<std::int32_t>(r.ints[g]));
  if (source && source->type == table::ColumnType::String) {
    const std::string text(source->dictionary.at(r.ints[g]));
    return sql::csv_field(text, text.empty());
  }
  return fmt::format("{}", r.ints[g]);
}

bool same_results(const OrderedResult& a, const OrderedResult& b) {
  if (a.groups != b.groups) return false;
  auto same = [](const groupby::ResultColumn& x, const groupby::ResultColumn& y) {
    if (x.ints != y.ints || x.nulls != y.nulls || x.doubles.size() != y.doubles.size()) return false;
    for (std::size_t i = 0; i < x.doubles.size(); ++i) {
      const double p = x.doubles[i], q = y.doubles[i];
      if ((p != p) != (q != q)) return false;
      if (p != p || p == q) continue;
      // Double sums may differ in the last bits between orders of addition;
      // an infinity differs from anything but itself.
      if (!std::isfinite(p) || !std::isfinite(q) || std::abs(p - q) > 1e-9 * std::max(std::abs(p), std::abs(q)))
        return false;
    }
    return true;
  };
  for (std::size_t k = 0; k < a.keys.size(); ++k)
    if (!same(a.keys[k], b.keys[k])) return false;
  for (std::size_t i = 0; i < a.aggregates.size(); ++i)
    if (!same(a.aggregates[i], b.aggregates[i])) return false;
  return true;
}

void print_stages(const OrderedResult& r, double wall_ms) {
  double kernels = 0;
  for (const auto& [name, ms] : r.stage_ms) {
    std::cerr << fmt::format("  {:<34} {:>10.3f} ms\n", name, ms);
    if (name != "upload" && name != "download" && name != groupby::kHostColumnsStage) kernels += ms;
  }
  if (!r.stage_ms.empty()) std::cerr << fmt::format("  {:<34} {:>10.3f} ms\n", "on the GPU, without transfers", kernels);
  std::cerr << fmt::format("  {:<34} {:>10.3f} ms\n", "wall", wall_ms);
}

int selfcheck(const OrderedInput& input, const groupby::OrderedGpuOptions& options) {
  const OrderedResult want = groupby::aggregate_serial(input);
  int failures = 0;
  std::cout << "architecture,variant,local_size,intent,result,ms\n";
  for (const groupby::Architecture arch : groupby::all_architectures()) {
    const bool variants = groupby::takes_variant(arch);
    for (const groupby::Variant v : variants ? groupby::all_variants() : std::vector{groupby::Variant::PrivateVariable}) {
      groupby::OrderedGpuOptions o = options;
      o.architecture = arch;
      if (variants) o.variant = v;
      std::string verdict;
      groupby::OrderedPlan plan;
      double ms = 0;
      try {
        plan = groupby::choose_ordered_plan(input, o);
        const auto start = std::chrono::steady_clock::now();
        const OrderedResult got = groupby::aggregate_gpu(input, plan, o);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        verdict = same_results(want, got) ? "same as cpu-serial" : "DIFFERS from cpu-serial";
        if (!same_results(want, got)) ++failures;
      } catch (const InputError& e) {
        verdict = std::string("not applicable: ") + e.what();
      }
      std::cout << fmt::format("{},{},{},{},{},{:.3f}\n", groupby::architecture_name(arch),
                               variants ? groupby::variant_name(v) : "-", plan.local_size, plan.intent,
                               sql::csv_field(verdict), ms);
    }
  }
  std::cerr << (failures ? fmt::format("groupby-ordered selfcheck: {} setting(s) differ from cpu-serial\n", failures)
                         : std::string("groupby-ordered selfcheck: every setting equals cpu-serial\n"));
  return failures ? 1 : 0;
}

}  // namespace

int run_groupby_ordered(const GroupbyOrderedOptions& o) {
  table::Database database(o.db);
  const auto table = database.load(o.table);
  const std::vector<std::string> by = split_list(o.by);
  if (by.empty()) throw InputError("groupby-ordered: --by names no column");
  OrderedInput input;
  input.rows = table->row_count();
  std::vector<const table::Column*> key_sources;
  for (const std::string& name : by) {
    const table::Column* c = table->find(name);
    if (!c) throw InputError(fmt::format("groupby-ordered: table '{}' has no column '{}'", o.table, name));
    input.keys.push_back(view_of(*c));
    key_sources.push_back(c);
  }
  // The rows must come sorted on the keys: as stored (the table's recorded
  // order starts with them), or checked here.
  const auto& order = table->sort_order;
  const bool recorded = order.size() >= by.size() && std::equal(by.begin(), by.end(), order.begin());
  if (!recorded && !table::is_sorted_by(*table, by))
    throw InputError(fmt::format("groupby-ordered: table '{}' is not sorted on ({}); load it with --sort-by {} "
                                 "(ordered aggregation reads groups as runs of equal keys)",
                                 o.table, o.by, o.by));
  std::vector<std::string> names;
  for (const table::Column& c : table->columns) names.push_back(c.name);
  std::vector<int> value_columns;
  input.aggregates = groupby::parse_aggregates(o.aggregates, names, value_columns);
  std::vector<const table::Column*> aggregate_sources;
  for (int index : value_columns) input.values.push_back(view_of(table->columns[index]));
  for (const groupby::Aggregate& a : input.aggregates) {
    const table::Column* src = a.value >= 0 ? &table->columns[value_columns[a.value]] : nullptr;
    const bool sums = a.kind == groupby::AggregateKind::Sum || a.kind == groupby::AggregateKind::Avg;
    if (src && sums && (src->type == table::ColumnType::Date || src->type == table::ColumnType::String))
      throw InputError(fmt::format("groupby-ordered: {} of a {} column is undefined", groupby::aggregate_label(input, a),
                                   table::type_name(src->type)));
    // MIN/MAX give the column's own type back (a date, a string).
    const bool same_type = a.kind == groupby::AggregateKind::Min || a.kind == groupby::AggregateKind::Max;
    aggregate_sources.push_back(same_type ? src : nullptr);
  }
  groupby::check_input(input);

  groupby::OrderedGpuOptions options;
  if (!o.arch.empty() && o.arch != "auto") options.architecture = groupby::parse_architecture(o.arch);
  if (!o.variant.empty() && o.variant != "auto") options.variant = groupby::parse_variant(o.variant);
  if (o.local_size) options.local_size = o.local_size;
  if (o.intent) options.intent = o.intent;
  options.timing = o.timing;
  options.device = o.device;

  std::string engine = o.engine;
  const bool gpu_knobs = options.architecture || options.variant || options.local_size || options.intent;
  if (engine == "auto") engine = groupby::gpu_available() || gpu_knobs ? "gpu" : "cpu-parallel";
  if ((engine == "gpu" || o.selfcheck) && !groupby::gpu_available())
    throw InputError("groupby-ordered: the gpu engine (and --selfcheck) needs an NVIDIA GPU, and this machine has none "
                     "(--engine cpu-parallel runs on the CPU)");
  if (engine != "gpu" && gpu_knobs)
    throw InputError("groupby-ordered: --arch, --variant, --local-size and --intent choose the gpu engine's kernels; "
                     "the " + engine + " engine has none");
  if (o.selfcheck) return selfcheck(input, options);

  OrderedResult result;
  const auto start = std::chrono::steady_clock::now();
  groupby::OrderedPlan plan;
  if (engine == "gpu") {
    plan = groupby::choose_ordered_plan(input, options);
    for (int r = 0; r < std::max(1, o.repeat); ++r) result = groupby::aggregate_gpu(input, plan, options);
  } else if (engine == "cpu-parallel") {
    for (int r = 0; r < std::max(1, o.repeat); ++r) result = groupby::aggregate_parallel(input);
  } else {
    for (int r = 0; r < std::max(1, o.repeat); ++r) result = groupby::aggregate_serial(input);
  }
  const double wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                      std::max(1, o.repeat);

  std::string out;
  for (std::size_t k = 0; k < by.size(); ++k) out += (k ? "," : "") + sql::csv_field(by[k]);
  for (const auto& a : input.aggregates) out += "," + sql::csv_field(groupby::aggregate_label(input, a));
  out += '\n';
  for (std::size_t g = 0; g < result.groups; ++g) {
    for (std::size_t k = 0; k < result.keys.size(); ++k) out += (k ? "," : "") + field(result.keys[k], g, key_sources[k]);
    for (std::size_t a = 0; a < result.aggregates.size(); ++a) out += "," + field(result.aggregates[a], g, aggregate_sources[a]);
    out += '\n';
  }
  std::cout << out;
  std::cout.flush();
  if (o.timing) {
    std::cerr << fmt::format("groupby-ordered: {} rows, {} groups, engine {}\n", input.rows, result.groups, engine);
    if (engine == "gpu")
      std::cerr << fmt::format("  plan: {} / {} / local size {} / intent {} ({})\n",
                               groupby::architecture_name(plan.architecture),
                               groupby::takes_variant(plan.architecture) ? groupby::variant_name(plan.variant) : "-",
                               plan.local_size, plan.intent, plan.why);
    print_stages(result, wall);
  }
  return 0;
}

}  // namespace gpuolap::cli
