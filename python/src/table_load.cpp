#include "table_load.hpp"

#include <chrono>

#include "arrow_import.hpp"
#include "table/database.hpp"

namespace gpuolap::python {

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

LoadedTable load_table(const std::string& db, const std::string& name, ArrowArrayStream* stream,
                       const std::vector<std::string>& sort_by, std::size_t rows_hint) {
  LoadedTable loaded;
  auto start = std::chrono::steady_clock::now();
  table::Table table = table_from_arrow(stream, name, rows_hint);
  loaded.read_seconds = seconds_since(start);
  if (!sort_by.empty()) {
    start = std::chrono::steady_clock::now();
    table::sort_table(table, sort_by);
    loaded.sort_seconds = seconds_since(start);
  }
  start = std::chrono::steady_clock::now();
  table::Database(db, /*create_missing=*/true).store(table);
  loaded.store_seconds = seconds_since(start);
  loaded.rows = table.row_count();
  loaded.columns = table.columns.size();
  return loaded;
}

}  // namespace gpuolap::python
