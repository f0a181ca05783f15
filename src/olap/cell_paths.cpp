#include "olap/cell_paths.hpp"

#include <fmt/format.h>

#include "gpuolap/error.hpp"
#include "formats/json_parse.hpp"

namespace gpuolap::olap {

using nlohmann::json;

CellPath cell_path(const Schema& schema, std::vector<ElementId> elements) {
  CellPath cell;
  std::vector<uint32_t> bases;
  for (size_t d = 0; d < elements.size(); ++d) {
    const Dimension& dim = schema.dimension(d);
    cell.base = cell.base && dim.element(elements[d]).is_base();
    bases.push_back(dim.base_id(elements[d]));
  }
  if (cell.base) cell.key = schema.codec().encode(bases);
  cell.elements = std::move(elements);
  return cell;
}

std::vector<ElementId> key_elements(const Schema& schema, uint64_t key) {
  std::vector<ElementId> elements;
  for (size_t d = 0; d < schema.dimension_count(); ++d)
    elements.push_back(schema.dimension(d).base_element(schema.codec().decode(key, d)));
  return elements;
}

CellPath parse_cell_path(const Schema& schema, const json& path, const std::string& where) {
  std::vector<std::string> names;
  if (path.is_string()) return parse_cell_path_text(schema, path.get<std::string>(), where);
  if (!path.is_array()) throw InputError(fmt::format("{}: a path must be a list of element names", where));
  for (const json& n : path) {
    if (!n.is_string()) throw InputError(fmt::format("{}: {} is not an element name", where, n.dump()));
    names.push_back(n.get<std::string>());
  }
  if (names.size() != schema.dimension_count())
    throw InputError(fmt::format("{}: the path names {} elements; cube '{}' has {} dimensions", where, names.size(),
                                 schema.name(), schema.dimension_count()));
  std::vector<ElementId> elements;
  for (size_t d = 0; d < names.size(); ++d) {
    const Dimension& dim = schema.dimension(d);
    const auto e = dim.find(names[d]);
    if (!e) throw InputError(fmt::format("{}: dimension '{}' has no element '{}'", where, dim.name(), names[d]));
    elements.push_back(*e);
  }
  return cell_path(schema, std::move(elements));
}

CellPath parse_cell_path_text(const Schema& schema, const std::string& text, const std::string& where) {
  if (!text.empty() && text.front() == '[') return parse_cell_path(schema, parse_json(text, where), where);
  json names = json::array();
  size_t at = 0;
  for (;;) {
    const size_t comma = text.find(',', at);
    names.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return parse_cell_path(schema, names, where);
}

json path_names(const Schema& schema, const std::vector<ElementId>& elements) {
  json out = json::array();
  for (size_t d = 0; d < elements.size(); ++d) out.push_back(schema.dimension(d).element(elements[d]).name);
  return out;
}

json key_names(const Schema& schema, uint64_t key) { return path_names(schema, key_elements(schema, key)); }

size_t find_measure_or_first(const Schema& schema, const std::string& name, const std::string& where) {
  if (name.empty()) return 0;
  const auto m = schema.find_measure(name);
  if (!m) throw InputError(fmt::format("{}: cube '{}' has no measure '{}'", where, schema.name(), name));
  return *m;
}

}  // namespace gpuolap::olap
