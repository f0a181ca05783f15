#pragma once
// `gpuolap table load|list|info`: the tables of a database directory.
#include <string>
#include <vector>

namespace gpuolap::cli {

struct TableLoadOptions {
  std::string db, name, csv, types;
  std::vector<std::string> sort_by;
};
int run_table_load(const TableLoadOptions& o);

struct TableListOptions {
  std::string db;
};
int run_table_list(const TableListOptions& o);

// Every table of the database, or only `name`; reads each whole (the
// checksum verified) to count its NULLs.
struct TableInfoOptions {
  std::string db, name;
};
int run_table_info(const TableInfoOptions& o);

// Sorts a stored table by columns and stores it again (as `out`, or in
// place), its sort order recorded for the operators that read sorted rows.
struct TableSortOptions {
  std::string db, name, out;
  std::vector<std::string> by;
};
int run_table_sort(const TableSortOptions& o);

}  // namespace gpuolap::cli
