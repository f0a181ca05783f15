#include "table_load.hpp"

#include <sys/resource.h>

#include <chrono>

#include "arrow_import.hpp"
#include "gpuolap/elapsed.hpp"
#include "table/database.hpp"

namespace gpuolap::python {

namespace {

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

}  // namespace

LoadedTable load_table(const std::string& db, const std::string& name, ArrowArrayStream* stream,
                       const std::vector<std::string>& sort_by, std::size_t rows_hint) {
  LoadedTable loaded;
  auto start = std::chrono::steady_clock::now();
  const double cpu_start = process_cpu_seconds();
  table::Table table = table_from_arrow(stream, name, rows_hint);
  loaded.read_seconds = seconds_since(start);
  loaded.read_cpu_seconds = process_cpu_seconds() - cpu_start;
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
