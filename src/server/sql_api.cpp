#include "sql_api.hpp"

#include <fmt/format.h>

#include "gpuolap/error.hpp"
#include "sql/sql.hpp"

namespace gpuolap::server {

using nlohmann::json;

namespace {

std::string string_field(const json& request, const char* key, const std::string& fallback) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (!it->is_string()) throw InputError(fmt::format("sql: \"{}\" must be a string", key));
  return it->get<std::string>();
}

}  // namespace

std::string SqlApi::run(const json& request, sql::ResultFormat format) const {
  for (const auto& [key, _] : request.items())
    if (key != "sql" && key != "engine" && key != "grouping_sets")
      throw InputError(fmt::format("sql: unknown field \"{}\" (expected sql, engine, grouping_sets)", key));
  if (!request.contains("sql")) throw InputError("sql: missing \"sql\", the query's text");
  const std::string text = string_field(request, "sql", "");
  sql::SqlOptions options;
  options.engine = sql::parse_engine(string_field(request, "engine", "cpu-parallel"));
  options.grouping_sets = sql::parse_grouping_sets(string_field(request, "grouping_sets", "auto"));
  options.max_rows = max_rows_;
  return sql::format_result(sql::run(tables_, text, options), format);
}

json SqlApi::info() const {
  json tables = json::array();
  for (const std::string& name : tables_.table_names()) {
    const table::TableSummary s = tables_.database().summary(name);
    json columns = json::array();
    for (const auto& c : s.columns) columns.push_back({{"name", c.name}, {"type", table::type_name(c.type)}});
    tables.push_back({{"name", s.name}, {"rows", s.rows}, {"columns", std::move(columns)}});
  }
  return json{{"database", tables_.database().dir().string()}, {"tables", std::move(tables)}, {"max_rows", max_rows_}};
}

}  // namespace gpuolap::server
