#include "json_parse.hpp"

#include <fmt/format.h>

#include <set>
#include <vector>

#include "gpuolap/error.hpp"

namespace gpuolap {

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> keys_of_open_objects;
  auto check = [&](int depth, json::parse_event_t event, json& parsed) {
    // Deeper documents are no schema or query, and printing or walking them
    // recursively could exhaust the stack.
    if (depth > kMaxJsonDepth)
      throw InputError(fmt::format("{}: malformed JSON: nested more than {} levels deep", where, kMaxJsonDepth));
    switch (event) {
      case json::parse_event_t::object_start: keys_of_open_objects.emplace_back(); break;
      case json::parse_event_t::object_end: keys_of_open_objects.pop_back(); break;
      case json::parse_event_t::key:
        if (!keys_of_open_objects.back().insert(parsed.get<std::string>()).second)
          throw InputError(fmt::format("{}: malformed JSON: key \"{}\" appears twice in one object", where,
                                       parsed.get<std::string>()));
        break;
      default: break;
    }
    return true;
  };
  try {
    return json::parse(text, check);
  } catch (const json::exception& e) {
    throw InputError(fmt::format("{}: malformed JSON: {}", where, e.what()));
  }
}

}  // namespace gpuolap
