// Cube::write: cells written all or nothing, as the server's cell/replace_bulk
// writes them (olap::resolve_assignment over an overlay of the cells before).
#include <fmt/format.h>

#include <cmath>

#include "cube.hpp"
#include "gpuolap/error.hpp"
#include "olap/cell_overlay.hpp"
#include "olap/over_limit.hpp"
#include "olap/splash.hpp"

namespace gpuolap::python {

namespace {

// Base cells one splash may write (the server's default limit).
constexpr uint64_t kMaxSplashCells = 1000000;

WriteMode parse_mode(const std::string& name, const std::string& where) {
  if (name == "set") return WriteMode::set;
  if (name == "add") return WriteMode::add;
  if (name == "delete") return WriteMode::remove;
  throw InputError(fmt::format("{}: unknown mode '{}' (expected set, add or delete)", where, name));
}

olap::CellPath parse_path(const Schema& schema, const PathSpec& path, const std::string& where) {
  if (std::holds_alternative<std::string>(path)) return olap::parse_cell_path_text(schema, std::get<std::string>(path), where);
  return olap::parse_cell_path(schema, nlohmann::json(std::get<std::vector<std::string>>(path)), where);
}

}  // namespace

olap::WriteOutcome Cube::write(const std::vector<PathSpec>& paths, const std::vector<std::optional<double>>& values,
                               const std::string& mode, const std::string& measure, const std::string& splash) const {
  const auto service = this->service();
  const std::string where = "Cube.write";
  if (paths.size() != values.size()) throw InputError(where + ": one value a path");
  if (paths.empty()) throw InputError(where + ": no cells to write");
  const Schema& schema = this->schema();
  std::vector<olap::CellAssignment> assignments;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string at = fmt::format("{}: cell {}", where, i + 1);
    olap::CellAssignment a;
    a.path = parse_path(schema, paths[i], at);
    a.measure = olap::find_measure_or_first(schema, measure, at);
    a.mode = parse_mode(mode, at);
    a.splash = olap::parse_splash(splash, at);
    if (a.mode == WriteMode::remove) {
      if (values[i]) throw InputError(at + ": mode delete takes no value");
    } else if (values[i]) {
      if (!std::isfinite(*values[i])) throw InputError(at + ": the value must be finite");
      a.value = *values[i];
    } else if (a.mode != WriteMode::set) {
      throw InputError(at + ": mode add needs a value (None clears a cell only with mode set)");
    }
    assignments.push_back(std::move(a));
  }
  return service->write([&](const olap::CellReader& reader) {
    // Later cells see the effect of earlier ones (a splash after a write under it).
    LogRecord record;
    olap::Overlay mine;
    const olap::CellReader layered = reader.layered(mine);
    for (size_t i = 0; i < assignments.size(); ++i) {
      LogRecord one;
      try {
        olap::resolve_assignment(schema, layered, assignments[i], kMaxSplashCells, one);
        olap::lay_over(mine, layered, one, schema.measures().size());
      } catch (const InputError& e) {
        throw InputError(fmt::format("{}: cell {}: {}", where, i + 1, e.what()));
      }
      for (auto& b : one.batches) record.batches.push_back(std::move(b));
    }
    return record;
  });
}

}  // namespace gpuolap::python
