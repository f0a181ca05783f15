#include "area_request.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"

namespace gpuolap::server {

using nlohmann::json;

namespace {

enum ExpandBits { kSelf = 1, kChildren = 2, kLeaves = 4 };

int parse_expand(const json& spec, const std::string& where) {
  auto one = [&](const json& s) {
    if (s == "self") return int{kSelf};
    if (s == "children") return int{kChildren};
    if (s == "leaves") return int{kLeaves};
    throw InputError(fmt::format("{}: unknown expand {} (expected self, children or leaves)", where, s.dump()));
  };
  if (!spec.is_array()) return one(spec);
  if (spec.empty()) throw InputError(fmt::format("{}: an empty expand list", where));
  int bits = 0;
  for (const json& s : spec) bits |= one(s);
  return bits;
}

}  // namespace

AreaQuery parse_area_request(const Schema& schema, const json& body, const std::string& where,
                             const std::vector<std::string>& extra_fields) {
  if (!body.is_object()) throw InputError(fmt::format("{}: the request must be a JSON object", where));
  json query = json::object();
  for (const auto& [key, value] : body.items()) {
    if (key == "expand" || std::find(extra_fields.begin(), extra_fields.end(), key) != extra_fields.end()) continue;
    query[key] = value;
  }
  AreaQuery q = parse_query_object(schema, query, where);
  const auto expand = body.find("expand");
  if (expand == body.end()) return q;
  if (!expand->is_object())
    throw InputError(fmt::format("{}: \"expand\" must map dimension names to self, children or leaves", where));
  for (const auto& [dim_name, spec] : expand->items()) {
    const auto d = schema.find_dimension(dim_name);
    if (!d) throw InputError(fmt::format("{}: expand: cube '{}' has no dimension '{}'", where, schema.name(), dim_name));
    const Dimension& dim = schema.dimension(*d);
    const int bits = parse_expand(spec, fmt::format("{}: expand: dimension '{}'", where, dim_name));
    std::vector<ElementId> list;
    std::set<ElementId> seen;
    auto add = [&](ElementId e) {
      if (seen.insert(e).second) list.push_back(e);
    };
    for (ElementId e : q.area[*d]) {
      if (bits & kSelf) add(e);
      if (bits & kChildren)
        for (const Child& c : dim.element(e).children) add(c.element);
      if (bits & kLeaves)
        for (const auto& [b, w] : dim.base_weights(e)) add(dim.base_element(b));
    }
    if (list.empty())
      throw InputError(fmt::format("{}: expand: dimension '{}': expanding leaves no elements (base elements have no children)",
                                   where, dim_name));
    q.area[*d] = std::move(list);
  }
  return q;
}

}  // namespace gpuolap::server
