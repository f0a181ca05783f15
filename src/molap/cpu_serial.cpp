#include <algorithm>
#include <unordered_map>

#include "cpu_engines.hpp"

namespace gpuolap {

double CellAccumulator::finish(Aggregate a, const SumGrid& g) const {
  switch (a) {
    case Aggregate::sum: return sum.to_double(g);
    case Aggregate::count: return static_cast<double>(count);
    case Aggregate::avg: return sum.to_double(g) / static_cast<double>(count);
    case Aggregate::min: return min;
    case Aggregate::max: return max;
  }
  return sum.to_double(g);
}

AreaResult finish_cells(const std::vector<std::pair<uint64_t, CellAccumulator>>& cells, Aggregate a,
                        const SumGrid& g) {
  AreaResult result;
  result.targets.reserve(cells.size());
  result.values.reserve(cells.size());
  for (const auto& [target, acc] : cells) {
    result.targets.push_back(target);
    result.values.push_back(acc.finish(a, g));
  }
  return result;
}

// Thesis listing 2: iterate the filled source cells; add each one's value,
// times its weight, to every target cell it belongs to.
AreaResult CpuSerialEngine::run(const FactTable& facts, const AggregationMap& map,
                                const AreaQuery& query) {
  std::unordered_map<uint64_t, CellAccumulator> targets;
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  const SumGrid grid = map.sum_grid(facts, query.measure);
  for (size_t i = 0; i < keys.size(); ++i) {
    const double v = values[i];
    if (!has_value(v)) continue;
    map.for_each_target(keys[i], [&](uint64_t target, double weight) { targets[target].add(v, weight, grid); });
  }
  std::vector<std::pair<uint64_t, CellAccumulator>> cells(targets.begin(), targets.end());
  std::sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return finish_cells(cells, query.aggregate, grid);
}

}  // namespace gpuolap
