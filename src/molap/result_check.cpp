#include "molap/result_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cpu_engines.hpp"

namespace gpuolap {

AreaResult contribution_magnitudes(const FactTable& facts, const AggregationMap& map, size_t measure) {
  std::vector<double> magnitudes(facts.values(measure).begin(), facts.values(measure).end());
  for (double& v : magnitudes) v = std::abs(v);
  const FactTable absolute(map.codec(), std::vector<uint64_t>(facts.keys().begin(), facts.keys().end()),
                           {std::move(magnitudes)}, facts.page_size());
  return CpuParallelEngine().run(absolute, map.with_absolute_weights(), AreaQuery{0, Aggregate::sum, {}});
}

std::string compare_results(const AreaResult& oracle, const AreaResult& other, Aggregate aggregate,
                            const AreaResult& magnitudes) {
  if (oracle.targets.size() != other.targets.size())
    return fmt::format("{} non-empty cells, the oracle has {}", other.targets.size(), oracle.targets.size());
  const bool exact = aggregate == Aggregate::count || aggregate == Aggregate::min || aggregate == Aggregate::max;
  for (size_t i = 0; i < oracle.targets.size(); ++i) {
    if (oracle.targets[i] != other.targets[i])
      return fmt::format("cell {} is target {}, the oracle's is {}", i, other.targets[i], oracle.targets[i]);
    const double want = oracle.values[i], got = other.values[i];
    double tolerance = 0.0;
    if (!exact) {
      auto it = std::lower_bound(magnitudes.targets.begin(), magnitudes.targets.end(), oracle.targets[i]);
      if (it != magnitudes.targets.end() && *it == oracle.targets[i])
        tolerance = 1e-9 * magnitudes.values[static_cast<size_t>(it - magnitudes.targets.begin())];
    }
    if (!(std::abs(want - got) <= tolerance))
      return fmt::format("target {}: {:.17g}, the oracle says {:.17g} (tolerance {:.3g})", oracle.targets[i], got,
                         want, tolerance);
  }
  return "";
}

}  // namespace gpuolap
