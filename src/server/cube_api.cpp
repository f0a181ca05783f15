#include "cube_api.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "answer_buffers.hpp"
#include "api_error.hpp"
#include "area_request.hpp"
#include "gpuolap/elapsed.hpp"
#include "olap/cell_paths.hpp"
#include "olap/cell_value.hpp"
#include "olap/export_scan.hpp"
#include "olap/over_limit.hpp"
#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/formats.hpp"
#include "olap/splash.hpp"
#include "olap/value_condition.hpp"

namespace gpuolap::server {

using nlohmann::json;
using olap::CellAssignment;
using olap::CellPath;
using olap::CellReader;
using olap::cell_value;
using olap::CubeService;
using olap::Overlay;
using olap::ServiceStats;
using olap::ValueCondition;
using olap::WriteOutcome;
using olap::find_measure_or_first;
using olap::lay_over;
using olap::parse_cell_path;
using olap::parse_cell_path_text;
using olap::parse_splash;
using olap::path_names;
using olap::resolve_assignment;

namespace {

// A client's value quoted in an error: query parameters may hold bytes that
// are not UTF-8, which a plain dump() throws on.
std::string quoted(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

void check_fields(const json& request, std::initializer_list<const char*> known, const std::string& where) {
  if (!request.is_object()) throw InputError(fmt::format("{}: the request must be a JSON object", where));
  // Not a structured binding: clang before 16 cannot capture one in the lambda.
  for (const auto& item : request.items()) {
    const std::string& key = item.key();
    if (std::none_of(known.begin(), known.end(), [&](const char* k) { return key == k; }))
      throw InputError(fmt::format("{}: unknown field \"{}\"", where, key));
  }
}

std::string string_field(const json& request, const char* key, const std::string& where, const std::string& fallback = "") {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (!it->is_string()) throw InputError(fmt::format("{}: \"{}\" must be a string", where, key));
  return it->get<std::string>();
}

const json& required(const json& request, const char* key, const std::string& where) {
  const auto it = request.find(key);
  if (it == request.end()) throw InputError(fmt::format("{}: \"{}\" is missing", where, key));
  return *it;
}

// A whole number, given as a JSON number or as text (query parameters).
uint64_t count_field(const json& request, const char* key, uint64_t fallback, const std::string& where) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (it->is_number_unsigned()) return it->get<uint64_t>();
  uint64_t v = 0;
  if (it->is_string()) {
    const std::string s = it->get<std::string>();
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && !s.empty()) return v;
  }
  throw InputError(fmt::format("{}: \"{}\" must be a whole number, not {}", where, key, quoted(*it)));
}

bool bool_field(const json& request, const char* key, bool fallback, const std::string& where) {
  const auto it = request.find(key);
  if (it == request.end()) return fallback;
  if (it->is_boolean()) return it->get<bool>();
  if (*it == "true" || *it == "1") return true;
  if (*it == "false" || *it == "0") return false;
  throw InputError(fmt::format("{}: \"{}\" must be true or false, not {}", where, key, quoted(*it)));
}

WriteMode parse_mode(const std::string& name, const std::string& where) {
  if (name == "set" || name.empty()) return WriteMode::set;
  if (name == "add") return WriteMode::add;
  if (name == "delete") return WriteMode::remove;
  throw InputError(fmt::format("{}: unknown mode '{}' (expected set, add or delete)", where, name));
}

json number(double v, Aggregate a) {
  if (a == Aggregate::count) return static_cast<uint64_t>(v);
  return v;
}

// Levels counted from the bottom (base: 0) and depths from the top (roots: 0).
void levels_and_depths(const Dimension& dim, std::vector<int>& level, std::vector<int>& depth) {
  const size_t n = dim.element_count();
  level.assign(n, -1);
  depth.assign(n, -1);
  std::function<int(ElementId)> level_of = [&](ElementId e) {
    if (level[e] >= 0) return level[e];
    int l = 0;
    for (const Child& c : dim.element(e).children) l = std::max(l, level_of(c.element) + 1);
    return level[e] = l;
  };
  std::function<int(ElementId)> depth_of = [&](ElementId e) {
    if (depth[e] >= 0) return depth[e];
    int d = 0;
    for (ElementId p : dim.parents(e)) d = std::max(d, depth_of(p) + 1);
    return depth[e] = d;
  };
  for (ElementId e = 0; e < n; ++e) {
    level_of(e);
    depth_of(e);
  }
}

}  // namespace

