#include "molap/planning/kernel_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "gpuolap/error.hpp"

namespace gpuolap {

namespace {
constexpr uint64_t kRuns = 64;  // sampled runs of consecutive facts
constexpr uint64_t kRunCells = 4 * FanOutStats::kPageCells;
}  // namespace

FanOutStats sample_fan_out(const FactTable& facts, const AggregationMap& map, size_t measure) {
  FanOutStats s;
  const auto keys = facts.keys();
  const auto values = facts.values(measure);
  s.cells = keys.size();
  if (keys.empty()) return s;
  // Runs of kRunCells facts evenly spread over the table (all of a small one).
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  if (keys.size() <= kRuns * kRunCells) {
    runs.push_back({0, keys.size()});
  } else {
    for (uint64_t r = 0; r < kRuns; ++r) runs.push_back({r * (keys.size() - kRunCells) / (kRuns - 1), kRunCells});
  }
  std::vector<double> fan_outs;
  for (const auto& [first, count] : runs) {
    fan_outs.assign(count, 0.0);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t at = first + i;
      if (!has_value(values[at])) continue;
      fan_outs[i] = static_cast<double>(map.fan_out(keys[at]));
    }
    for (uint64_t page = 0; page < count; page += FanOutStats::kPageCells) {
      const uint64_t end = std::min(count, page + FanOutStats::kPageCells);
      double sum = 0, squares = 0, steps = 0;
      for (uint64_t i = page; i < end; ++i) {
        sum += fan_outs[i];
        squares += fan_outs[i] * fan_outs[i];
        s.relevant += fan_outs[i] > 0;
      }
      for (uint64_t w = page; w < end; w += 32)
        steps += *std::max_element(fan_outs.begin() + static_cast<ptrdiff_t>(w),
                                   fan_outs.begin() + static_cast<ptrdiff_t>(std::min(end, w + 32)));
      s.pairs += sum;
      s.warp_steps += steps;
      if (sum == 0) continue;
      s.pages += 1;
      const double cells = static_cast<double>(end - page);
      const double mean = sum / cells;
      if (squares / cells > 2.0 * mean * mean) {  // the hybrid's test (cdp_kernels.cu)
        s.uneven_pages += 1;
        s.uneven_pairs += sum;
        s.uneven_steps += steps;
      }
    }
    s.sampled += count;
  }
  const double scale = static_cast<double>(s.cells) / static_cast<double>(s.sampled);
  for (double* x : {&s.relevant, &s.pairs, &s.warp_steps, &s.pages, &s.uneven_pages, &s.uneven_pairs, &s.uneven_steps})
    *x *= scale;
  return s;
}

std::string calibration_path() {
  if (const char* p = std::getenv("GPUOLAP_CALIBRATION"); p && *p) return p;
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/gpuolap/calibration.json";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/gpuolap/calibration.json";
  return "gpuolap-calibration.json";
}

namespace {
constexpr const char* kFields[] = {"per_cell_s", "per_warp_step_s", "per_pair_s", "per_child_pair_s", "per_launch_s"};
double* field(KernelCosts& c, int i) {
  double* f[] = {&c.per_cell, &c.per_warp_step, &c.per_pair, &c.per_child_pair, &c.per_launch};
  return f[i];
}
}  // namespace

KernelCosts load_kernel_costs(const std::string& gpu_name, std::string* source) {
  KernelCosts defaults;
  const std::string path = calibration_path();
  const auto say = [&](const std::string& s) {
    if (source) *source = s;
  };
  std::ifstream in(path);
  if (!in) {
    say("default costs, measured on an H100 (run `gpuolap calibrate` for this GPU)");
    return defaults;
  }
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    KernelCosts c;
    c.gpu = j.at("gpu").get<std::string>();
    if (c.gpu != gpu_name) {
      say(fmt::format("default costs: {} was calibrated on {}, not this {}", path, c.gpu, gpu_name));
      return defaults;
    }
    for (int i = 0; i < 5; ++i) {
      *field(c, i) = j.at(kFields[i]).get<double>();
      if (!(*field(c, i) >= 0) || !std::isfinite(*field(c, i))) throw std::runtime_error(std::string(kFields[i]) + " is not a time");
    }
    c.gpu_fixed = j.at("gpu_fixed_s").get<double>();
    c.cpu_per_contribution = j.at("cpu_per_contribution_s").get<double>();
    if (!(c.gpu_fixed >= 0) || !(c.cpu_per_contribution > 0)) throw std::runtime_error("the CPU and GPU fixed costs are not times");
    // A calibration from before the slot budgets keeps its kernel costs and
    // takes the default budgets.
    const bool has_budgets = j.contains("hash_slot_budget") || j.contains("dense_slot_budget");
    if (has_budgets) {
      c.hash_slot_budget = j.at("hash_slot_budget").get<double>();
      c.dense_slot_budget = j.at("dense_slot_budget").get<double>();
      if (!(c.hash_slot_budget >= 1) || !(c.dense_slot_budget >= 1) || !std::isfinite(c.hash_slot_budget) ||
          !std::isfinite(c.dense_slot_budget))
        throw std::runtime_error("the slot budgets are not counts of slots");
    }
    say(fmt::format("costs calibrated on this GPU ({}){}", path,
                    has_budgets ? ""
                                : "; default slot budgets (calibrated before them: run `gpuolap calibrate` again)"));
    return c;
  } catch (const std::exception& e) {
    say(fmt::format("default costs: {} is unreadable ({}); run `gpuolap calibrate` again", path, e.what()));
    return defaults;
  }
}

