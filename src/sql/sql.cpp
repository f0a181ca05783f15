#include "sql/sql.hpp"

#include "gpuolap/error.hpp"
#include "sql/cpu_parallel.hpp"
#include "sql/cube_route.hpp"
#include "sql/cpu_serial.hpp"
#include "sql/parse_tree.hpp"
#include "sql/plan.hpp"

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
  if (name == "auto") return std::nullopt;
  throw InputError("unknown grouping-sets method '" + std::string(name) + "': expected per-set, lattice or auto");
}

QueryResult run(const TableCatalog& tables, std::string_view text, const SqlOptions& options) {
  SourceText source{std::string(text)};
  LogicalQuery query = bind_query(parse_statement(source), source, tables);
  const bool gpu = options.engine == SqlEngine::Gpu;
  if (gpu) {
    const std::string refusal = cube_route_refusal(query);
    if (!refusal.empty())
      throw InputError("the gpu engine answers a GROUP BY (ROLLUP, CUBE, GROUPING SETS) of columns of one table, "
                       "without WHERE, with COUNT/SUM/MIN/MAX/AVG of columns; this query does not fit: " + refusal +
                       " (--engine cpu-parallel answers it)");
    if (options.grouping_sets)
      throw InputError("--grouping-sets chooses how the CPU engines compute grouping sets; the gpu engine uses the cube "
                       "operator's lattice");
  }
  PhysicalPlan plan;
  if (!gpu) plan = plan_query(query, source, PlanOptions{options.engine, options.grouping_sets});
  std::vector<std::string> lines = gpu ? cube_route_plan(query) : explain_lines(query, plan);
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
  QueryResult r = gpu ? run_cube_route(query, source, limits)
                 : options.engine == SqlEngine::CpuParallel ? run_cpu_parallel(query, plan, source, limits)
                                                            : run_cpu_serial(query, plan, source, limits);
  r.plan = std::move(lines);
  return r;
}

QueryResult run(const table::Database& database, std::string_view text, const SqlOptions& options) {
  return run(DatabaseTables(database), text, options);
}

}  // namespace gpuolap::sql
