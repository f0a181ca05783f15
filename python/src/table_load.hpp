#pragma once
// gpuolap.load_table in C++: an Arrow stream stored as a table of a
// database directory, as `gpuolap table load` stores a CSV.
#include <string>
#include <vector>

#include "arrow_c.hpp"

namespace gpuolap::python {

struct LoadedTable {
  std::size_t rows = 0;
  std::size_t columns = 0;
  double read_seconds = 0;   // the stream read into columns (arrow_import.hpp)
  // The process's CPU seconds meanwhile, every thread's, user and system:
  // the producer's too where it decodes as it is read (a Parquet file's).
  double read_cpu_seconds = 0;
  double sort_seconds = 0;   // sort_by's sort, when asked
  double store_seconds = 0;  // the table file written (atomically, synced)
};

// Reads `stream` (releasing it) into table `name`, sorts it by `sort_by`
// when given, and stores it in the database `db` (created if missing),
// replacing a table of that name. Nothing is written when anything fails.
// `rows_hint`: as table_from_arrow's.
LoadedTable load_table(const std::string& db, const std::string& name, ArrowArrayStream* stream,
                       const std::vector<std::string>& sort_by, std::size_t rows_hint);

}  // namespace gpuolap::python