void save_kernel_costs(const KernelCosts& c, const std::string& path) {
  nlohmann::ordered_json j;
  j["gpu"] = c.gpu;
  KernelCosts copy = c;
  for (int i = 0; i < 5; ++i) j[kFields[i]] = *field(copy, i);
  j["gpu_fixed_s"] = c.gpu_fixed;
  j["cpu_per_contribution_s"] = c.cpu_per_contribution;
  j["hash_slot_budget"] = c.hash_slot_budget;
  j["dense_slot_budget"] = c.dense_slot_budget;
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  // Written whole to a temporary file, then renamed: never half a file.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2) << '\n';
    if (!out.flush()) throw InputError(fmt::format("{}: cannot write the calibration", tmp));
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw InputError(fmt::format("{}: cannot write the calibration", path));
  }
}

double estimated_contributions(const AggregationMap& map, uint64_t cells) {
  double per_fact = 1;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& dm = map.dimension(d);
    const size_t bases = dm.offsets.size() - 1;
    if (bases > 0) per_fact *= static_cast<double>(dm.offsets.back()) / static_cast<double>(bases);
  }
  return per_fact * static_cast<double>(cells);
}

double cpu_looks(const AggregationMap& map, uint64_t cells) {
  return std::max(static_cast<double>(cells), estimated_contributions(map, cells));
}

bool cpu_answers_first(const AggregationMap& map, uint64_t cells, const KernelCosts& c) {
  return cpu_looks(map, cells) * c.cpu_per_contribution < c.gpu_fixed;
}

unsigned copies_for_budget(double budget, uint64_t targets) {
  const double share = budget / static_cast<double>(std::max<uint64_t>(targets, 1));
  unsigned copies = 1;
  while (copies < kMaxCopies && 2.0 * copies <= share) copies *= 2;
  return copies;
}

double slot_budget(const KernelCosts& c, StoreKind store) {
  return store == StoreKind::hash ? c.hash_slot_budget
                                    : std::min(c.dense_slot_budget, static_cast<double>(kMaxDenseSlots));
}

unsigned model_copies(const KernelCosts& c, StoreKind store, uint64_t targets) {
  return copies_for_budget(slot_budget(c, store), targets);
}

GpuOptions copies_study_options(GpuOptions base, StoreKind store, int copies) {
  base.kernel = KernelKind::source;
  base.two_phase = TwoPhase::off;
  base.preagg = Preagg::none;
  base.variant = store;
  base.phf = copies;
  return base;
}

SlotBudgetFit fit_slot_budget(const std::vector<CopiesRun>& runs) {
  // Each query's runs by copies, and its fastest time.
  std::map<std::string, std::map<unsigned, double>> by_query;
  std::map<std::string, uint64_t> targets;
  uint64_t widest = 1;
  for (const CopiesRun& r : runs) {
    auto [it, fresh] = by_query[r.query].emplace(r.copies, r.seconds);
    if (!fresh) it->second = std::min(it->second, r.seconds);
    targets[r.query] = r.targets;
    widest = std::max(widest, r.targets);
  }
  if (by_query.empty()) return {};
  // The time of the copies the budget gives, or of the nearest timed ones.
  const auto time_of = [](const std::map<unsigned, double>& times, unsigned copies) {
    auto it = times.lower_bound(copies);
    if (it == times.end()) return std::prev(it)->second;
    if (it->first != copies && it != times.begin() && copies - std::prev(it)->first < it->first - copies)
      return std::prev(it)->second;
    return it->second;
  };
  // Past the widest area's kMaxCopies copies every budget gives every
  // timed query the same copies: the search stops there, so that a tie up
  // to that edge does not reach for budgets nothing was measured under.
  const int max_log = static_cast<int>(std::ceil(std::log2(static_cast<double>(widest) * kMaxCopies)));
  std::vector<double> regret(max_log + 1, 0.0);
  for (int k = 0; k <= max_log; ++k) {
    for (const auto& [query, times] : by_query) {
      double fastest = 1e300;
      for (const auto& [copies, t] : times) fastest = std::min(fastest, t);
      const double t = time_of(times, copies_for_budget(std::ldexp(1.0, k), targets[query]));
      regret[k] += fastest > 0 ? t / fastest : 1.0;
    }
    regret[k] /= static_cast<double>(by_query.size());
  }
  const double best = *std::min_element(regret.begin(), regret.end());
  std::vector<int> ties;
  for (int k = 0; k <= max_log; ++k)
    if (regret[k] <= best * (1 + 1e-12)) ties.push_back(k);
  const int k = ties[ties.size() / 2];
  return {std::ldexp(1.0, k), regret[k]};
}

std::vector<KernelPrediction> predict_kernels(const FanOutStats& s, const KernelCosts& c) {
  // A CDP parent block's share of a page is kPageCells facts (256 threads),
  // and it launches one child per share with any pair.
  const double cells = static_cast<double>(s.cells);
  std::vector<KernelPrediction> p{
      {KernelKind::source, cells * c.per_cell + s.warp_steps * c.per_warp_step},
      {KernelKind::work_list, 2 * cells * c.per_cell + s.pairs * c.per_pair},
      {KernelKind::cdp, cells * c.per_cell + s.pages * c.per_launch + s.pairs * c.per_child_pair},
      // The hybrid's parent counts every cell's fan-out before it walks or
      // hands off the page: a second look at each cell.
      {KernelKind::hybrid, 2 * cells * c.per_cell + (s.warp_steps - s.uneven_steps) * c.per_warp_step +
                     s.uneven_pages * c.per_launch + s.uneven_pairs * c.per_child_pair},
  };
  // Stable: a tie goes to the kernel listed first, the source kernel.
  std::stable_sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.seconds < b.seconds; });
  return p;
}

}  // namespace gpuolap
