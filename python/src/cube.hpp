#pragma once
// gpuolap.Cube in C++, without Python types: a cube store opened read-write
// as `gpuolap shell` opens it (a durable cube behind olap::CubeService,
// holding the store lock until closed), its area queries, cells and writes.
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "arrow_export.hpp"
#include "gpuolap/area_query.hpp"
#include "olap/cube_service.hpp"

namespace gpuolap::python {

// An element list of an area: "*" (every element) or names.
using ElementList = std::variant<std::string, std::vector<std::string>>;
// A cell path: names separated by commas, or a list of names.
using PathSpec = std::variant<std::string, std::vector<std::string>>;

class Cube {
 public:
  Cube(const std::string& dir, const std::string& engine);

  const std::string& dir() const { return dir_; }
  const std::string& engine() const { return engine_; }
  // The schema, which never changes while the cube is open (usable after close).
  const Schema& schema() const { return *schema_; }
  // What opening found in the log ("" when nothing was wrong).
  const std::string& recovery_problem() const { return recovery_problem_; }
  size_t filled_cells() const;

  // The non-empty target cells of an area as a record batch: one utf8 column
  // per dimension, then "<aggregate>(<measure>)" (float64, uint64 for count).
  // `engine` "" runs the cube's engine; `max_cells` 0: no limit.
  std::unique_ptr<ExportedBatch> area(const std::string& measure, const std::map<std::string, ElementList>& area,
                                      const std::string& aggregate, const std::string& engine, uint64_t max_cells) const;
  // One cell's aggregate, nullopt when empty. `measure` "": the first.
  std::optional<double> value(const PathSpec& path, const std::string& measure, const std::string& aggregate) const;
  // Writes cells all or nothing (later cells see earlier ones); a NaN value
  // with mode set clears the measure. Returns the log record's sequence
  // number and the base cells written.
  olap::WriteOutcome write(const std::vector<PathSpec>& paths, const std::vector<std::optional<double>>& values,
                           const std::string& mode, const std::string& measure, const std::string& splash) const;
  // Writes a snapshot and truncates the log.
  void save() const;
  // Releases the store (its lock); later calls are refused.
  void close();
  bool closed() const;

 private:
  std::shared_ptr<olap::CubeService> service() const;

  std::string dir_, engine_;
  std::shared_ptr<const Schema> schema_;
  std::string recovery_problem_;
  mutable std::mutex mutex_;
  std::shared_ptr<olap::CubeService> service_;
};

}  // namespace gpuolap::python
