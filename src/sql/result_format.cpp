#include "sql/result_format.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "gpuolap/error.hpp"
#include "sql/expression.hpp"

namespace gpuolap::sql {

ResultFormat parse_result_format(std::string_view name) {
  if (name == "csv") return ResultFormat::Csv;
  if (name == "json") return ResultFormat::Json;
  if (name == "table") return ResultFormat::Table;
  throw InputError("unknown result format '" + std::string(name) + "': expected csv, json or table");
}

std::string double_text(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{:.17g}", d);
}

std::string value_text(const ValueVector& c, std::size_t row) {
  if (c.type == SqlType::Null || c.is_null(row)) return "";
  switch (c.type) {
    case SqlType::Bool: return c.ints[row] ? "t" : "f";
    case SqlType::Int64: return std::to_string(c.ints[row]);
    case SqlType::Double: return double_text(c.doubles[row]);
    case SqlType::Date: return format_date(c.ints[row]);
    case SqlType::Interval: return std::to_string(c.ints[row]) + " days";
    case SqlType::String: return c.strings[row];
    case SqlType::Null: return "";
  }
  return "";
}

std::string csv_field(const std::string& s, bool empty_string) {
  if (empty_string) return "\"\"";
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"') out += '"';
    out += ch;
  }
  return out + "\"";
}

namespace {

std::string csv(const QueryResult& r) {
  std::string out;
  for (std::size_t c = 0; c < r.names.size(); ++c) out += (c ? "," : "") + csv_field(r.names[c], r.names[c].empty());
  out += '\n';
  for (std::size_t row = 0; row < r.rows; ++row) {
    for (std::size_t c = 0; c < r.columns.size(); ++c) {
      const ValueVector& col = r.columns[c];
      bool empty_string = col.type == SqlType::String && !col.is_null(row) && col.strings[row].empty();
      if (c) out += ',';
      out += csv_field(value_text(col, row), empty_string);
    }
    out += '\n';
  }
  return out;
}

std::string json_text(const QueryResult& r) {
  nlohmann::json columns = nlohmann::json::array(), rows = nlohmann::json::array();
  for (std::size_t c = 0; c < r.names.size(); ++c) {
    columns.push_back({{"name", r.names[c]}, {"type", std::string(type_name(r.columns[c].type))}});
  }
  for (std::size_t row = 0; row < r.rows; ++row) {
    nlohmann::json values = nlohmann::json::array();
    for (const auto& col : r.columns) {
      if (col.type == SqlType::Null || col.is_null(row)) values.push_back(nullptr);
      else if (col.type == SqlType::Int64) values.push_back(col.ints[row]);
      else if (col.type == SqlType::Bool) values.push_back(col.ints[row] != 0);
      else if (col.type == SqlType::Double && std::isfinite(col.doubles[row])) values.push_back(col.doubles[row]);
      else values.push_back(value_text(col, row));
    }
    rows.push_back(std::move(values));
  }
  return nlohmann::json{{"columns", columns}, {"rows", rows}}.dump() + "\n";
}

// Display width of UTF-8 text: its characters.
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char ch) {
    return (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  }));
}

std::string aligned(const QueryResult& r) {
  std::vector<std::size_t> widths;
  for (const auto& n : r.names) widths.push_back(width(n));
  std::vector<std::vector<std::string>> cells(r.rows);
  for (std::size_t row = 0; row < r.rows; ++row) {
    for (std::size_t c = 0; c < r.columns.size(); ++c) {
      cells[row].push_back(value_text(r.columns[c], row));
      widths[c] = std::max(widths[c], width(cells[row].back()));
    }
  }
  auto pad = [](const std::string& s, std::size_t w, bool right) {
    std::string fill(w - width(s), ' ');
    return right ? fill + s : s + fill;
  };
  std::string out;
  for (std::size_t c = 0; c < r.names.size(); ++c) out += (c ? " | " : " ") + pad(r.names[c], widths[c], false);
  out += "\n";
  for (std::size_t c = 0; c < r.names.size(); ++c) out += (c ? "-+-" : "-") + std::string(widths[c], '-');
  out += "-\n";
  for (std::size_t row = 0; row < r.rows; ++row) {
    for (std::size_t c = 0; c < r.columns.size(); ++c) {
      out += (c ? " | " : " ") + pad(cells[row][c], widths[c], is_numeric(r.columns[c].type));
    }
    out += "\n";
  }
  out += "(" + std::to_string(r.rows) + (r.rows == 1 ? " row)\n" : " rows)\n");
  return out;
}

}  // namespace

std::string format_result(const QueryResult& result, ResultFormat format) {
  switch (format) {
    case ResultFormat::Csv: return csv(result);
    case ResultFormat::Json: return json_text(result);
    case ResultFormat::Table: return aligned(result);
  }
  return "";
}

}  // namespace gpuolap::sql
