// The algorithms behind build_cube, over the coded table: each returns the
// requested sets' cells in the spec's order. Internal to src/cube/.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "cube/coded_table.hpp"

namespace gpuolap::cube {

using StageTimes = std::vector<std::pair<std::string, double>>;

// Host stages timed by the wall clock: start(name) ends the previous stage.
class HostStages {
 public:
  HostStages(StageTimes& out, bool on) : out_(out), on_(on) {}
  ~HostStages() { stop(); }
  void start(std::string name) {
    stop();
    name_ = std::move(name);
    begin_ = std::chrono::steady_clock::now();
  }
  void stop() {
    if (!on_ || name_.empty()) return;
    out_.emplace_back(name_, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begin_).count());
    name_.clear();
  }

 private:
  StageTimes& out_;
  bool on_;
  std::string name_;
  std::chrono::steady_clock::time_point begin_;
};

// Whether a set of `cells` intersections is kept as a dense array (one
// state per possible intersection) rather than by its filled ones only: at
// most 2^26 cells, and at most 8 per row plus 2^16 so that a sparse cube of
// few rows does not allocate its whole key space.
inline bool dense_fits(std::uint64_t cells, std::size_t rows) {
  return cells <= (std::uint64_t{1} << 26) && cells <= 8 * static_cast<std::uint64_t>(rows) + (1 << 16);
}

std::vector<SetCells> build_cpu_sequential(const CodedTable& coded, const CubeSpec& spec, StageTimes& stages, bool timing);
std::vector<SetCells> build_cpu_partitioned(const CodedTable& coded, const CubeSpec& spec, int threads,
                                            StageTimes& stages, bool timing);
// The GPU algorithms (gpu/; a build without CUDA throws).
std::vector<SetCells> build_gpu(const CodedTable& coded, const CubeSpec& spec, Algorithm algorithm,
                                const BuildOptions& options, StageTimes& stages);

}  // namespace gpuolap::cube
