#include "molap/result_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "cpu_engines.hpp"

namespace gpuolap {

AreaResult contribution_magnitudes(const FactTable& facts, const AggregationMap& map, size_t measure,
                                   size_t slice_facts) {
  // The slices' sums of magnitudes add up per target.
  slice_facts = std::max<size_t>(slice_facts, 1);
  const AggregationMap absolute_map = map.with_absolute_weights();
  const auto keys = facts.keys();
  const auto values = facts.values(measure);
  AreaResult total;
  size_t begin = 0;
  do {
    const size_t end = std::min(facts.size(), begin + slice_facts);
    std::vector<double> magnitudes(values.begin() + begin, values.begin() + end);
    for (double& v : magnitudes) v = std::abs(v);
    const FactTable slice(map.codec(), std::vector<uint64_t>(keys.begin() + begin, keys.begin() + end),
                          {std::move(magnitudes)}, facts.page_size());
    AreaResult part = CpuParallelEngine().run(slice, absolute_map, AreaQuery{0, Aggregate::sum, {}});
    if (begin == 0) {
      total = std::move(part);
    } else {
      AreaResult merged;
      size_t i = 0, j = 0;
      while (i < total.targets.size() || j < part.targets.size()) {
        const bool take_total = j == part.targets.size() ||
                                (i < total.targets.size() && total.targets[i] <= part.targets[j]);
        const bool take_part = i == total.targets.size() ||
                               (j < part.targets.size() && part.targets[j] <= total.targets[i]);
        merged.targets.push_back(take_total ? total.targets[i] : part.targets[j]);
        merged.values.push_back((take_total ? total.values[i++] : 0.0) + (take_part ? part.values[j++] : 0.0));
      }
      total = std::move(merged);
    }
    begin = end;
  } while (begin < facts.size());
  return total;
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
