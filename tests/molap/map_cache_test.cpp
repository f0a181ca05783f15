// DimensionMapCache: a dimension's map kept for the next query asking the
// same list, the same map as built anew, the least recently used dropped
// past the budget.
#include <gtest/gtest.h>

#include <random>

#include "gpuolap/aggregation_map.hpp"
#include "molap/cpu_engines.hpp"
#include "molap/random_cube.hpp"

namespace gpuolap {
namespace {

void expect_same_maps(const AggregationMap& a, const AggregationMap& b) {
  ASSERT_EQ(a.dimension_count(), b.dimension_count());
  EXPECT_EQ(a.target_count(), b.target_count());
  for (size_t d = 0; d < a.dimension_count(); ++d) {
    EXPECT_EQ(a.dimension(d).offsets, b.dimension(d).offsets) << d;
    EXPECT_EQ(a.dimension(d).positions, b.dimension(d).positions) << d;
    EXPECT_EQ(a.dimension(d).weights, b.dimension(d).weights) << d;
    EXPECT_EQ(a.dimension(d).relevant_prefix, b.dimension(d).relevant_prefix) << d;
  }
}

TEST(DimensionMapCache, KeptMapsEqualBuiltOnesAndAnswerTheSame) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    DimensionMapCache cache;
    std::vector<AreaQuery> queries;
    for (int q = 0; q < 5; ++q) queries.push_back(random_query(rng, cube.schema));
    for (int round = 0; round < 2; ++round)
      for (const AreaQuery& q : queries) {
        const AggregationMap kept(cube.schema, q, &cache);
        const AggregationMap built(cube.schema, q);
        expect_same_maps(kept, built);
        EXPECT_EQ(CpuSerialEngine().run(cube.facts, kept, q).values, CpuSerialEngine().run(cube.facts, built, q).values);
      }
    const DimensionMapCache::Stats s = cache.stats();
    // The second round asks only lists asked before.
    EXPECT_GE(s.hits, 5 * cube.schema.dimension_count()) << "seed " << seed;
    EXPECT_EQ(s.hits + s.misses, 10 * cube.schema.dimension_count());
  }
}

TEST(DimensionMapCache, DropsTheLeastRecentlyUsedPastItsBudget) {
  const RandomCube cube = random_cube(3);
  std::mt19937_64 rng(3);
  DimensionMapCache cache(1);  // one byte: only the map just made stays
  for (int q = 0; q < 10; ++q) AggregationMap(cube.schema, random_query(rng, cube.schema), &cache);
  EXPECT_EQ(cache.stats().maps, 1u);
  EXPECT_EQ(cache.stats().hits, 0u);
}

}  // namespace
}  // namespace gpuolap
