#pragma once
// An area query: for every dimension a list of elements (the target cells are
// their cartesian product), a measure and an aggregate.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuolap/dimension.hpp"

namespace gpuolap {

enum class Aggregate { sum, count, avg, min, max };

const char* aggregate_name(Aggregate a);
// Throws InputError naming `where` for an unknown name.
Aggregate parse_aggregate(std::string_view name, const std::string& where);

struct AreaQuery {
  size_t measure = 0;
  Aggregate aggregate = Aggregate::sum;
  std::vector<std::vector<ElementId>> area;  // one non-empty list per dimension
};

}  // namespace gpuolap
