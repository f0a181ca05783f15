#include "table_commands.hpp"

#include "gpuolap/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "table/csv_loader.hpp"
#include "table/database.hpp"

namespace gpuolap::cli {

namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

std::string sorted_by(const std::vector<std::string>& order) {
  return order.empty() ? "" : fmt::format(", sorted by {}", fmt::join(order, ","));
}

}  // namespace

int run_table_load(const TableLoadOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  table::CsvLoadOptions options;
  options.table_name = o.name;
  options.sort_by = o.sort_by;
  if (!o.types.empty()) options.types = table::read_types_json(o.types);
  // The directory is made only once the CSV has been read: a bad CSV leaves nothing behind.
  const table::Table t = table::load_csv(o.csv, options);
  const auto parsed = std::chrono::steady_clock::now();
  const table::Database db(o.db, true);
  db.store(t);
  const auto stored = std::chrono::steady_clock::now();
  auto seconds = [](auto from, auto to) { return std::chrono::duration<double>(to - from).count(); };
  std::cout << fmt::format("table {}: {} rows, {} columns{} -> {} ({}) in {:.2f} s ({:.2f} s reading the CSV, "
                           "{:.2f} s storing)\n",
                           t.name, t.row_count(), t.columns.size(), sorted_by(t.sort_order),
                           db.table_path(t.name).string(), mib(std::filesystem::file_size(db.table_path(t.name))),
                           seconds(start, stored), seconds(start, parsed), seconds(parsed, stored));
  return 0;
}

int run_table_list(const TableListOptions& o) {
  const table::Database db(o.db);
  for (const std::string& name : db.table_names()) {
    const table::TableSummary s = db.summary(name);
    std::cout << fmt::format("{}\t{} rows\t{} columns\t{}{}\n", name, s.rows, s.columns.size(), mib(s.file_bytes),
                             sorted_by(s.sort_order));
  }
  return 0;
}

int run_table_info(const TableInfoOptions& o) {
  const table::Database db(o.db);
  const std::vector<std::string> names = o.name.empty() ? db.table_names() : std::vector<std::string>{o.name};
  for (const std::string& name : names) {
    const auto t = db.load(name);
    std::cout << fmt::format("table {}: {} rows, {} columns, {}{}\n", name, t->row_count(), t->columns.size(),
                             mib(std::filesystem::file_size(db.table_path(name))), sorted_by(t->sort_order));
    for (const table::Column& c : t->columns) {
      const auto nulls = std::count(c.nulls.begin(), c.nulls.end(), std::uint8_t{1});
      std::string line = fmt::format("  {}\t{}", c.name, table::type_name(c.type));
      if (c.type == table::ColumnType::String) line += fmt::format("\t{} distinct", c.dictionary.size());
      if (nulls > 0) line += fmt::format("\t{} NULL", nulls);
      std::cout << line << "\n";
    }
  }
  return 0;
}

int run_table_sort(const TableSortOptions& o) {
  const table::Database db(o.db);
  table::Table t = *db.load(o.name);
  if (!o.out.empty() && !table::is_valid_name(o.out))
    throw gpuolap::InputError(fmt::format("--out '{}' is not a table name (a letter or '_', then letters, digits or '_')", o.out));
  table::sort_table(t, o.by);
  if (!o.out.empty()) t.name = o.out;
  db.store(t);
  std::cout << fmt::format("table {}: {} rows sorted by {}\n", t.name, t.row_count(), fmt::join(o.by, ", "));
  return 0;
}

}  // namespace gpuolap::cli
