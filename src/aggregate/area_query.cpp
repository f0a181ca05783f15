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

Aggregate parse_aggregate(std::string_view name, const std::string& where) {
  for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::avg, Aggregate::min,
                      Aggregate::max})
    if (name == aggregate_name(a)) return a;
  throw InputError(fmt::format("{}: unknown aggregate '{}' (expected sum, count, avg, min or max)",
                               where, name));
}

}  // namespace gpuolap
