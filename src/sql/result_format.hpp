// A query result as text: CSV (RFC 4180, the default), JSON, or an aligned
// table for people.
#pragma once

#include <string>
#include <string_view>

#include "sql/query_result.hpp"

namespace gpuolap::sql {

enum class ResultFormat : std::uint8_t { Csv, Json, Table };

// "csv", "json", "table"; another name is an InputError listing them.
ResultFormat parse_result_format(std::string_view name);

// CSV: a header of the names; NULL an empty field (an empty string is "");
// integers as integers, doubles with 17 significant digits, dates as
// YYYY-MM-DD, booleans t/f; fields quoted where RFC 4180 needs it.
// JSON: {"columns": [{"name", "type"}], "rows": [[...]]}, NULL as null.
// Table: columns aligned, a rule under the header, "(N rows)" after.
std::string format_result(const QueryResult& result, ResultFormat format);

// A double as CSV writes it: 17 significant digits, NaN, Infinity, -Infinity.
std::string double_text(double d);

// A field of CSV: `text` quoted where RFC 4180 needs it; with
// `empty_string`, "" (an empty string, which an empty field would make NULL).
std::string csv_field(const std::string& text, bool empty_string = false);

// One value as CSV writes it, unquoted ("" for NULL).
std::string value_text(const ValueVector& column, std::size_t row);

}  // namespace gpuolap::sql
