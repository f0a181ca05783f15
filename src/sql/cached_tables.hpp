// A database's tables kept in memory once read: each table file is read
// the first time a query names it, and later queries share the loaded table
// for as long as its file stays the same (its size and modification time),
// so a `gpuolap table load` while a server runs is seen by the next query.
// `gpuolap sql --repeat` times the engine with the tables in memory through
// it (as DuckDB's in-memory times are); the server holds one per database.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sql/binder.hpp"
#include "table/database.hpp"

namespace gpuolap::sql {

class CachedTables : public TableCatalog {
 public:
  explicit CachedTables(table::Database db) : db_(std::move(db)) {}
  const table::Database& database() const { return db_; }
  std::vector<std::string> table_names() const override { return db_.table_names(); }
  // Thread-safe; a table is read from its file once per version of the file.
  std::shared_ptr<const table::Table> load(const std::string& name) const override;

 private:
  struct Loaded {
    std::filesystem::file_time_type modified;
    std::uintmax_t bytes = 0;
    std::shared_ptr<const table::Table> table;
  };
  table::Database db_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, Loaded> loaded_;
};

}  // namespace gpuolap::sql