json CubeApi::server_info() const {
  const ServiceStats s = service_.stats();
  return json{{"server", "gpuolap"},
              {"version", "0.1.0"},
              {"api_version", 1},
              {"cube", service_.schema().name()},
              {"engine", service_.engine_name()},
              {"writes", s.writes},
              {"write_groups", s.groups},
              {"limits", {{"max_cells", limits_.max_cells}, {"max_paths", limits_.max_paths},
                          {"max_blocksize", limits_.max_blocksize}, {"max_body_bytes", limits_.max_body_bytes}}}};
}

json CubeApi::cube_info() const {
  const Schema& schema = service_.schema();
  const auto facts = service_.snapshot();
  const ServiceStats s = service_.stats();
  json dims = json::array();
  for (const Dimension& d : schema.dimensions())
    dims.push_back({{"name", d.name()},
                    {"elements", d.element_count()},
                    {"base_elements", d.base_count()},
                    {"consolidated_elements", d.element_count() - d.base_count()},
                    {"depth", d.depth()},
                    {"key_bits", d.key_bits()}});
  return json{{"name", schema.name()},
              {"dimensions", std::move(dims)},
              {"measures", schema.measures()},
              {"filled_cells", facts->size()},
              {"base_cells", schema.base_cell_count()},
              {"log", {{"bytes", s.log_bytes},
                       {"last_sequence", s.last_sequence},
                       {"checkpoints", s.checkpoints},
                       {"records_replayed_at_start", service_.recovery().records_replayed},
                       {"recovery_problem", service_.recovery().problem}}}};
}

json CubeApi::elements(const json& request) const {
  const std::string where = "dimension/elements";
  check_fields(request, {"dimension"}, where);
  const std::string name = string_field(request, "dimension", where);
  if (name.empty()) throw InputError(where + ": \"dimension\" names the dimension");
  const Schema& schema = service_.schema();
  const auto d = schema.find_dimension(name);
  if (!d) throw InputError(fmt::format("{}: cube '{}' has no dimension '{}'", where, schema.name(), name));
  const Dimension& dim = schema.dimension(*d);
  std::vector<int> level, depth;
  levels_and_depths(dim, level, depth);
  json elements = json::array();
  for (ElementId e = 0; e < dim.element_count(); ++e) {
    const Element& el = dim.element(e);
    json parents = json::array(), children = json::array();
    for (ElementId p : dim.parents(e)) parents.push_back(dim.element(p).name);
    for (const Child& c : el.children) children.push_back({{"name", dim.element(c.element).name}, {"weight", c.weight}});
    elements.push_back({{"name", el.name},
                        {"id", e},
                        {"type", el.is_base() ? "base" : "consolidated"},
                        {"level", level[e]},
                        {"depth", depth[e]},
                        {"parents", std::move(parents)},
                        {"children", std::move(children)}});
  }
  return json{{"dimension", dim.name()}, {"elements", std::move(elements)}};
}

json CubeApi::value(const json& request) const {
  const std::string where = "cell/value";
  check_fields(request, {"path", "measure", "aggregate"}, where);
  const Schema& schema = service_.schema();
  const CellPath path = parse_cell_path(schema, required(request, "path", where), where);
  const size_t measure = find_measure_or_first(schema, string_field(request, "measure", where), where);
  const Aggregate aggregate = parse_aggregate(string_field(request, "aggregate", where, "sum"), where);
  const auto facts = service_.snapshot();
  const auto v = cell_value(service_, *facts, path, measure, aggregate);
  return json{{"path", path_names(schema, path.elements)},
              {"measure", schema.measures()[measure]},
              {"aggregate", aggregate_name(aggregate)},
              {"consolidated", !path.base},
              {"value", v ? number(*v, aggregate) : json(nullptr)}};
}

