#pragma once
// Small tables in memory for the SQL tests, and a query's answer as CSV.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sql/result_format.hpp"
#include "sql/sql.hpp"
#include "table/table.hpp"

namespace gpuolap::testing {

using OptInt = std::optional<std::int64_t>;
using OptDouble = std::optional<double>;
using OptString = std::optional<std::string>;

inline table::Column int_column(std::string name, const std::vector<OptInt>& values) {
  table::Column c;
  c.name = std::move(name);
  c.type = table::ColumnType::Int64;
  for (const auto& v : values) {
    c.int64s.push_back(v.value_or(0));
    c.nulls.push_back(!v);
  }
  return c;
}

inline table::Column double_column(std::string name, const std::vector<OptDouble>& values) {
  table::Column c;
  c.name = std::move(name);
  c.type = table::ColumnType::Double;
  for (const auto& v : values) {
    c.doubles.push_back(v.value_or(0));
    c.nulls.push_back(!v);
  }
  return c;
}

// Dates as days since 1970-01-01.
inline table::Column date_column(std::string name, const std::vector<OptInt>& days) {
  table::Column c = int_column(std::move(name), days);
  c.type = table::ColumnType::Date;
  for (auto d : c.int64s) c.int32s.push_back(static_cast<std::int32_t>(d));
  c.int64s.clear();
  return c;
}

inline table::Column string_column(std::string name, const std::vector<OptString>& values) {
  table::Column c;
  c.name = std::move(name);
  c.type = table::ColumnType::String;
  std::vector<std::string> distinct;
  for (const auto& v : values) {
    if (v) distinct.push_back(*v);
  }
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  c.dictionary = table::Dictionary(distinct);
  for (const auto& v : values) {
    c.int32s.push_back(v ? static_cast<std::int32_t>(std::lower_bound(c.dictionary.begin(), c.dictionary.end(), *v) -
                                                     c.dictionary.begin())
                         : 0);
    c.nulls.push_back(!v);
  }
  return c;
}

inline std::shared_ptr<const table::Table> make_table(std::string name, std::vector<table::Column> columns) {
  auto t = std::make_shared<table::Table>();
  t->name = std::move(name);
  t->columns = std::move(columns);
  return t;
}

// Catalogs of one table: `with_order` holding it with its recorded sort
// order, `without_order` holding a copy whose order is unknown (the same
// rows), to compare the ordered aggregation with the hashed one.
struct SortedAndUnsorted {
  sql::TablesInMemory with_order, without_order;
};
inline SortedAndUnsorted sorted_and_unsorted(std::shared_ptr<table::Table> sorted) {
  auto unsorted = std::make_shared<table::Table>(*sorted);
  unsorted->sort_order.clear();
  SortedAndUnsorted out;
  out.with_order.add(std::move(sorted));
  out.without_order.add(std::move(unsorted));
  return out;
}

// The answer of `query` as CSV.
inline std::string csv_of(const sql::TableCatalog& tables, const std::string& query, std::uint64_t max_rows = 1000000) {
  sql::SqlOptions options;
  options.max_rows = max_rows;
  return sql::format_result(sql::run(tables, query, options), sql::ResultFormat::Csv);
}

}  // namespace gpuolap::testing
