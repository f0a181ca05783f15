#pragma once
// POST /sql: one SELECT (or EXPLAIN SELECT) over the tables of a database
// directory, read-only. The tables are read once and kept while their files
// stay the same (a `gpuolap table load` while serving is seen by the next
// query); the answer is the SQL result as JSON or CSV, as `gpuolap sql`
// prints it.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sql/binder.hpp"
#include "sql/result_format.hpp"
#include "table/database.hpp"

namespace gpuolap::server {

// The tables of a database, each read from its file once and kept until the
// file changes (its size or modification time). Safe from many threads.
class KeptTables : public sql::TableCatalog {
 public:
  explicit KeptTables(table::Database database) : database_(std::move(database)) {}
  const table::Database& database() const { return database_; }
  std::vector<std::string> table_names() const override { return database_.table_names(); }
  std::shared_ptr<const table::Table> load(const std::string& name) const override;

 private:
  struct Kept {
    std::filesystem::file_time_type modified;
    std::uintmax_t bytes = 0;
    std::shared_ptr<const table::Table> table;
  };
  table::Database database_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Kept> kept_;
};

class SqlApi {
 public:
  // `max_rows`: most rows of a result, of its groups and of the rows sorted.
  SqlApi(table::Database database, std::uint64_t max_rows) : tables_(std::move(database)), max_rows_(max_rows) {}

  // {"sql": text, "engine"?: "cpu-serial"|"cpu-parallel" (default cpu-parallel),
  //  "grouping_sets"?: "per-set"|"lattice"|"auto"}: the result in `format`.
  // Bad SQL and everything `gpuolap sql` refuses are InputErrors.
  std::string run(const nlohmann::json& request, sql::ResultFormat format) const;
  // The database, its tables (name, rows, columns) and the row limit.
  nlohmann::json info() const;

 private:
  KeptTables tables_;
  std::uint64_t max_rows_;
};

}  // namespace gpuolap::server
