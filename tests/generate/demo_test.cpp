#include <gtest/gtest.h>

#include "molap/cpu_engines.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"
#include "support/compare_results.hpp"

namespace gpuolap {
namespace {

TEST(Demo, IsDeterministicAndItsQueriesRun) {
  const GeneratedCube a = generate_demo(42), b = generate_demo(42), c = generate_demo(43);
  ASSERT_GT(a.facts.size(), 100u);
  EXPECT_TRUE(std::equal(a.facts.keys().begin(), a.facts.keys().end(), b.facts.keys().begin(), b.facts.keys().end()));
  EXPECT_FALSE(std::equal(a.facts.keys().begin(), a.facts.keys().end(), c.facts.keys().begin(), c.facts.keys().end()));
  ASSERT_GE(a.queries.size(), 3u);
  for (const NamedQuery& nq : a.queries) {
    const AreaQuery q = parse_query_json(a.schema, nq.json, nq.name);
    const AggregationMap map(a.schema, q);
    const AreaResult serial = CpuSerialEngine().run(a.facts, map, q);
    EXPECT_FALSE(serial.targets.empty()) << nq.name;
    testing::expect_same_bits(serial, CpuParallelEngine().run(a.facts, map, q), nq.name);
  }
}

}  // namespace
}  // namespace gpuolap
