// A database: a directory of table files, one per table (NAME.table: a
// versioned, checksummed binary file written atomically). The SQL front end
// resolves table names here.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "table/table.hpp"

namespace gpuolap::table {

// What the header of a table file says, without reading its values.
struct TableSummary {
  struct ColumnSummary {
    std::string name;
    ColumnType type = ColumnType::Int64;
    bool nullable = false;               // the column stores null flags
    std::uint64_t dictionary_size = 0;  // distinct strings of a string column
  };
  std::string name;
  std::uint64_t rows = 0;
  std::uint64_t file_bytes = 0;
  std::vector<std::string> sort_order;
  std::vector<ColumnSummary> columns;
};

class Database {
 public:
  // Opens the directory `dir`; with create_missing, creates it first. A path
  // that is not a directory is an InputError naming it.
  explicit Database(std::filesystem::path dir, bool create_missing = false);

  const std::filesystem::path& dir() const { return dir_; }
  // The tables, sorted by name.
  std::vector<std::string> table_names() const;
  bool has_table(std::string_view name) const;
  // Reads table `name`. An unknown name is an InputError naming it and the
  // closest existing name; a corrupt or truncated file, one naming the file
  // and what is wrong with it.
  std::shared_ptr<const Table> load(std::string_view name) const;
  // Reads only the header and metadata of table `name` (no checksum is
  // verified: load() does that); errors as load()'s.
  TableSummary summary(std::string_view name) const;
  // Writes `table` as dir/NAME.table atomically (a temporary file, fsync,
  // rename, fsync of the directory), replacing a table of that name.
  void store(const Table& table) const;
  // The file table `name` is stored in (whether or not it exists).
  std::filesystem::path table_path(std::string_view name) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace gpuolap::table
