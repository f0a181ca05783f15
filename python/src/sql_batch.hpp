#pragma once
// gpuolap.sql in C++: a SELECT over a database directory, its result as an
// Arrow record batch.
#include <cstdint>
#include <memory>
#include <string>

#include "arrow_export.hpp"

namespace gpuolap::python {

// Columns by SQL type: text -> utf8, bigint -> int64, double precision ->
// float64, date -> date32, boolean -> bool, interval -> duration[s], a bare
// NULL -> null; NULLs in the validity bitmaps.
std::unique_ptr<ExportedBatch> run_sql(const std::string& db, const std::string& query, const std::string& engine,
                                       uint64_t max_rows);

}  // namespace gpuolap::python
