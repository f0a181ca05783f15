#pragma once
// Maps of random areas over random cubes (gpuolap/random_cube.hpp), for the
// tests of what is built from a map: each(map) runs under a trace naming the
// cube's seed and the query.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>

#include "gpuolap/aggregation_map.hpp"
#include "molap/random_cube.hpp"

namespace gpuolap::testing {

template <class Each>
void for_random_maps(uint64_t cubes, int queries_per_cube, Each each) {
  for (uint64_t seed = 1; seed <= cubes; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    for (int q = 0; q < queries_per_cube; ++q) {
      const AggregationMap map(cube.schema, random_query(rng, cube.schema));
      SCOPED_TRACE("seed " + std::to_string(seed) + " query " + std::to_string(q));
      each(map);
    }
  }
}

}  // namespace gpuolap::testing
