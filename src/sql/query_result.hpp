// What a SQL query returns: named, typed columns of values, and what the
// engine chose and how long each operator took (for --timing).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sql/value_vector.hpp"

namespace gpuolap::sql {

struct OperatorTiming {
  std::string name;
  double seconds = 0;
  std::uint64_t rows_out = 0;
};

struct QueryResult {
  std::vector<std::string> names;
  std::vector<ValueVector> columns;  // one per name, all of `rows` rows
  std::size_t rows = 0;
  std::vector<std::string> plan;  // the plan's lines, with the choices and why
  std::vector<OperatorTiming> timings;
};

}  // namespace gpuolap::sql
