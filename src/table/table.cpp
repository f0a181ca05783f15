#include "table/table.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <unordered_set>

#include "gpuolap/error.hpp"

namespace gpuolap::table {

std::string_view type_name(ColumnType type) {
  switch (type) {
    case ColumnType::Int64: return "int64";
    case ColumnType::Double: return "double";
    case ColumnType::Date: return "date";
    case ColumnType::String: return "string";
  }
  return "?";
}

ColumnType parse_type(std::string_view name) {
  for (ColumnType t : {ColumnType::Int64, ColumnType::Double, ColumnType::Date, ColumnType::String})
    if (type_name(t) == name) return t;
  throw InputError(fmt::format("unknown column type '{}' (expected int64, double, date or string)",
                               clip_for_message(name)));
}

std::size_t Column::size() const {
  switch (type) {
    case ColumnType::Int64: return int64s.size();
    case ColumnType::Double: return doubles.size();
    case ColumnType::Date:
    case ColumnType::String: return int32s.size();
  }
  return 0;
}

const Column* Table::find(std::string_view name) const {
  for (const Column& c : columns)
    if (c.name == name) return &c;
  return nullptr;
}

std::string clip_for_message(std::string_view text) {
  constexpr std::size_t kShown = 200;
  if (text.size() <= kShown) return std::string(text);
  return fmt::format("{}... ({} bytes)", text.substr(0, kShown), text.size());
}

bool is_valid_name(std::string_view name) {
  if (name.empty() || name.size() > 128) return false;
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!letter(name[0])) return false;
  for (char c : name)
    if (!letter(c) && !(c >= '0' && c <= '9')) return false;
  return true;
}

void check_table(const Table& table) {
  const std::string& t = table.name;
  if (!is_valid_name(t))
    throw InputError(fmt::format("table name '{}': expected a letter or _ then letters, digits or _ (at most 128)",
                                 clip_for_message(t)));
  const std::size_t rows = table.row_count();
  std::unordered_set<std::string_view> names;
  for (const Column& c : table.columns)
    if (!names.insert(c.name).second)
      throw InputError(fmt::format("table {}: two columns named '{}'", t, clip_for_message(c.name)));
  // The columns in parallel (loading a table checks each of its values).
  tbb::parallel_for(std::size_t{0}, table.columns.size(), [&](std::size_t i) {
    const Column& c = table.columns[i];
    if (c.name.empty() || c.name.size() > 4096)
      throw InputError(fmt::format("table {}: column {} has an empty or over-long name", t, i + 1));
    const bool right_vector = (c.type == ColumnType::Int64)
                                  ? c.doubles.empty() && c.int32s.empty()
                                  : (c.type == ColumnType::Double) ? c.int64s.empty() && c.int32s.empty()
                                                                   : c.int64s.empty() && c.doubles.empty();
    if (!right_vector)
      throw InputError(fmt::format("table {}: column {} ({}) holds values in a vector of another type", t,
                                   clip_for_message(c.name), type_name(c.type)));
    if (c.size() != rows)
      throw InputError(fmt::format("table {}: column {} has {} rows, the first column {}", t,
                                   clip_for_message(c.name), c.size(), rows));
    if (!c.nulls.empty() && c.nulls.size() != rows)
      throw InputError(fmt::format("table {}: column {} has {} null flags for {} rows", t, clip_for_message(c.name),
                                   c.nulls.size(), rows));
    for (std::size_t r = 0; r < c.nulls.size(); ++r)
      if (c.nulls[r] > 1)
        throw InputError(fmt::format("table {}: column {} row {}: null flag {} (0 or 1)", t,
                                     clip_for_message(c.name), r, c.nulls[r]));
    if (c.type != ColumnType::String && !c.dictionary.empty())
      throw InputError(fmt::format("table {}: column {} is {} but has a dictionary", t, clip_for_message(c.name),
                                   type_name(c.type)));
    if (c.type == ColumnType::String) {
      for (std::size_t k = 1; k < c.dictionary.size(); ++k)
        if (!(c.dictionary[k - 1] < c.dictionary[k]))
          throw InputError(fmt::format("table {}: column {}: dictionary not strictly in byte order at code {}", t,
                                       clip_for_message(c.name), k));
      const auto count = static_cast<std::int64_t>(c.dictionary.size());
      for (std::size_t r = 0; r < rows; ++r) {
        const std::int32_t code = c.int32s[r];
        if (c.is_null(r) ? code != 0 : (code < 0 || code >= count))
          throw InputError(fmt::format("table {}: column {} row {}: code {} outside its dictionary of {}", t,
                                       clip_for_message(c.name), r, code, count));
      }
    }
  });
  for (std::size_t k = 0; k < table.sort_order.size(); ++k) {
    if (!table.find(table.sort_order[k]))
      throw InputError(fmt::format("table {}: sort order names '{}', which is no column", t,
                                   clip_for_message(table.sort_order[k])));
    for (std::size_t j = 0; j < k; ++j)
      if (table.sort_order[j] == table.sort_order[k])
        throw InputError(fmt::format("table {}: sort order names '{}' twice", t, table.sort_order[k]));
  }
  if (!is_sorted_by(table, table.sort_order))
    throw InputError(fmt::format("table {}: the rows do not follow its recorded sort order", t));
}

}  // namespace gpuolap::table
