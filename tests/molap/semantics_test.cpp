// The query semantics on a hand-computed cube: weights along every path of a
// DAG are summed, weights multiply across dimensions, zero weights (given or
// cancelled) contribute nothing, absent values contribute nothing, and empty
// target cells are left out.
#include <gtest/gtest.h>

#include <sstream>

#include "molap/cpu_engines.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "molap/random_cube.hpp"

namespace gpuolap {
namespace {

const char* kSchema = R"({"name": "Hand", "dimensions": [
  {"name": "P", "elements": [
    {"name": "Mix", "children": [{"name": "AB", "weight": 0.5}, {"name": "C", "weight": -1}, {"name": "A"}]},
    {"name": "A"}, {"name": "B"}, {"name": "C"},
    {"name": "AB", "children": [{"name": "A"}, {"name": "B", "weight": 2}]},
    {"name": "X", "children": [{"name": "A"}]},
    {"name": "Y", "children": [{"name": "A"}]},
    {"name": "Cancel", "children": [{"name": "X"}, {"name": "Y", "weight": -1}]},
    {"name": "ZeroW", "children": [{"name": "B", "weight": 0}]}]},
  {"name": "T", "elements": [
    {"name": "t1"}, {"name": "t2"},
    {"name": "All", "children": [{"name": "t1"}, {"name": "t2"}]},
    {"name": "Half", "children": [{"name": "t1", "weight": 0.5}]}]}],
  "measures": ["M", "N"]})";

const char* kFacts = "T,P,M\nt1,A,10\nt1,B,4\nt2,C,3\nt2,B,\n";

const char* kQuery = R"({"measure": "M", "aggregate": "%s",
  "area": {"P": ["A", "AB", "Mix", "Cancel", "ZeroW"], "T": ["All", "t1", "Half"]}})";

std::string run(const std::string& aggregate, Engine& engine) {
  const Schema schema = parse_schema_json(kSchema, "schema");
  const FactTable facts = build_fact_table(schema, parse_facts_csv(schema, kFacts, "facts", true), "facts");
  char text[512];
  std::snprintf(text, sizeof text, kQuery, aggregate.c_str());
  const AreaQuery query = parse_query_json(schema, text, "query");
  const AggregationMap map(schema, query);
  std::ostringstream out;
  write_result_csv(schema, query, engine.run(facts, map, query), out);
  return out.str();
}

class Semantics : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Engine> engine() {
    if (GetParam() == "cpu-serial") return std::make_unique<CpuSerialEngine>();
    return std::make_unique<CpuParallelEngine>();
  }
};

TEST_P(Semantics, Sum) {
  EXPECT_EQ(run("sum", *engine()),
            "P,T,sum(M)\n"
            "A,All,10\nA,t1,10\nA,Half,5\n"
            "AB,All,18\nAB,t1,18\nAB,Half,9\n"
            "Mix,All,16\nMix,t1,19\nMix,Half,9.5\n");
}

TEST_P(Semantics, Count) {
  EXPECT_EQ(run("count", *engine()),
            "P,T,count(M)\n"
            "A,All,1\nA,t1,1\nA,Half,1\n"
            "AB,All,2\nAB,t1,2\nAB,Half,2\n"
            "Mix,All,3\nMix,t1,2\nMix,Half,2\n");
}

TEST_P(Semantics, Avg) {
  EXPECT_EQ(run("avg", *engine()),
            "P,T,avg(M)\n"
            "A,All,10\nA,t1,10\nA,Half,5\n"
            "AB,All,9\nAB,t1,9\nAB,Half,4.5\n"
            "Mix,All,5.333333333333333\nMix,t1,9.5\nMix,Half,4.75\n");
}

TEST_P(Semantics, MinAndMaxAreTakenOverWeightedContributions) {
  EXPECT_EQ(run("min", *engine()),
            "P,T,min(M)\n"
            "A,All,10\nA,t1,10\nA,Half,5\n"
            "AB,All,8\nAB,t1,8\nAB,Half,4\n"
            "Mix,All,-3\nMix,t1,4\nMix,Half,2\n");
  EXPECT_EQ(run("max", *engine()),
            "P,T,max(M)\n"
            "A,All,10\nA,t1,10\nA,Half,5\n"
            "AB,All,10\nAB,t1,10\nAB,Half,5\n"
            "Mix,All,15\nMix,t1,15\nMix,Half,7.5\n");
}

