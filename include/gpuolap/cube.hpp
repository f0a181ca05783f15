#pragma once
// A cube: its schema and its facts, as a store holds them.
#include "gpuolap/fact_table.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {

struct Cube {
  Schema schema;
  FactTable facts;
};

}  // namespace gpuolap
