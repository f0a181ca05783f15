// A database: a directory of table files, one per table (NAME.table: a
// versioned, checksummed binary file written atomically). The SQL front end
// resolves table names here.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "table/table.hpp"

namespace gpuolap::table {

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
  // Writes `table` as dir/NAME.table atomically (a temporary file, fsync,
  // rename, fsync of the directory), replacing a table of that name.
  void store(const Table& table) const;
  // The file table `name` is stored in (whether or not it exists).
  std::filesystem::path table_path(std::string_view name) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace gpuolap::table
