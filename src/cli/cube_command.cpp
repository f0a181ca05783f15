// gpuolap cube build: every grouping set of a table's columns (hierarchies
// as rollups, or GROUPING SETS) by one of the cube-creation paper's
// algorithms or those past it; the cells as CSV on stdout or stored as a
// table of the database (--out), the stages on stderr (--timing), every
// algorithm compared with cpu-sequential (--selfcheck).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "commands.hpp"
#include "cube/full_cube.hpp"
#include "gpuolap/error.hpp"
#include "sql/binder.hpp"
#include "sql/result_format.hpp"
#include "sql/sql.hpp"
#include "table/database.hpp"

namespace gpuolap::cli {
namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void print_stages(const cube::CubeResult& r, std::string_view title) {
  std::cerr << fmt::format("  {}:\n", title);
  // The GPU's stages (summed over contexts) apart from the transfers and
  // the host's stages ("(host)", "(host, once)").
  double transfers = 0, gpu = 0;
  for (const auto& [name, ms] : r.stage_ms) {
    std::cerr << fmt::format("    {:<44} {:>10.3f} ms\n", name, ms);
    if (name.find("host to device") != std::string::npos || name.find("device to host") != std::string::npos)
      transfers += ms;
    else if (name.find("(host") == std::string::npos)
      gpu += ms;
  }
  if (cube::runs_on_gpu(r.algorithm))
    std::cerr << fmt::format("    {:<44} {:>10.3f} ms\n    {:<44} {:>10.3f} ms\n", "kernels (on the GPU, without transfers)",
                             gpu, "transfers", transfers);
}

int selfcheck(const cube::PreparedCube& prepared, const cube::BuildOptions& options) {
  cube::BuildOptions o = options;
  o.algorithm = cube::Algorithm::CpuSequential;
  const cube::CubeResult want = prepared.build(o);
  int failures = 0;
  std::cout << "algorithm,result,ms\n";
  for (const cube::Algorithm a : cube::all_algorithms()) {
    o.algorithm = a;
    std::string verdict;
    double ms = 0;
    if (cube::runs_on_gpu(a) && !cube::gpu_available()) {
      verdict = "not run: no GPU";
    } else {
      try {
        const auto start = std::chrono::steady_clock::now();
        const cube::CubeResult got = prepared.build(o);
        ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        const std::string why = cube::compare_results(want.table, got.table);
        verdict = why.empty() ? "same as cpu-sequential" : "DIFFERS from cpu-sequential: " + why;
        if (!why.empty()) ++failures;
      } catch (const InputError& e) {
        verdict = std::string("not applicable: ") + e.what();
      }
    }
    std::cout << fmt::format("{},{},{:.3f}\n", cube::algorithm_name(a), sql::csv_field(verdict), ms);
  }
  std::cerr << (failures ? fmt::format("cube build selfcheck: {} algorithm(s) differ from cpu-sequential\n", failures)
                         : std::string("cube build selfcheck: every algorithm that ran equals cpu-sequential\n"));
  return failures ? 1 : 0;
}

}  // namespace

