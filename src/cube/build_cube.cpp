// build_cube: the table coded once, the algorithm chosen (auto) or asked
// for, its cells finished into the result table.
#include <fmt/format.h>

#include <chrono>

#include "cube/cube_algorithms.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap::cube {

std::pair<Algorithm, std::string> choose_algorithm(const CubeSpec& spec, const BuildOptions& options) {
  if (!gpu_available())
    return {Algorithm::CpuPartitioned,
            std::string("no GPU; the rows cut at intersection borders (sorted, or scattered into key ranges), a range "
                        "per task, then each coarser set from its smallest computed parent") +
                (options.threads == 1 ? ", on the one thread asked for" : "")};
  return {Algorithm::GpuLattice,
          fmt::format("a GPU: the rows read once for the finest set, each of the {} sets then from its smallest computed "
                      "parent's cells",
                      spec.sets.size())};
}

PreparedCube::PreparedCube(const table::Table& table, CubeSpec spec) : spec_(std::move(spec)) {
  const auto start = std::chrono::steady_clock::now();
  coded_ = std::make_unique<CodedTable>(code_table(table, spec_));
  encode_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

PreparedCube::~PreparedCube() = default;

CubeResult PreparedCube::build(const BuildOptions& options) const {
  CubeResult result;
  if (options.algorithm) {
    result.algorithm = *options.algorithm;
    result.why = "asked for";
  } else {
    std::tie(result.algorithm, result.why) = choose_algorithm(spec_, options);
  }
  std::vector<SetCells> sets;
  switch (result.algorithm) {
    case Algorithm::CpuSequential:
      sets = build_cpu_sequential(*coded_, spec_, result.stage_ms, options.timing);
      break;
    case Algorithm::CpuPartitioned:
      sets = build_cpu_partitioned(*coded_, spec_, options.threads, result.stage_ms, options.timing);
      break;
    default:
      sets = build_gpu(*coded_, spec_, result.algorithm, options, result.stage_ms);
      break;
  }
  for (const SetCells& s : sets) result.cells_per_set.push_back(s.keys.size());
  HostStages clock(result.stage_ms, options.timing);
  clock.start("result table (host)");
  result.table = finish_table(*coded_, spec_, sets);
  clock.stop();
  return result;
}

CubeResult build_cube(const table::Table& table, const CubeSpec& spec, const BuildOptions& options) {
  const PreparedCube prepared(table, spec);
  CubeResult result = prepared.build(options);
  if (options.timing) result.stage_ms.insert(result.stage_ms.begin(), {"encode (host)", prepared.encode_ms()});
  return result;
}

}  // namespace gpuolap::cube
