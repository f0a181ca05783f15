// Result CSV: the dimension names and "<aggregate>(<measure>)", then one row
// per non-empty target cell in area order. Numbers read back exactly.
#include <fmt/format.h>

#include "gpuolap/formats.hpp"

namespace gpuolap {

void write_result_csv(const Schema& schema, const AreaQuery& query, const AreaResult& result, std::ostream& out) {
  const size_t k = schema.dimension_count();
  std::string line;
  for (size_t d = 0; d < k; ++d) line += csv_field(schema.dimension(d).name()) + ",";
  line += csv_field(fmt::format("{}({})", aggregate_name(query.aggregate),
                                schema.measures()[query.measure]));
  out << line << '\n';
  for (size_t i = 0; i < result.targets.size(); ++i) {
    const std::vector<uint32_t> pos = target_positions(query, result.targets[i]);
    line.clear();
    for (size_t d = 0; d < k; ++d)
      line += csv_field(schema.dimension(d).element(query.area[d][pos[d]]).name) + ",";
    const double v = result.values[i];
    if (query.aggregate == Aggregate::count)
      line += fmt::format("{}", static_cast<uint64_t>(v));
    else
      line += fmt::format("{:.17g}", v);
    out << line << '\n';
  }
}

}  // namespace gpuolap
