#include "sql_batch.hpp"

#include "sql/sql.hpp"
#include "table/database.hpp"

namespace gpuolap::python {

namespace {

ArrowColumn column_of(const std::string& name, const sql::ValueVector& v, size_t rows) {
  using sql::SqlType;
  const Nulls nulls = &v.nulls;
  switch (v.type) {
    case SqlType::Null: return null_column(name, rows);
    case SqlType::Bool: return bool_column(name, v.ints, nulls);
    case SqlType::Int64: return int_column(name, "l", v.ints, nulls);
    case SqlType::Date: return int_column(name, "tdD", v.ints, nulls);
    case SqlType::Interval: return int_column(name, "tDs", v.ints, nulls);
    case SqlType::Double: return float64_column(name, v.doubles, nulls);
    case SqlType::String:
      return utf8_column(name, rows, [&](size_t r) -> std::string_view { return v.strings[r]; }, nulls);
  }
  return null_column(name, rows);
}

}  // namespace

std::unique_ptr<ExportedBatch> run_sql(const std::string& db, const std::string& query, const std::string& engine,
                                       uint64_t max_rows) {
  sql::SqlOptions options;
  options.engine = sql::parse_engine(engine);
  options.max_rows = max_rows;
  const table::Database database(db);
  const sql::QueryResult result = sql::run(database, query, options);
  std::vector<ArrowColumn> columns;
  for (size_t c = 0; c < result.names.size(); ++c) columns.push_back(column_of(result.names[c], result.columns[c], result.rows));
  return std::make_unique<ExportedBatch>(std::move(columns), static_cast<int64_t>(result.rows));
}

}  // namespace gpuolap::python
