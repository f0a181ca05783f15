// Schema JSON:
// {"name": "Sales",
//  "dimensions": [{"name": "Products", "elements": [
//      {"name": "Bike A"},
//      {"name": "Bikes", "children": [{"name": "Bike A", "weight": 1.0}, {"name": "Bike B"}]}]}],
//  "measures": ["Revenue", "Units"]}
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "json_parse.hpp"

namespace gpuolap {

using nlohmann::json;

namespace {

const json& member(const json& object, const char* key, const std::string& where) {
  if (!object.is_object()) throw InputError(fmt::format("{}: expected a JSON object", where));
  auto it = object.find(key);
  if (it == object.end()) throw InputError(fmt::format("{}: missing \"{}\"", where, key));
  return *it;
}

std::string string_member(const json& object, const char* key, const std::string& where) {
  const json& v = member(object, key, where);
  if (!v.is_string()) throw InputError(fmt::format("{}: \"{}\" must be a string", where, key));
  return v.get<std::string>();
}

const json& array_member(const json& object, const char* key, const std::string& where) {
  const json& v = member(object, key, where);
  if (!v.is_array()) throw InputError(fmt::format("{}: \"{}\" must be an array", where, key));
  return v;
}

// Refuses fields the format does not have: a misspelt "weight" or
// "children" would otherwise change the cube silently.
void only_fields(const json& object, std::initializer_list<const char*> allowed, const std::string& where) {
  if (!object.is_object()) throw InputError(fmt::format("{}: expected a JSON object", where));
  for (const auto& [key, _] : object.items()) {
    bool known = false;
    for (const char* a : allowed) known = known || key == a;
    if (!known) throw InputError(fmt::format("{}: unknown field \"{}\"", where, key));
  }
}

Dimension parse_dimension(const json& jd, const std::string& file, size_t index) {
  const std::string name = string_member(jd, "name", fmt::format("{}: dimension {}", file, index + 1));
  const std::string where = fmt::format("{}: dimension '{}'", file, name);
  only_fields(jd, {"name", "elements"}, where);
  std::vector<ElementSpec> specs;
  const json& elements = array_member(jd, "elements", where);
  for (size_t i = 0; i < elements.size(); ++i) {
    const json& je = elements[i];
    ElementSpec spec;
    spec.name = string_member(je, "name", fmt::format("{}: element {}", where, i + 1));
    const std::string at = fmt::format("{}: element '{}'", where, spec.name);
    only_fields(je, {"name", "children"}, at);
    if (auto it = je.find("children"); it != je.end()) {
      if (!it->is_array()) throw InputError(fmt::format("{}: \"children\" must be an array", at));
      if (it->empty())
        throw InputError(fmt::format("{}: \"children\" is empty; omit it for a base element", at));
      for (const json& jc : *it) {
        const std::string child = string_member(jc, "name", at + ": a child");
        only_fields(jc, {"name", "weight"}, fmt::format("{}: child '{}'", at, child));
        double weight = 1.0;
        if (auto w = jc.find("weight"); w != jc.end()) {
          if (!w->is_number())
            throw InputError(fmt::format("{}: the weight of child '{}' is not a number", at, child));
          weight = w->get<double>();
        }
        spec.children.emplace_back(child, weight);
      }
    }
    specs.push_back(std::move(spec));
  }
  return Dimension::build(name, specs, where);
}

}  // namespace

Schema parse_schema_json(const std::string& text, const std::string& where) {
  const json doc = parse_json(text, where);
  only_fields(doc, {"name", "dimensions", "measures"}, where);
  const std::string name = doc.is_object() && doc.contains("name") ? string_member(doc, "name", where)
                                                                   : std::string("cube");
  std::vector<Dimension> dimensions;
  const json& jdims = array_member(doc, "dimensions", where);
  for (size_t i = 0; i < jdims.size(); ++i) dimensions.push_back(parse_dimension(jdims[i], where, i));
  std::vector<std::string> measures;
  for (const json& jm : array_member(doc, "measures", where)) {
    if (!jm.is_string()) throw InputError(fmt::format("{}: a measure name is not a string", where));
    measures.push_back(jm.get<std::string>());
  }
  return Schema(name, std::move(dimensions), std::move(measures), where);
}

Schema read_schema_file(const std::filesystem::path& path) {
  return parse_schema_json(read_text_file(path), path.string());
}

std::string schema_to_json(const Schema& schema) {
  json doc;
  doc["name"] = schema.name();
  doc["dimensions"] = json::array();
  for (const Dimension& dim : schema.dimensions()) {
    json elements = json::array();
    for (const Element& e : dim.elements()) {
      json je{{"name", e.name}};
      if (!e.is_base()) {
        json children = json::array();
        for (const Child& c : e.children) {
          json jc{{"name", dim.element(c.element).name}};
          if (c.weight != 1.0) jc["weight"] = c.weight;
          children.push_back(std::move(jc));
        }
        je["children"] = std::move(children);
      }
      elements.push_back(std::move(je));
    }
    doc["dimensions"].push_back(json{{"name", dim.name()}, {"elements", std::move(elements)}});
  }
  doc["measures"] = schema.measures();
  return doc.dump(1) + "\n";
}

}  // namespace gpuolap
