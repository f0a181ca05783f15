#include "gpuolap/area_query.hpp"

#include <fmt/format.h>

#include "gpuolap/error.hpp"

namespace gpuolap {

const char* aggregate_name(Aggregate a) {
  switch (a) {
    case Aggregate::sum: return "sum";
    case Aggregate::count: return "count";
    case Aggregate::avg: return "avg";
    case Aggregate::min: return "min";
    case Aggregate::max: return "max";
  }
  return "?";
}

std::vector<uint32_t> target_positions(const AreaQuery& query, uint64_t target) {
  std::vector<uint32_t> pos(query.area.size());
  for (size_t d = query.area.size(); d-- > 0;) {
    const uint64_t n = query.area[d].size();
    pos[d] = static_cast<uint32_t>(target % n);
    target /= n;
  }
  return pos;
}

Aggregate parse_aggregate(std::string_view name, const std::string& where) {
  for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::avg, Aggregate::min,
                      Aggregate::max})
    if (name == aggregate_name(a)) return a;
  throw InputError(fmt::format("{}: unknown aggregate '{}' (expected sum, count, avg, min or max)",
                               where, name));
}

}  // namespace gpuolap
