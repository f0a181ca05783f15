// A database's tables kept in memory once read: each table file is read
// the first time a query names it, later queries share the loaded table.
// `gpuolap sql --repeat` times the engine with the tables in memory through
// it (as DuckDB's in-memory times are), and a server can hold one per
// database.
#pragma once

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
  explicit CachedTables(const table::Database& db) : db_(db) {}
  std::vector<std::string> table_names() const override { return db_.table_names(); }
  // Thread-safe; a table is read from its file once.
  std::shared_ptr<const table::Table> load(const std::string& name) const override;

 private:
  const table::Database& db_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, std::shared_ptr<const table::Table>> loaded_;
};

}  // namespace gpuolap::sql
