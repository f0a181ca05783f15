#include "table_generators.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "gpuolap/error.hpp"
#include "gpuolap/huge_pages.hpp"

namespace gpuolap {

const std::vector<std::string>& table_generator_kinds() {
  static const std::vector<std::string> kinds = {"sales-flat", "lineitem", "zipf", "ssb", "htree"};
  return kinds;
}

bool is_table_generator_kind(const std::string& kind) {
  const auto& kinds = table_generator_kinds();
  return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
}

std::vector<table::Table> generate_tables(const std::string& kind, const TableGeneratorOptions& o) {
  if (!(o.scale > 0) || !std::isfinite(o.scale) || o.scale > 1000)
    throw InputError(fmt::format("--scale must be a positive number up to 1000, not {}", o.scale));
  if (kind == "sales-flat") return generate_sales_flat(o);
  if (kind == "lineitem") return generate_lineitem(o);
  if (kind == "zipf") return generate_zipf(o);
  if (kind == "ssb") return generate_ssb(o);
  if (kind == "htree") return generate_htree(o);
  throw InputError(fmt::format("unknown table generator '{}' (expected {})", kind,
                               fmt::join(table_generator_kinds(), ", ")));
}

namespace generate_detail {

table::Column make_column(std::string name, table::ColumnType type, std::size_t rows) {
  table::Column c;
  c.name = std::move(name);
  c.type = type;
  switch (type) {
    case table::ColumnType::Int64: resize_on_huge_pages(c.int64s, rows); break;
    case table::ColumnType::Double: resize_on_huge_pages(c.doubles, rows); break;
    case table::ColumnType::Date:
    case table::ColumnType::String: resize_on_huge_pages(c.int32s, rows); break;
  }
  return c;
}

table::Column make_string_column(std::string name, std::vector<std::string> dictionary, std::size_t rows) {
  table::Column c = make_column(std::move(name), table::ColumnType::String, rows);
  std::sort(dictionary.begin(), dictionary.end());
  c.dictionary = table::Dictionary(dictionary);
  return c;
}

}  // namespace generate_detail

}  // namespace gpuolap
