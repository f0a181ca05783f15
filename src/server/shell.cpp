#include "shell.hpp"

#include <fmt/format.h>

#include <string>

#include "api_error.hpp"
#include "olap/over_limit.hpp"
#include "formats/json_parse.hpp"

namespace gpuolap::server {

using nlohmann::json;

namespace {

template <class Body>
json answer_tree(CubeApi& api, const std::string& command, const std::string& arg, const std::string& where,
                 const Body& body) {
  if (command == "value") {
    if (!arg.empty() && arg.front() == '{') return api.value(body());
    return api.value(json{{"path", arg}});
  }
  if (command == "values") return api.values(body());
  if (command == "export") return api.export_cells(arg.empty() ? json::object() : body());
  if (command == "elements") return api.elements(json{{"dimension", arg}});
  if (command == "write") {
    const json b = body();
    return b.is_object() && b.contains("cells") ? api.replace_bulk(b) : api.replace(b);
  }
  if (command == "info") return api.cube_info();
  if (command == "save") return api.save();
  throw InputError(fmt::format("{}: unknown command '{}' ({})", where, command, shell_commands()));
}

std::string one_line(const json& reply) { return reply.dump(-1, ' ', false, json::error_handler_t::replace); }

// The answer to one command as one line of JSON. An area's is written
// straight from its result (as the HTTP route's), with no JSON tree of
// its cells: the keys in the order a tree dumps them, each number the
// shortest text of the same double (1e15 as 1000000000000000.0, where a
// tree writes 1e+15).
// `failed`: the answer is an error (an object with an "error" field).
std::string answer(CubeApi& api, const std::string& command, const std::string& arg, size_t line, bool& failed) {
  const std::string where = fmt::format("line {}", line);
  auto body = [&] { return parse_json(arg, fmt::format("{}: {}", where, command)); };
  if (command == "query") return api.area_text(body(), AnswerFormat::json).body;
  const json tree = answer_tree(api, command, arg, where, body);
  failed = tree.is_object() && tree.contains("error");
  return one_line(tree);
}

}  // namespace

const char* shell_commands() { return "query, value, values, export, elements, write, info, save, exit"; }

int run_shell(CubeApi& api, std::istream& in, std::ostream& out) {
  int failures = 0;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    const size_t space = line.find_first_of(" \t", start);
    const std::string command = line.substr(start, space == std::string::npos ? std::string::npos : space - start);
    std::string arg = space == std::string::npos ? "" : line.substr(line.find_first_not_of(" \t", space) == std::string::npos
                                                                        ? line.size()
                                                                        : line.find_first_not_of(" \t", space));
    if (command == "exit" || command == "quit") break;
    std::string reply;
    bool failed = false;
    try {
      reply = answer(api, command, arg, number, failed);
    } catch (const ApiError& e) {
      reply = one_line(json{{"error", e.code()}, {"detail", e.what()}});
      failed = true;
    } catch (const olap::OverLimit& e) {
      reply = one_line(json{{"error", e.code()}, {"detail", e.what()}});
      failed = true;
    } catch (const InputError& e) {
      reply = one_line(json{{"error", "bad_request"}, {"detail", e.what()}});
      failed = true;
    } catch (const std::exception& e) {
      reply = one_line(json{{"error", "internal"}, {"detail", e.what()}});
      failed = true;
    }
    failures += failed;
    out << reply << '\n' << std::flush;
  }
  return failures;
}

}  // namespace gpuolap::server