INSTANTIATE_TEST_SUITE_P(CpuEngines, Semantics, ::testing::Values("cpu-serial", "cpu-parallel"));

TEST(Semantics, AMeasureWithoutValuesGivesAnEmptyResult) {
  const Schema schema = parse_schema_json(kSchema, "schema");
  const FactTable facts = build_fact_table(schema, parse_facts_csv(schema, kFacts, "facts", true), "facts");
  const AreaQuery query = parse_query_json(
      schema, R"({"measure": "N", "area": {"P": "*", "T": "*"}})", "query");
  const AggregationMap map(schema, query);
  EXPECT_TRUE(CpuSerialEngine().run(facts, map, query).targets.empty());
}

TEST(Semantics, ListsMayRepeatElementsAndStarIsSchemaOrder) {
  const Schema schema = parse_schema_json(kSchema, "schema");
  const FactTable facts = build_fact_table(schema, parse_facts_csv(schema, kFacts, "facts", true), "facts");
  const AreaQuery query = parse_query_json(
      schema, R"({"measure": "M", "area": {"P": ["A", "AB", "A"], "T": "*"}})", "query");
  const AggregationMap map(schema, query);
  std::ostringstream out;
  write_result_csv(schema, query, CpuSerialEngine().run(facts, map, query), out);
  EXPECT_EQ(out.str(),
            "P,T,sum(M)\n"
            "A,t1,10\nA,All,10\nA,Half,5\n"
            "AB,t1,18\nAB,All,18\nAB,Half,9\n"
            "A,t1,10\nA,All,10\nA,Half,5\n");
}

// Refused when the schema is read (gpuolap create), not at the first query
// that asks for q (issue 24, item 8).
TEST(Semantics, WeightsThatOverflowWhenComposedAreRefusedWithTheSchema) {
  try {
    parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [
      {"name": "a"}, {"name": "p", "children": [{"name": "a", "weight": 1e300}]},
      {"name": "q", "children": [{"name": "p", "weight": 1e300}]}]}], "measures": ["V"]})", "s");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the weight of 'a' under 'q' overflows to inf"), std::string::npos) << e.what();
  }
}

// The check bounds |weights| first; a bound that overflows while the
// weights themselves cancel (q: 1e308 * a - 1e308 * a) is not an overflow.
TEST(Semantics, WeightsWhoseBoundOverflowsButThatCancelAreAccepted) {
  const Schema schema = parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [
      {"name": "a"}, {"name": "p", "children": [{"name": "a", "weight": -1e308}]},
      {"name": "q", "children": [{"name": "a", "weight": 1e308}, {"name": "p", "weight": 1}]}]}], "measures": ["V"]})", "s");
  EXPECT_TRUE(schema.dimension(0).base_weights(*schema.dimension(0).find("q")).empty());
}

// A cell's fan-out, the product of its bases' list lengths, is the number
// of targets the map visits for it (0 for a cell outside the area).
TEST(Semantics, FanOutIsTheNumberOfTargetsACellReaches) {
  uint64_t outside = 0, inside = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    const RandomCube cube = random_cube(seed);
    std::mt19937_64 rng(seed);
    for (int q = 0; q < 4; ++q) {
      const AggregationMap map(cube.schema, random_query(rng, cube.schema));
      for (uint64_t key : cube.facts.keys()) {
        uint64_t visited = 0;
        map.for_each_target(key, [&](uint64_t, double) { ++visited; });
        EXPECT_EQ(map.fan_out(key), visited) << "seed " << seed << " query " << q << " key " << key;
        (visited ? inside : outside) += 1;
      }
    }
  }
  EXPECT_GT(inside, 0u);
  EXPECT_GT(outside, 0u);
}

}  // namespace
}  // namespace gpuolap
