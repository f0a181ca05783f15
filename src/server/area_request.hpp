#pragma once
// The area of cell/area and cell/export: the query JSON of `gpuolap query`
// ({"measure", "aggregate", "area"}) plus Palo's `expand`: per dimension
// "self", "children" or "leaves", or a list of them, replacing each listed
// element by itself, its direct children and/or the base elements under it
// (in that order, each element once).
#include <nlohmann/json.hpp>
#include <string>

#include "gpuolap/area_query.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap::server {

// Fields of the request other than `extra_fields` and the query's own are
// refused, naming them.
AreaQuery parse_area_request(const Schema& schema, const nlohmann::json& body, const std::string& where,
                             const std::vector<std::string>& extra_fields = {});

}  // namespace gpuolap::server
