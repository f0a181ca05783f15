// Loading a table from a CSV file (RFC 4180, a header line first).
//
// - Fields are separated by ',', records end at "\n" or "\r\n" (the last may
//   end at the end of the file); a field in double quotes may hold ',', '"'
//   (written "") and line breaks. Lines that are wholly empty are skipped.
// - An empty field is NULL. A quoted empty field ("") is the empty string in
//   a string column (as DuckDB reads it) and NULL in any other.
// - Types: those declared (by column name) are used; every other column's is
//   inferred from its non-NULL values, the narrowest of int64 (an optional
//   '-' and decimal digits within 64 bits), double (a finite decimal or
//   exponent number, e.g. 1.5, -2e-3), date (YYYY-MM-DD, a real day) and
//   string, in that order of widening; a column mixing kinds (numbers and
//   dates) or with no value at all is string.
// - Errors name the file, the line (counting every line break, also those
//   inside quoted fields) and, for a field, its column by number and name.
//
// The file is read through a memory map and parsed in parallel chunks cut at
// record starts (found by the parity of the quotes before them). The types
// are guessed from the first records of every chunk and the file is
// tokenized once with them; only a column with a value the guess does not
// fit is read again, as the type that all its values fit.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "table/table.hpp"

namespace gpuolap::table {

struct CsvLoadOptions {
  std::string table_name;
  // Declared column types; a name that is no column of the file is an error.
  std::map<std::string, ColumnType> types;
  // Columns to sort the rows by (ascending, NULLs first); recorded in the table.
  std::vector<std::string> sort_by;
};

Table load_csv(const std::filesystem::path& csv, const CsvLoadOptions& options);
// The same over CSV text in memory (a request's body); `where` names it in errors.
Table parse_csv(std::string_view text, const std::string& where, const CsvLoadOptions& options);

// A types file: one JSON object {"column": "int64|double|date|string", ...}.
std::map<std::string, ColumnType> read_types_json(const std::filesystem::path& path);

}  // namespace gpuolap::table