json CubeApi::values(const json& request) const {
  const std::string where = "cell/values";
  check_fields(request, {"paths", "measure", "aggregate"}, where);
  const Schema& schema = service_.schema();
  const json& paths = required(request, "paths", where);
  if (!paths.is_array()) throw InputError(where + ": \"paths\" must be a list of paths");
  if (paths.size() > limits_.max_paths)
    throw ApiError(413, "too_many_paths", fmt::format("{}: {} paths; the limit is {}", where, paths.size(), limits_.max_paths));
  const size_t measure = find_measure_or_first(schema, string_field(request, "measure", where), where);
  const Aggregate aggregate = parse_aggregate(string_field(request, "aggregate", where, "sum"), where);
  std::vector<CellPath> cells;
  for (size_t i = 0; i < paths.size(); ++i) cells.push_back(parse_cell_path(schema, paths[i], fmt::format("{}: path {}", where, i + 1)));
  const auto facts = service_.snapshot();  // one snapshot for every path
  // A sheet's worth of consolidated cells costs one pass over the facts: an
  // area over the elements the paths name, when it is within the limit.
  std::vector<std::optional<double>> values(cells.size());
  const size_t consolidated = std::count_if(cells.begin(), cells.end(), [](const CellPath& c) { return !c.base; });
  AreaQuery q;
  q.measure = measure;
  q.aggregate = aggregate;
  q.area.resize(schema.dimension_count());
  std::vector<std::map<ElementId, uint32_t>> position(schema.dimension_count());
  for (const CellPath& c : cells) {
    if (c.base) continue;
    for (size_t d = 0; d < c.elements.size(); ++d)
      if (position[d].emplace(c.elements[d], static_cast<uint32_t>(q.area[d].size())).second) q.area[d].push_back(c.elements[d]);
  }
  if (consolidated > 1 && olap::target_cells(q) <= static_cast<double>(limits_.max_cells)) {
    const AggregationMap map = service_.map(q);
    const AreaResult r = service_.run(*facts, map, q);
    for (size_t i = 0; i < cells.size(); ++i) {
      if (cells[i].base) {
        values[i] = cell_value(service_, *facts, cells[i], measure, aggregate);
        continue;
      }
      uint64_t target = 0;
      for (size_t d = 0; d < q.area.size(); ++d) target += position[d].at(cells[i].elements[d]) * map.stride(d);
      const auto at = std::lower_bound(r.targets.begin(), r.targets.end(), target);
      if (at != r.targets.end() && *at == target) values[i] = r.values[static_cast<size_t>(at - r.targets.begin())];
    }
  } else {
    for (size_t i = 0; i < cells.size(); ++i) values[i] = cell_value(service_, *facts, cells[i], measure, aggregate);
  }
  json out = json::array();
  for (size_t i = 0; i < cells.size(); ++i)
    out.push_back({{"path", path_names(schema, cells[i].elements)},
                   {"value", values[i] ? number(*values[i], aggregate) : json(nullptr)}});
  json dims = json::array();
  for (const Dimension& d : schema.dimensions()) dims.push_back(d.name());
  return json{{"dimensions", std::move(dims)}, {"measure", schema.measures()[measure]},
              {"aggregate", aggregate_name(aggregate)}, {"cells", std::move(out)}};
}

CubeApi::AreaAnswer CubeApi::answer_area(const json& request) const {
  const Schema& schema = service_.schema();
  auto start = SteadyClock::now();
  AreaAnswer a{parse_area_request(schema, request, "cell/area"), {}, 0};
  olap::check_area_cells(a.query, limits_.max_cells);
  a.steps.parse_ms = ms_since(start);
  start = SteadyClock::now();
  const AggregationMap map = service_.map(a.query);
  a.target_cells = map.target_count();
  a.steps.map_ms = ms_since(start);
  start = SteadyClock::now();
  const auto facts = service_.snapshot();
  a.result = service_.run(*facts, map, a.query);
  a.steps.engine_ms = ms_since(start);
  return a;
}

CubeApi::AreaText CubeApi::area_text(const json& request, AnswerFormat format) const {
  const AreaAnswer a = answer_area(request);
  // Built in memory an earlier answer left (answer_buffers.hpp).
  AreaText text{AnswerBuffers::shared().take(), a.steps};
  const auto start = SteadyClock::now();
  append_area_answer(text.body, service_.schema(), a.query, a.result, a.target_cells, format);
  text.steps.write_ms = ms_since(start);
  return text;
}

