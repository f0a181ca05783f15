// The binder: PostgreSQL's parse tree of one SELECT (or EXPLAIN SELECT)
// bound to the tables it names, with PostgreSQL's types, name resolution
// and grouping-set expansion. Anything outside the supported subset is an
// InputError naming the construct and its line and column.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sql/logical_query.hpp"
#include "sql/parse_tree.hpp"

namespace gpuolap::sql {

// Where table names are resolved: a database, or tables in memory (tests).
class TableCatalog {
 public:
  virtual ~TableCatalog() = default;
  virtual std::vector<std::string> table_names() const = 0;
  // `name` is one of table_names().
  virtual std::shared_ptr<const table::Table> load(const std::string& name) const = 0;
};

// Tables held in memory.
class TablesInMemory : public TableCatalog {
 public:
  void add(std::shared_ptr<const table::Table> table) { tables_.push_back(std::move(table)); }
  std::vector<std::string> table_names() const override;
  std::shared_ptr<const table::Table> load(const std::string& name) const override;

 private:
  std::vector<std::shared_ptr<const table::Table>> tables_;
};

LogicalQuery bind_query(const nlohmann::json& statement, const SourceText& source, const TableCatalog& catalog);

// The number of rows of a column (its vector of values).
std::size_t column_rows(const table::Column& column);
// The SQL type of a table column.
SqlType column_sql_type(table::ColumnType type);

}  // namespace gpuolap::sql
