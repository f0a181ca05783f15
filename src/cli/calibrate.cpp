// `gpuolap calibrate`: measures, on this machine's GPU, what each kernel over
// the facts costs per unit of work (kernel_model.hpp), and stores it where
// the gpu engine's `auto` reads it. Kernel times are the engine's own
// `aggregate` stage (CUDA events; the copies study below times whole
// queries), the fastest of --repeat runs after a warm-up, on the
// Machines cube: M1 (one target per fact: the cost of a CDP launch, whose
// children have almost nothing to do), M2 (228 targets per fact) and M3
// (2 or 1,001: uneven). Each cost is a least-squares fit through the origin
// of the stage time, less the cost of reading the cells, over its unit of
// work (warp steps, pairs, launches). The copies of each target in a global
// store (the thesis' parallel hash functions) come from a slot budget per
// store, the one whose copies lose least on the Machines and Biker queries.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "commands.hpp"
#include "gpu/runtime/device_info.hpp"
#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"
#include "molap/planning/kernel_model.hpp"
#include "progress.hpp"

namespace gpuolap::cli {

namespace {

double stage_seconds(const StageTimes& stages, const std::string& name) {
  for (const auto& [stage, ms] : stages)
    if (stage == name) return ms / 1e3;
  return 0;
}

// The fastest aggregate stage of `repeat` runs after a warm-up.
double aggregate_seconds(Engine& engine, const FactTable& facts, const AggregationMap& map, const AreaQuery& q,
                         int repeat) {
  engine.time_stages(true);
  engine.run(facts, map, q);
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    engine.run(facts, map, q);
    best = std::min(best, stage_seconds(engine.stages(), "aggregate"));
  }
  return best;
}

// The copies study (kernel_model.hpp): each query's whole time, the fastest
// of `repeat` runs after a warm-up, at 1, 2, 4, ..., 64 copies of each
// target in `store`; printed as a table row per query.
std::vector<CopiesRun> time_copies(const GeneratedCube& cube, StoreKind store, int repeat) {
  using Clock = std::chrono::steady_clock;
  std::vector<CopiesRun> runs;
  for (const NamedQuery& nq : cube.queries) {
    const AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
    const AggregationMap map(cube.schema, q);
    std::string row = fmt::format("| {} | {} | {} |", nq.name, map.target_count(), knob_name(store));
    for (unsigned copies = 1; copies <= kMaxCopies; copies *= 2) {
      const GpuOptions g = copies_study_options({}, store, static_cast<int>(copies));
      auto engine = make_engine("gpu", cube.facts.size(), g).engine;
      engine->run(cube.facts, map, q);
      double best = 1e30;
      for (int r = 0; r < repeat; ++r) {
        const auto t = Clock::now();
        engine->run(cube.facts, map, q);
        best = std::min(best, std::chrono::duration<double>(Clock::now() - t).count());
      }
      runs.push_back({nq.name, map.target_count(), copies, best});
      row += fmt::format(" {:.3f} |", best * 1e3);
    }
    std::cout << row << '\n';
  }
  return runs;
}

// Least squares through the origin: the cost per unit of x.
double fit(const std::vector<std::pair<double, double>>& xy) {
  double xx = 0, xt = 0;
  for (const auto& [x, t] : xy) {
    xx += x * x;
    xt += x * std::max(t, 0.0);
  }
  return xx > 0 ? xt / xx : 0;
}

}  // namespace