json CubeApi::export_cells(const json& request) const {
  const std::string where = "cell/export";
  const Schema& schema = service_.schema();
  if (!request.is_object()) throw InputError(where + ": the request must be a JSON object");
  json area_part = request;
  // The whole cube unless an area is given.
  if (!area_part.contains("area")) {
    area_part["area"] = json::object();
    for (const Dimension& d : schema.dimensions()) area_part["area"][d.name()] = "*";
  }
  if (!area_part.contains("measure")) area_part["measure"] = schema.measures()[0];
  const std::vector<std::string> extra{"blocksize", "path", "condition", "base_only"};
  const AreaQuery q = parse_area_request(schema, area_part, where, extra);
  const uint64_t blocksize = count_field(request, "blocksize", 1000, where);
  if (blocksize == 0 || blocksize > limits_.max_blocksize)
    throw InputError(fmt::format("{}: \"blocksize\" must be 1 to {}", where, limits_.max_blocksize));
  const std::string condition_text = string_field(request, "condition", where);
  const ValueCondition condition = condition_text.empty() ? ValueCondition() : ValueCondition(condition_text);
  const bool base_only = bool_field(request, "base_only", true, where);

  const auto facts = service_.snapshot();
  const olap::ExportScan scan(schema, *facts, q, base_only, limits_.max_cells,
                              [this](const FactTable& f, const AggregationMap& m, const AreaQuery& query) {
                                return service_.run(f, m, query);
                              },
                              where);
  std::optional<CellPath> after;
  if (const auto resume = request.find("path"); resume != request.end())
    after = resume->is_string() ? parse_cell_path_text(schema, resume->get<std::string>(), where + ": path")
                                : parse_cell_path(schema, *resume, where + ": path");
  const olap::ExportPage page = scan.page(after, blocksize, condition);
  json cells = json::array();
  for (const olap::ExportedCell& c : page.cells)
    cells.push_back({{"path", path_names(schema, c.path)}, {"value", base_only ? json(c.value) : number(c.value, q.aggregate)}});
  json next = page.next ? path_names(schema, page.next->elements) : json(nullptr);
  json dims = json::array();
  for (const Dimension& d : schema.dimensions()) dims.push_back(d.name());
  return json{{"dimensions", std::move(dims)},
              {"measure", schema.measures()[q.measure]},
              {"aggregate", base_only ? "value" : aggregate_name(q.aggregate)},
              {"cells", std::move(cells)},
              {"done", page.done()},
              {"next", std::move(next)},
              {"progress", {{"scanned", page.scanned}, {"total", page.total}}}};
}

namespace {

CellAssignment parse_assignment(const Schema& schema, const json& cell, const json& defaults, const std::string& where) {
  CellAssignment a;
  a.path = parse_cell_path(schema, required(cell, "path", where), where);
  auto field = [&](const char* key) {
    return cell.contains(key) ? string_field(cell, key, where) : string_field(defaults, key, where);
  };
  a.measure = find_measure_or_first(schema, field("measure"), where);
  a.mode = parse_mode(field("mode"), where);
  a.splash = parse_splash(field("splash"), where);
  if (a.mode == WriteMode::remove) {
    if (cell.contains("value")) throw InputError(where + ": mode delete takes no \"value\"");
    return a;
  }
  const json& v = required(cell, "value", where);
  if (v.is_null() && a.mode == WriteMode::set) return a;  // clears the measure of a base cell
  if (!v.is_number()) throw InputError(fmt::format("{}: \"value\" must be a number, not {}", where, quoted(v)));
  a.value = v.get<double>();
  if (!std::isfinite(a.value)) throw InputError(where + ": \"value\" must be finite");
  return a;
}

json write_answer(const WriteOutcome& o) {
  return json{{"ok", true}, {"sequence", o.sequence}, {"cells_written", o.cells}};
}

}  // namespace

