#pragma once
// Deterministic cube generators: the embedded demo sales cube, and cubes of
// the shapes of the thesis' Biker and Machines cubes with its queries B1-B3
// and M1-M3 (thesis table 5.1), plus machines-skewed, the Machines cube with
// a far more uneven fan-out in M3 (src/generate/machines_cube.cpp).
#include <cstdint>
#include <string>
#include <vector>

#include "gpuolap/fact_table.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {

struct NamedQuery {
  std::string name;  // e.g. "B1"
  std::string json;  // in the query JSON format
};

struct GeneratedCube {
  Schema schema;
  FactTable facts;
  std::vector<NamedQuery> queries;
};

// Throws InputError for an unknown kind or a scale that is not positive.
GeneratedCube generate_cube(const std::string& kind, double scale, uint64_t seed,
                            const ProgressFn& progress = {});

GeneratedCube generate_demo(uint64_t seed);
GeneratedCube generate_biker(double scale, uint64_t seed, const ProgressFn& progress);
GeneratedCube generate_machines(double scale, uint64_t seed, const ProgressFn& progress);
GeneratedCube generate_machines_skewed(double scale, uint64_t seed, const ProgressFn& progress);

}  // namespace gpuolap