int run_cube_build(const CubeBuildOptions& o) {
  table::Database database(o.db);
  const auto table = database.load(o.table);
  cube::CubeSpec spec = cube::parse_dims(o.dims);
  if (!o.sets.empty()) cube::parse_sets(o.sets, spec);
  cube::parse_measures(o.measure, spec, *table);
  if (!o.out.empty() && !table::is_valid_name(o.out))
    throw InputError(fmt::format("--out '{}' is not a table name (a letter or '_', then letters, digits or '_')", o.out));
  const cube::PreparedCube prepared(*table, spec);

  cube::BuildOptions options;
  if (o.algorithm != "auto") options.algorithm = cube::parse_algorithm(o.algorithm);
  options.threads = o.threads;
  options.device = o.device;
  if (!o.gpus.unset() && o.device >= 0)
    throw InputError(fmt::format("--device {} and --gpus {}: name the GPUs once (--gpus {} alone)", o.device,
                                 gpu_set_name(o.gpus), o.device));
  if (!o.gpus.unset() && !o.selfcheck) {
    if (options.algorithm && !cube::runs_on_gpu(*options.algorithm))
      throw InputError(fmt::format("--gpus {}: {} runs on the CPU (--gpus is for the gpu algorithms)",
                                   gpu_set_name(o.gpus), cube::algorithm_name(*options.algorithm)));
    if (!cube::gpu_available())
      throw InputError(fmt::format("--gpus {}: this machine has no GPU that gpuolap can use", gpu_set_name(o.gpus)));
  }
  if (o.gpus.all) {
    for (int d = 0; d < cube::gpu_count(); ++d) options.devices.push_back(d);
  } else {
    options.devices = o.gpus.devices;
  }
  options.timing = o.timing;
  options.keep_resident = !o.not_resident;
  options.upload_chunks = o.upload_chunks;
  if (o.upload_chunks > 0 && options.algorithm && !cube::runs_on_gpu(*options.algorithm) && !o.selfcheck)
    throw InputError(fmt::format("--upload-chunks {}: {} runs on the CPU and uploads nothing", o.upload_chunks,
                                 cube::algorithm_name(*options.algorithm)));
  options.gpu_split = cube::parse_split(o.gpu_split);
  if (options.gpu_split != cube::GpuSplit::Auto && options.devices.size() < 2 && !o.selfcheck)
    throw InputError(fmt::format("--gpu-split {}: it cuts the rows over several GPUs, and --gpus names {}", o.gpu_split,
                                 options.devices.empty() ? "none" : "one"));
  if (!o.sorted_runs.empty()) {
    options.sorted_runs = cube::parse_sorted_runs(o.sorted_runs);
    if (options.algorithm && !o.selfcheck && *options.algorithm != cube::Algorithm::GpuLattice &&
        *options.algorithm != cube::Algorithm::GpuExpand)
      throw InputError(fmt::format("--sorted-runs {}: {} reduces no sorted runs (gpu-lattice and gpu-expand do)",
                                   o.sorted_runs, cube::algorithm_name(*options.algorithm)));
  }
  if (o.selfcheck) return selfcheck(prepared, options);

  // Run 1 finds the table on the host (a GPU algorithm uploads it); later
  // runs find it resident on the GPU, unless --not-resident.
  std::vector<cube::CubeResult> runs;
  std::vector<double> wall;
  for (int r = 0; r < std::max(1, o.repeat); ++r) {
    const auto start = std::chrono::steady_clock::now();
    runs.push_back(prepared.build(options));
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (runs.size() > 2) runs.erase(runs.begin() + 1);  // keep the first and the last
  }
  cube::CubeResult& result = runs.back();

  if (!o.out.empty()) {
    result.table.name = o.out;
    database.store(result.table);
  } else {
    result.table.name = "cube_cells";
    sql::TablesInMemory catalog;
    catalog.add(std::make_shared<table::Table>(std::move(result.table)));
    sql::SqlOptions sql_options;
    sql_options.max_rows = std::numeric_limits<std::uint64_t>::max();
    std::cout << sql::format_result(sql::run(catalog, "SELECT * FROM cube_cells", sql_options), sql::ResultFormat::Csv);
    std::cout.flush();
  }
  if (o.timing) {
    std::size_t cells = 0;
    for (std::size_t n : result.cells_per_set) cells += n;
    std::cerr << fmt::format("cube build: {} rows, {} grouping sets, {} cells, algorithm {} ({})\n", table->row_count(),
                             spec.sets.size(), cells, cube::algorithm_name(result.algorithm), result.why);
    std::cerr << fmt::format("  encode (host, once): {:.3f} ms\n", prepared.encode_ms());
    print_stages(runs.front(), "run 1");
    const bool resident = cube::runs_on_gpu(result.algorithm) && !o.not_resident;
    if (runs.size() > 1) print_stages(runs.back(), fmt::format("run {}{}", wall.size(), resident ? " (the table resident)" : ""));
    std::cerr << fmt::format("  wall: run 1 {:.3f} ms", wall.front());
    if (wall.size() > 1)
      std::cerr << fmt::format(", runs 2..{} median {:.3f} ms, min {:.3f} ms", wall.size(),
                               median({wall.begin() + 1, wall.end()}), *std::min_element(wall.begin() + 1, wall.end()));
    std::cerr << "\n";
  }
  return 0;
}

}  // namespace gpuolap::cli