json CubeApi::replace(const json& request) const {
  const std::string where = "cell/replace";
  check_fields(request, {"path", "value", "measure", "mode", "splash"}, where);
  const CellAssignment a = parse_assignment(service_.schema(), request, json::object(), where);
  const uint64_t max_cells = limits_.max_cells;
  const Schema& schema = service_.schema();
  return write_answer(service_.write([&, a](const CellReader& reader) {
    LogRecord record;
    resolve_assignment(schema, reader, a, max_cells, record);
    return record;
  }));
}

json CubeApi::replace_bulk(const json& request) const {
  const std::string where = "cell/replace_bulk";
  check_fields(request, {"cells", "measure", "mode", "splash"}, where);
  const Schema& schema = service_.schema();
  const json& list = required(request, "cells", where);
  if (!list.is_array() || list.empty()) throw InputError(where + ": \"cells\" must be a non-empty list");
  json defaults = request;
  defaults.erase("cells");
  std::vector<CellAssignment> assignments;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}: cell {}", where, i + 1);
    check_fields(list[i], {"path", "value", "measure", "mode", "splash"}, at);
    assignments.push_back(parse_assignment(schema, list[i], defaults, at));
  }
  const uint64_t max_cells = limits_.max_cells;
  return write_answer(service_.write([&](const CellReader& reader) {
    // Later cells see the effect of earlier ones (a splash after a write under it).
    LogRecord record;
    Overlay mine;
    const CellReader layered = reader.layered(mine);
    uint64_t cells = 0;
    for (size_t i = 0; i < assignments.size(); ++i) {
      LogRecord one;
      try {
        resolve_assignment(schema, layered, assignments[i], max_cells, one);
        // The limit bounds the whole write, whose record must fit in memory and in the log.
        for (const WriteBatch& b : one.batches) cells += b.size();
        if (cells > max_cells)
          throw ApiError(413, "too_many_cells",
                         fmt::format("the write would write {} or more base cells; the limit is {}", cells, max_cells));
        lay_over(mine, layered, one, schema.measures().size());
      } catch (const ApiError& e) {
        throw ApiError(e.status(), e.code(), fmt::format("{}: cell {}: {}", where, i + 1, e.what()));
      } catch (const olap::OverLimit& e) {
        throw ApiError(413, e.code(), fmt::format("{}: cell {}: {}", where, i + 1, e.what()));
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: cell {}: {}", where, i + 1, e.what()));
      }
      for (auto& b : one.batches) record.batches.push_back(std::move(b));
    }
    return record;
  }));
}

json CubeApi::save() const {
  service_.save();
  const ServiceStats s = service_.stats();
  return json{{"ok", true}, {"checkpoints", s.checkpoints}, {"log_bytes", s.log_bytes}};
}

std::string cells_csv(const Schema& schema, const json& answer, const std::string& value_column) {
  std::string out;
  for (const Dimension& d : schema.dimensions()) out += csv_field(d.name()) + ",";
  out += csv_field(value_column) + "\n";
  for (const json& cell : answer.at("cells")) {
    for (const json& name : cell.at("path")) out += csv_field(name.get<std::string>()) + ",";
    const json& v = cell.at("value");
    if (v.is_number_unsigned()) out += std::to_string(v.get<uint64_t>());
    else if (v.is_number()) out += fmt::format("{:.17g}", v.get<double>());
    out += "\n";
  }
  return out;
}

std::string elements_csv(const json& answer) {
  // The same columns as the JSON answer's fields, id included.
  std::string out = "id,name,type,level,depth,parents,children\n";
  for (const json& e : answer.at("elements")) {
    std::string parents, children;
    for (const json& p : e.at("parents")) parents += (parents.empty() ? "" : ";") + p.get<std::string>();
    for (const json& c : e.at("children"))
      children += fmt::format("{}{}:{:.17g}", children.empty() ? "" : ";", c.at("name").get<std::string>(), c.at("weight").get<double>());
    out += fmt::format("{},{},{},{},{},{},{}\n", e.at("id").get<uint64_t>(), csv_field(e.at("name")),
                       e.at("type").get<std::string>(), e.at("level").get<int>(), e.at("depth").get<int>(),
                       csv_field(parents), csv_field(children));
  }
  return out;
}

}  // namespace gpuolap::server
