#include "cube.hpp"

#include <fmt/format.h>

#include "gpuolap/durable_cube.hpp"
#include "gpuolap/error.hpp"
#include "olap/cell_paths.hpp"
#include "olap/cell_value.hpp"

namespace gpuolap::python {

Cube::Cube(const std::string& dir, const std::string& engine) : dir_(dir), engine_(engine) {
  auto cube = std::make_unique<DurableCube>(
      dir, ProgressFn{},
      [&] {
        throw InputError(
            fmt::format("{}: in use by another process (a server, a shell or a write); stop it first", dir));
      },
      LogRecovery::refuse_corruption);
  const Recovery& r = cube->recovery();
  if (!r.problem.empty())
    recovery_problem_ = fmt::format("{}: {}{}", log_file(dir).string(), r.problem,
                                    r.bytes_dropped ? fmt::format(" (the {} bytes are kept in cube.wal.bad)", r.bytes_dropped) : "");
  service_ = std::make_shared<olap::CubeService>(std::move(cube), engine, kCheckpointLogBytes);
  schema_ = std::make_shared<const Schema>(service_->schema());
}

std::shared_ptr<olap::CubeService> Cube::service() const {
  std::lock_guard lock(mutex_);
  if (!service_) throw InputError(fmt::format("{}: the cube is closed", dir_));
  return service_;
}

bool Cube::closed() const {
  std::lock_guard lock(mutex_);
  return !service_;
}

void Cube::close() {
  std::shared_ptr<olap::CubeService> last;
  {
    std::lock_guard lock(mutex_);
    last = std::move(service_);
  }
  // Destroyed here unless a query on another thread still holds it, then when it ends.
}

size_t Cube::filled_cells() const { return service()->snapshot()->size(); }

std::optional<double> Cube::value(const PathSpec& path, const std::string& measure, const std::string& aggregate) const {
  const auto service = this->service();
  const std::string where = "Cube.value";
  const olap::CellPath cell = std::holds_alternative<std::string>(path)
                                  ? olap::parse_cell_path_text(schema(), std::get<std::string>(path), where)
                                  : olap::parse_cell_path(schema(), nlohmann::json(std::get<1>(path)), where);
  const size_t m = olap::find_measure_or_first(schema(), measure, where);
  const Aggregate a = parse_aggregate(aggregate, where);
  const auto facts = service->snapshot();
  return olap::cell_value(*service, *facts, cell, m, a);
}

void Cube::save() const { service()->save(); }

}  // namespace gpuolap::python
