#include "olap/cell_value.hpp"

#include "gpuolap/aggregation_map.hpp"

namespace gpuolap::olap {

std::optional<double> cell_value(CubeService& service, const FactTable& facts, const CellPath& path, size_t measure,
                                 Aggregate aggregate) {
  if (path.base) {
    const size_t i = facts.find(path.key);
    if (i == facts.size() || !has_value(facts.values(measure)[i])) return std::nullopt;
    return aggregate == Aggregate::count ? 1.0 : facts.values(measure)[i];
  }
  AreaQuery q;
  q.measure = measure;
  q.aggregate = aggregate;
  for (ElementId e : path.elements) q.area.push_back({e});
  const AggregationMap map = service.map(q);
  const AreaResult r = service.run(facts, map, q);
  if (r.targets.empty()) return std::nullopt;
  return r.values[0];
}

}  // namespace gpuolap::olap
