#pragma once
// Tables from Arrow: every record batch of an Arrow C stream (pyarrow's or
// a DuckDB result's __arrow_c_stream__) read into a table::Table, without
// an Arrow library. Arrow's types become gpuolap's:
//   int8 … int64, uint8 … uint64 (a value past 2^63 − 1 is an error),
//   bool (0 or 1)                          -> int64
//   float32, float64                       -> double
//   date32, date64 (whole days only)       -> date
//   utf8, large_utf8 and dictionaries of them -> string (dictionary codes in
//                                             byte order, as every table)
// NULLs stay NULLs. Any other type (timestamps, decimals, binary, nested
// types) is an InputError naming the column and the type, as is a batch
// whose columns differ from the stream's schema.
#include <string>

#include "arrow_c.hpp"
#include "table/table.hpp"

namespace gpuolap::python {

// Reads the whole stream and releases it (also when it throws). Batches
// are read into the columns on other threads, a wave of them at a time,
// while the next are taken from the stream (a Parquet file's decoded by
// pyarrow meanwhile). `rows_hint`, the rows the stream holds where the
// caller knows (0 otherwise), sizes the columns once; they grow past it.
// Every batch is held until the last is read, so the stream's Arrow memory
// and the table's are both held for a while: as for a pyarrow Table or a
// DataFrame, which hold all of theirs anyway.
table::Table table_from_arrow(ArrowArrayStream* stream, const std::string& name, std::size_t rows_hint = 0);

}  // namespace gpuolap::python
