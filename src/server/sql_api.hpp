#pragma once
// POST /sql: one SELECT (or EXPLAIN SELECT) over the tables of a database
// directory, read-only. The tables are read once and kept while their files
// stay the same (a `gpuolap table load` while serving is seen by the next
// query); the answer is the SQL result as JSON or CSV, as `gpuolap sql`
// prints it.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

#include "sql/cached_tables.hpp"
#include "sql/result_format.hpp"
#include "table/database.hpp"

namespace gpuolap::server {

class SqlApi {
 public:
  // `max_rows`: most rows of a result, of its groups and of the rows sorted.
  SqlApi(table::Database database, std::uint64_t max_rows) : tables_(std::move(database)), max_rows_(max_rows) {}

  // {"sql": text, "engine"?: "cpu-serial"|"cpu-parallel" (default cpu-parallel),
  //  "grouping_sets"?: "per-set"|"lattice"|"cube"|"auto"}: the result in `format`.
  // Bad SQL and everything `gpuolap sql` refuses are InputErrors.
  std::string run(const nlohmann::json& request, sql::ResultFormat format) const;
  // The database, its tables (name, rows, columns) and the row limit.
  nlohmann::json info() const;

 private:
  sql::CachedTables tables_;
  std::uint64_t max_rows_;
};

}  // namespace gpuolap::server