int run_calibrate(const CalibrateOptions& o) {
  using Clock = std::chrono::steady_clock;
  const GpuStatus gpu = gpu_status();
  if (!gpu.cuda_build || gpu.device_count == 0) throw InputError("calibrate measures a GPU: " + gpu.problem);
  if (o.repeat < 1) throw InputError("--repeat must be at least 1");
  KernelCosts costs;
  costs.gpu = gpu.device_name;
  costs.per_cell = 16.0 / gpu_read_bandwidth();  // a key and a value at streaming bandwidth

  GeneratedCube cube = [&] {
    Progress progress("generating machines");
    return generate_cube("machines", o.scale, o.seed, progress.callback());
  }();
  const double cells = static_cast<double>(cube.facts.size());
  std::cout << fmt::format("calibrating on {}: Machines cube at scale {}, {} facts; per cell {:.3f} ns (16 B at the "
                           "measured streaming bandwidth)\n\n",
                           gpu.device_name, o.scale, cube.facts.size(), costs.per_cell * 1e9);
  std::cout << "| query | pairs | warp steps | child launches | source ms | work-list ms | cdp ms |\n"
               "|---|---:|---:|---:|---:|---:|---:|\n";
  std::vector<std::pair<double, double>> steps, pairs, launches, child_pairs;
  std::vector<std::tuple<FanOutStats, double>> cdp_runs;
  for (const NamedQuery& nq : cube.queries) {
    const AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
    const AggregationMap map(cube.schema, q);
    const FanOutStats s = sample_fan_out(cube.facts, map, q.measure);
    GpuOptions base;
    base.two_phase = TwoPhase::off;
    base.preagg = Preagg::none;
    base.phf = 1;
    base.variant = StoreKind::dense;
    GpuOptions source = base, work_list = base, cdp = base;
    source.kernel = KernelKind::source;
    work_list.kernel = KernelKind::work_list;
    cdp.kernel = KernelKind::cdp;
    const double t_source = aggregate_seconds(*make_engine("gpu", cube.facts.size(), source).engine, cube.facts, map, q, o.repeat);
    const double t_list = aggregate_seconds(*make_engine("gpu", cube.facts.size(), work_list).engine, cube.facts, map, q, o.repeat);
    const double t_cdp = aggregate_seconds(*make_engine("gpu-cdp", cube.facts.size(), cdp).engine, cube.facts, map, q, o.repeat);
    std::cout << fmt::format("| {} | {:.0f} | {:.0f} | {:.0f} | {:.3f} | {:.3f} | {:.3f} |\n", nq.name, s.pairs,
                             s.warp_steps, s.pages, t_source * 1e3, t_list * 1e3, t_cdp * 1e3);
    // M1's one target per fact: the lean (thread-run) kernel would serve it,
    // so its source time says little about warp steps; its CDP time is
    // almost all launches.
    if (s.pairs > cells * 1.5) {
      steps.push_back({s.warp_steps, t_source - cells * costs.per_cell});
      pairs.push_back({s.pairs, t_list - 2 * cells * costs.per_cell});
    }
    cdp_runs.push_back({s, t_cdp - cells * costs.per_cell});
  }
  costs.per_warp_step = fit(steps);
  costs.per_pair = fit(pairs);
  // Launch cost from the run with the fewest pairs per launch, then the
  // children's pair cost from the rest.
  std::sort(cdp_runs.begin(), cdp_runs.end(), [](const auto& a, const auto& b) {
    return std::get<0>(a).pairs / std::max(1.0, std::get<0>(a).pages) < std::get<0>(b).pairs / std::max(1.0, std::get<0>(b).pages);
  });
  const auto& [launch_stats, launch_time] = cdp_runs.front();
  costs.per_launch = std::max(0.0, launch_time) / std::max(1.0, launch_stats.pages);
  for (size_t i = 1; i < cdp_runs.size(); ++i) {
    const auto& [s, t] = cdp_runs[i];
    child_pairs.push_back({s.pairs, t - s.pages * costs.per_launch});
  }
  costs.per_child_pair = fit(child_pairs);

  // The CPU against the GPU's fixed cost: the GPU's whole query on the demo
  // cube, and cpu-parallel per fact on M1 (one contribution per fact).
  {
    const NamedQuery& m1 = cube.queries.front();
    const AreaQuery q = parse_query_json(cube.schema, m1.json, m1.name);
    const AggregationMap map(cube.schema, q);
    auto cpu = make_engine("cpu-parallel", cube.facts.size()).engine;
    cpu->run(cube.facts, map, q);
    auto t = Clock::now();
    cpu->run(cube.facts, map, q);
    const double cpu_per_fact = std::chrono::duration<double>(Clock::now() - t).count() / cells;
    GeneratedCube tiny = generate_cube("demo", 1.0, o.seed);
    const NamedQuery& first = tiny.queries.front();
    const AreaQuery tq = parse_query_json(tiny.schema, first.json, first.name);
    const AggregationMap tmap(tiny.schema, tq);
    auto g = make_engine("gpu", tiny.facts.size()).engine;
    g->run(tiny.facts, tmap, tq);
    double gpu_fixed = 1e30;
    for (int r = 0; r < std::max(3, o.repeat); ++r) {
      t = Clock::now();
      g->run(tiny.facts, tmap, tq);
      gpu_fixed = std::min(gpu_fixed, std::chrono::duration<double>(Clock::now() - t).count());
    }
    costs.gpu_fixed = gpu_fixed;
    costs.cpu_per_contribution = std::max(cpu_per_fact, 1e-12);  // M1: one contribution per fact
    std::cout << fmt::format("\nGPU query on the {}-fact demo cube: {:.3f} ms; cpu-parallel: {:.2f} ns per fact\n",
                             tiny.facts.size(), gpu_fixed * 1e3, cpu_per_fact * 1e9);
  }

  // The slot budgets: the copies study on the Machines and Biker cubes
  // (areas of 1 to 874,437 targets). At a hundredth of the thesis' Biker
  // cube B3's best copies were 2 where at full size they are 8 (H100): the
  // Biker cube is studied at the calibration's scale, 28 M facts by default.
  {
    GeneratedCube biker = [&] {
      Progress progress("generating biker");
      return generate_cube("biker", o.scale, o.seed, progress.callback());
    }();
    std::cout << fmt::format("\nCopies per target (ms, whole query; Biker cube at scale {}, {} facts):\n\n",
                             o.scale, biker.facts.size())
              << "| query | targets | store | 1 | 2 | 4 | 8 | 16 | 32 | 64 |\n"
                 "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n";
    std::string fits;
    for (const StoreKind store : {StoreKind::hash, StoreKind::dense}) {
      std::vector<CopiesRun> runs = time_copies(cube, store, o.repeat);
      const std::vector<CopiesRun> more = time_copies(biker, store, o.repeat);
      runs.insert(runs.end(), more.begin(), more.end());
      const SlotBudgetFit fit = fit_slot_budget(runs);
      (store == StoreKind::hash ? costs.hash_slot_budget : costs.dense_slot_budget) = fit.budget;
      fits += fmt::format("- {} store: slot budget {:.0f} (mean regret {:.3f} over these queries)\n",
                          knob_name(store), slot_budget(costs, store), fit.mean_regret);
    }
    std::cout << '\n' << fits;
  }

  std::cout << fmt::format(
      "\nper warp step {:.4f} ns, per pair {:.4f} ns, per child pair {:.4f} ns, per child launch {:.3f} us; the CPU "
      "answers first below about {:.0f} contributions\n",
      costs.per_warp_step * 1e9, costs.per_pair * 1e9, costs.per_child_pair * 1e9, costs.per_launch * 1e6,
      costs.gpu_fixed / costs.cpu_per_contribution);
  const std::string path = o.out.empty() ? calibration_path() : o.out;
  save_kernel_costs(costs, path);
  std::cout << "wrote " << path << '\n';
  return 0;
}

}  // namespace gpuolap::cli
