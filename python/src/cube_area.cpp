// Cube::area: an area query, answered as an Arrow record batch.
#include <nlohmann/json.hpp>

#include "cube.hpp"
#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/engine.hpp"
#include "gpuolap/formats.hpp"
#include "olap/over_limit.hpp"

namespace gpuolap::python {

namespace {

// The query JSON of `gpuolap query`, so that its checks and messages are the CLI's.
AreaQuery parse_area(const Schema& schema, const std::string& measure, const std::map<std::string, ElementList>& area,
                     const std::string& aggregate) {
  nlohmann::json q = {{"aggregate", aggregate}, {"area", nlohmann::json::object()}};
  if (!measure.empty()) q["measure"] = measure;
  for (const auto& [dim, list] : area) {
    if (std::holds_alternative<std::string>(list)) q["area"][dim] = std::get<std::string>(list);
    else q["area"][dim] = std::get<std::vector<std::string>>(list);
  }
  return parse_query_json(schema, q.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "Cube.area");
}

// The batch of a result: per dimension the names of the targets' elements, then the values.
std::unique_ptr<ExportedBatch> result_batch(const Schema& schema, const AreaQuery& query, const AreaResult& result) {
  const size_t dims = query.area.size(), rows = result.targets.size();
  // Each target's position in every dimension's list (mixed radix, the first dimension most significant).
  std::vector<std::vector<uint32_t>> positions(dims, std::vector<uint32_t>(rows));
  for (size_t r = 0; r < rows; ++r) {
    uint64_t t = result.targets[r];
    for (size_t d = dims; d-- > 0;) {
      positions[d][r] = static_cast<uint32_t>(t % query.area[d].size());
      t /= query.area[d].size();
    }
  }
  std::vector<ArrowColumn> columns;
  for (size_t d = 0; d < dims; ++d) {
    const Dimension& dim = schema.dimension(d);
    const auto& list = query.area[d];
    const auto& pos = positions[d];
    columns.push_back(utf8_column(dim.name(), rows, [&](size_t r) -> std::string_view {
      return dim.element(list[pos[r]]).name;
    }));
  }
  const std::string value_name = area_value_column(schema, query);
  if (query.aggregate == Aggregate::count) {
    std::vector<uint64_t> counts(result.values.begin(), result.values.end());
    columns.push_back(uint64_column(value_name, counts));
  } else {
    columns.push_back(float64_column(value_name, result.values));
  }
  return std::make_unique<ExportedBatch>(std::move(columns), static_cast<int64_t>(rows));
}

}  // namespace

std::unique_ptr<ExportedBatch> Cube::area(const std::string& measure, const std::map<std::string, ElementList>& area,
                                          const std::string& aggregate, const std::string& engine,
                                          uint64_t max_cells) const {
  const auto service = this->service();
  const AreaQuery query = parse_area(schema(), measure, area, aggregate);
  if (max_cells) olap::check_area_cells(query, max_cells);
  const AggregationMap map = service->map(query);
  const auto facts = service->snapshot();
  AreaResult result;
  if (engine.empty() || engine == service->engine_name()) result = service->run(*facts, map, query);
  else result = make_engine(engine, facts->size()).engine->run(*facts, map, query);
  return result_batch(schema(), query, result);
}

}  // namespace gpuolap::python
