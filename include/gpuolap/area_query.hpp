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

// A target cell is numbered by its positions in the area's lists in mixed
// radix, the first dimension most significant; these are its positions.
std::vector<uint32_t> target_positions(const AreaQuery& query, uint64_t target);

// The non-empty target cells of an area, ascending by target number.
struct AreaResult {
  std::vector<uint64_t> targets;
  std::vector<double> values;  // the aggregate; counts are whole numbers
};

}  // namespace gpuolap
