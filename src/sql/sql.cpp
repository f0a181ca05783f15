#include "sql/sql.hpp"

#include "gpuolap/error.hpp"
#include "sql/cpu_parallel.hpp"
#include "sql/cube_route.hpp"
#include "sql/cpu_serial.hpp"
#include "sql/ordered_route.hpp"
#include "sql/parse_tree.hpp"
#include "sql/plan.hpp"
#include "sql/shared_route.hpp"

namespace gpuolap::sql {

namespace {

// A database's tables, each read from its file when a query names it.
class DatabaseTables : public TableCatalog {
 public:
  explicit DatabaseTables(const table::Database& db) : db_(db) {}
  std::vector<std::string> table_names() const override { return db_.table_names(); }
  std::shared_ptr<const table::Table> load(const std::string& name) const override { return db_.load(name); }

 private:
  const table::Database& db_;
};

}  // namespace

SqlEngine parse_engine(std::string_view name) {
  if (name == "cpu-serial") return SqlEngine::CpuSerial;
  if (name == "cpu-parallel") return SqlEngine::CpuParallel;
  if (name == "gpu") return SqlEngine::Gpu;
  throw InputError("unknown SQL engine '" + std::string(name) + "': expected cpu-serial, cpu-parallel or gpu");
}

std::optional<GroupingSetsMethod> parse_grouping_sets(std::string_view name) {
  if (name == "per-set") return GroupingSetsMethod::PerSet;
  if (name == "lattice") return GroupingSetsMethod::Lattice;
  if (name == "cube") return GroupingSetsMethod::Cube;
  if (name == "auto") return std::nullopt;
  throw InputError("unknown grouping-sets method '" + std::string(name) + "': expected per-set, lattice, cube or auto");
}

namespace {

// Whether the full-cube operator answers `query` before any planning: on
// the gpu engine always (it answers nothing else), on cpu-parallel when
// asked (--grouping-sets cube); cpu-serial, the oracle, keeps its own
// operators. (cpu-parallel's auto may choose it after planning.)
// Throws, naming `who` and what does not fit, unless the cube operator
// takes `query`.
void require_cube_route(const LogicalQuery& query, const std::string& who, const std::string& instead) {
  const std::string refusal = cube_route_refusal(query);
  if (!refusal.empty())
    throw InputError(who + " answers a GROUP BY (ROLLUP, CUBE, GROUPING SETS) of columns of one table, without WHERE, "
                     "with COUNT/SUM/MIN/MAX/AVG of columns; this query does not fit: " + refusal + " (" + instead +
                     " answers it)");
}

std::optional<cube::Algorithm> cube_route_of(const LogicalQuery& query, const SqlOptions& options) {
  const bool asked = options.grouping_sets == GroupingSetsMethod::Cube;
  if (options.engine == SqlEngine::Gpu) {
    require_cube_route(query, "the gpu engine", "--engine cpu-parallel");
    if (options.grouping_sets)
      throw InputError("--grouping-sets chooses how the CPU engines compute grouping sets; the gpu engine uses the cube "
                       "operator's lattice");
    return cube::Algorithm::GpuLattice;
  }
  if (options.engine == SqlEngine::CpuSerial) {
    if (asked)
      throw InputError("--grouping-sets cube runs on --engine cpu-parallel; cpu-serial, the oracle, computes grouping "
                       "sets per-set or by the lattice");
    return std::nullopt;
  }
  if (asked) {
    require_cube_route(query, "--grouping-sets cube", "--grouping-sets auto");
    return cube::Algorithm::CpuPartitioned;
  }
  return std::nullopt;
}

// cpu-parallel's auto: the cube operator for a GROUP BY of one table's
// columns where the planned hash aggregation would feed a set from the rows
// through a hash table (its keys' space past the array budget): at 5 M rows,
// ROLLUP x ROLLUP (12 sets) took 1.76 s there against 0.68 s by the cube,
// and the plain GROUP BY of its 5 columns 1.35 s against 0.92 s (one
// `gpuolap sql` each, the coding included). Where every fed set indexes an
// array, or the rows come sorted (ordered aggregation), the planned plan is
// as fast or faster and needs no coding pass. Returns why, or "".
std::string cube_under_auto(const LogicalQuery& query, const SqlOptions& options, const PhysicalPlan& plan) {
  if (options.engine != SqlEngine::CpuParallel || options.grouping_sets ||
      plan.aggregation != AggregationMethod::Hash || !cube_route_refusal(query).empty())
    return {};
  for (std::size_t s : plan.fed_sets) {
    if (s >= plan.perfect_hashes.size()) continue;
    const PerfectHash& h = plan.perfect_hashes[s];
    if (h.slots == 0 || h.hashed)
      return "auto: the hash aggregation would feed a set from the rows through a hash table (" +
             (h.slots == 0 ? std::string("no perfect hash") : std::to_string(h.slots) + " ids") +
             "); the cube operator codes the keys densely";
  }
  return {};
}

}  // namespace

QueryResult run(const TableCatalog& tables, std::string_view text, const SqlOptions& options) {
  SourceText source{std::string(text)};
  LogicalQuery query = bind_query(parse_statement(source), source, tables);
  // The gpu engine: ordered aggregation where the table is stored sorted on
  // the grouping keys (a group is a run: no hash table, no atomics on hot
  // groups), else the shared-memory operators where the query and its data
  // fit them, else the cube operator's route.
  const bool gpu = options.engine == SqlEngine::Gpu && !options.grouping_sets;
  const std::string ordered_refusal = gpu ? ordered_route_refusal(query) : std::string();
  const bool ordered = gpu && ordered_refusal.empty();
  const std::string shared_refusal = gpu && !ordered ? shared_route_refusal(query) : std::string();
  const bool shared = gpu && !ordered && shared_refusal.empty();
  std::optional<cube::Algorithm> cube;
  PhysicalPlan plan;
  std::vector<std::string> lines;
  if (ordered) {
    lines = ordered_route_plan(query);
  } else if (shared) {
    lines = shared_route_plan(query);
    lines.insert(lines.begin() + 1, "  not ordered aggregation: " + ordered_refusal);
  } else {
    try {
      cube = cube_route_of(query, options);
    } catch (const InputError& e) {
      if (!gpu) throw;
      throw InputError(std::string(e.what()) + "; nor do the shared-memory operators (a GROUP BY of one coded "
                       "column, an aggregate over a join to a dense dimension): " + shared_refusal);
    }
    std::string why_cube;
    if (!cube) {
      plan = plan_query(query, source, PlanOptions{options.engine, options.grouping_sets});
      why_cube = cube_under_auto(query, options, plan);
      if (!why_cube.empty()) cube = cube::Algorithm::CpuPartitioned;
    }
    lines = cube ? cube_route_plan(query, *cube) : explain_lines(query, plan);
    if (!why_cube.empty()) lines.insert(lines.begin() + 1, "  " + why_cube);
    if (gpu) {
      lines.insert(lines.begin() + 1, "  not the shared-memory operators: " + shared_refusal);
      lines.insert(lines.begin() + 1, "  not ordered aggregation: " + ordered_refusal);
    }
  }
  if (query.explain) {
    QueryResult r;
    r.names = {"QUERY PLAN"};
    ValueVector column(SqlType::String);
    for (const auto& line : lines) column.push_string(line);
    r.rows = lines.size();
    r.columns.push_back(std::move(column));
    r.plan = std::move(lines);
    return r;
  }
  const ExecutionLimits limits{options.max_rows};
  QueryResult r = ordered ? run_ordered_route(query, source, limits)
                  : shared ? run_shared_route(query, source, limits)
                  : cube ? run_cube_route(query, *cube, source, limits)
                  : options.engine == SqlEngine::CpuParallel ? run_cpu_parallel(query, plan, source, limits)
                                                             : run_cpu_serial(query, plan, source, limits);
  r.plan = std::move(lines);
  return r;
}

QueryResult run(const table::Database& database, std::string_view text, const SqlOptions& options) {
  return run(DatabaseTables(database), text, options);
}

}  // namespace gpuolap::sql
