// The prefilter's page step (gpu/relevant_pages.hpp): no page that holds a
// cell of the area is left out, on random cubes cut into pages of 1 to 64
// cells; and an area that keeps every base of every dimension skips none.
#include "molap/planning/relevant_pages.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "molap/random_cube.hpp"

namespace gpuolap {
namespace {

// The cube's facts cut into pages of `page_size` cells.
FactTable paged(const RandomCube& cube, size_t page_size) {
  std::vector<std::vector<double>> values;
  for (size_t m = 0; m < cube.facts.measure_count(); ++m)
    values.emplace_back(cube.facts.values(m).begin(), cube.facts.values(m).end());
  return FactTable(cube.schema.codec(), {cube.facts.keys().begin(), cube.facts.keys().end()}, values, page_size);
}

bool in_area(const AggregationMap& map, uint64_t key) {
  return map.for_each_target(key, [](uint64_t, double) {});
}

TEST(RelevantPages, NoPageWithACellOfTheAreaIsLeftOut) {
  size_t skipped = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    for (size_t page_size : {1, 3, 8, 64}) {
      const FactTable facts = paged(cube, page_size);
      for (int q = 0; q < 3; ++q) {
        const AggregationMap map(cube.schema, random_query(rng, cube.schema));
        const std::vector<uint8_t> pages = gpu::relevant_pages(map, facts);
        SCOPED_TRACE("seed " + std::to_string(seed) + " pages of " + std::to_string(page_size));
        if (pages.empty()) {
          for (size_t d = 0; d < map.dimension_count(); ++d)
            for (uint32_t b = 0; b + 1 < map.dimension(d).offsets.size(); ++b)
              ASSERT_TRUE(map.dimension(d).relevant(b)) << "no page list, yet base " << b << " of dimension " << d
                                                        << " is outside the area";
          continue;
        }
        ASSERT_EQ(pages.size(), facts.page_count());
        for (size_t i = 0; i < facts.size(); ++i) {
          if (in_area(map, facts.keys()[i])) {
            ASSERT_EQ(pages[i / page_size], 1) << "cell " << i << " is in the area";
          }
        }
        for (uint8_t p : pages) skipped += p == 0;
      }
    }
  }
  EXPECT_GT(skipped, 0u) << "no random area skipped a page: the test checks nothing";
}

// The sample before the full pass: on tables of many pages it finds every
// run of kStep or more pages to skip, and a page to skip only where there is
// one; small tables are always passed over.
TEST(RelevantPages, TheSampleOfPagesAgreesWithTheFullPass) {
  constexpr size_t kStep = 4;
  size_t sampled = 0, listed = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    for (size_t page_size : {1, 2, 64}) {
      const FactTable facts = paged(cube, page_size);
      for (int q = 0; q < 3; ++q) {
        const AggregationMap map(cube.schema, random_query(rng, cube.schema));
        const std::vector<uint8_t> pages = gpu::relevant_pages(map, facts);
        const bool skips = std::find(pages.begin(), pages.end(), 0) != pages.end();
        const bool worth = gpu::worth_listing_pages(map, facts, kStep);
        SCOPED_TRACE("seed " + std::to_string(seed) + " pages of " + std::to_string(page_size));
        if (pages.empty()) {
          EXPECT_FALSE(worth) << "no dimension can rule a page out";
        }
        if (facts.page_count() <= 8 * kStep) {
          EXPECT_EQ(worth, !pages.empty());
          continue;
        }
        ++sampled;
        if (worth) {
          EXPECT_TRUE(skips) << "the sample found a page to skip that the full pass keeps";
        }
        size_t run = 0, longest = 0;
        for (uint8_t p : pages) longest = std::max(longest, run = p ? 0 : run + 1);
        if (longest >= kStep) {
          EXPECT_TRUE(worth) << "the sample missed a run of " << longest << " pages to skip";
        }
        listed += worth;
      }
    }
  }
  EXPECT_GT(sampled, 20u) << "too few tables of many pages: the sample is not looked at";
  EXPECT_GT(listed, 0u) << "no sample found a page to skip: the test checks nothing";
}

}  // namespace
}  // namespace gpuolap
