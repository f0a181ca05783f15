// Query JSON: {"measure": "Revenue", "aggregate": "sum",
//              "area": {"Products": ["Bikes", "Bike A"], "Years": "*", ...}}
// Every dimension must be named; "*" is every element in schema order.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "json_parse.hpp"

namespace gpuolap {

using nlohmann::json;

AreaQuery parse_query_json(const Schema& schema, const std::string& text, const std::string& where) {
  return parse_query_object(schema, parse_json(text, where), where);
}

AreaQuery parse_query_object(const Schema& schema, const json& doc, const std::string& where) {
  if (!doc.is_object()) throw InputError(fmt::format("{}: a query must be a JSON object", where));
  for (const auto& [key, _] : doc.items())
    if (key != "measure" && key != "aggregate" && key != "area")
      throw InputError(fmt::format("{}: unknown field \"{}\"", where, key));

  AreaQuery query;  // without "measure", the first measure
  if (auto measure = doc.find("measure"); measure != doc.end()) {
    if (!measure->is_string()) throw InputError(fmt::format("{}: \"measure\" must name a measure", where));
    auto m = schema.find_measure(measure->get<std::string>());
    if (!m)
      throw InputError(fmt::format("{}: cube '{}' has no measure '{}'", where, schema.name(),
                                   measure->get<std::string>()));
    query.measure = *m;
  }

  if (auto agg = doc.find("aggregate"); agg != doc.end()) {
    if (!agg->is_string()) throw InputError(fmt::format("{}: \"aggregate\" must be a string", where));
    query.aggregate = parse_aggregate(agg->get<std::string>(), where);
  }

  auto area = doc.find("area");
  if (area == doc.end() || !area->is_object())
    throw InputError(fmt::format("{}: \"area\" must be an object naming every dimension", where));
  query.area.resize(schema.dimension_count());
  std::vector<bool> named(schema.dimension_count(), false);
  for (const auto& [dim_name, list] : area->items()) {
    auto d = schema.find_dimension(dim_name);
    if (!d)
      throw InputError(fmt::format("{}: area: cube '{}' has no dimension '{}'", where, schema.name(),
                                   dim_name));
    const Dimension& dim = schema.dimension(*d);
    named[*d] = true;
    std::vector<ElementId>& ids = query.area[*d];
    if (list.is_string() && list.get<std::string>() == "*") {
      for (ElementId e = 0; e < dim.element_count(); ++e) ids.push_back(e);
      continue;
    }
    if (!list.is_array())
      throw InputError(fmt::format("{}: area: dimension '{}': expected a list of element names or \"*\"",
                                   where, dim_name));
    if (list.empty())
      throw InputError(fmt::format("{}: area: dimension '{}': the element list is empty", where, dim_name));
    for (const json& name : list) {
      if (!name.is_string())
        throw InputError(fmt::format("{}: area: dimension '{}': {} is not an element name", where,
                                     dim_name, name.dump()));
      const std::string& text = name.get_ref<const std::string&>();
      auto e = dim.find(text);
      if (!e) throw InputError(fmt::format("{}: area: dimension '{}' has no element '{}'", where, dim_name, text));
      ids.push_back(*e);
    }
  }
  for (size_t d = 0; d < named.size(); ++d)
    if (!named[d])
      throw InputError(fmt::format("{}: area: dimension '{}' is missing (name its elements or \"*\")",
                                   where, schema.dimension(d).name()));
  return query;
}

AreaQuery read_query_file(const Schema& schema, const std::filesystem::path& path) {
  return parse_query_json(schema, read_text_file(path), path.string());
}

}  // namespace gpuolap
