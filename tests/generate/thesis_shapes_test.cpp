// The biker and machines generators against the thesis' tables 5.1 and 5.2
// (olap-aggregation-cuda-dynamic-parallelism, section 5.1): for every query
// the relevant source cells, the filled and overall target cells, and the
// (fact, target) contributions per relevant cell, measured by walking every
// fact through the query's aggregation map. Also machines-skewed, against the
// counts documented in machines_cube.cpp.
#include <gtest/gtest.h>
#include <tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"

namespace gpuolap {
namespace {

struct QueryStats {
  uint64_t relevant = 0;  // facts with at least one target
  uint64_t filled = 0;    // targets reached by at least one fact
  uint64_t overall = 0;   // targets of the area
  uint64_t updates = 0;   // (fact, target) contributions
};

QueryStats measure(const GeneratedCube& cube, const NamedQuery& named) {
  const AreaQuery query = parse_query_json(cube.schema, named.json, named.name);
  const AggregationMap map(cube.schema, query);
  std::vector<char> reached(map.target_count(), 0);
  QueryStats s;
  s.overall = map.target_count();
  for (uint64_t key : cube.facts.keys()) {
    uint64_t targets = 0;
    if (map.for_each_target(key, [&](uint64_t t, double) {
          reached[t] = 1;
          ++targets;
        })) {
      ++s.relevant;
      s.updates += targets;
    }
  }
  s.filled = static_cast<uint64_t>(std::count(reached.begin(), reached.end(), 1));
  return s;
}

// Table 5.1 and the "none" column of table 5.2, all at scale 1.
struct ThesisQuery {
  const char* name;
  uint64_t relevant;
  uint64_t filled;
  uint64_t overall;
  uint64_t updates;
};
constexpr uint64_t kBikerFacts = 281'057'088;
constexpr uint64_t kMachinesFacts = 41'294'400;
const std::vector<ThesisQuery> kBikerQueries{{"B1", 281'057'088, 1, 1, 281'057'088},
                                             {"B2", 281'057'088, 228, 228, 5'021'960'992},
                                             {"B3", 281'057'088, 17'460, 17'460, 4'262'699'168}};
const std::vector<ThesisQuery> kMachinesQueries{{"M1", 41'294'400, 1, 1, 41'294'400},
                                                {"M2", 6'216'000, 2'519, 2'519, 1'418'491'200},
                                                {"M3", 29'534'400, 13'971, 874'437, 4'590'532'800}};

// machines-skewed: the machines cube with every 7th component in 10,000 of
// 20,000 machines and a tenth of M3's 7th-component facts. The expected
// numbers are the ones documented at the top of machines_cube.cpp, worked out
// here from R, S and the fan-outs, not taken from the generator.
constexpr uint32_t kSkewedMachines = 20'000;
constexpr uint32_t kSkewedSeventhMachines = 10'000;
constexpr uint64_t kSkewedM3Relevant = 29'534'400;   // R
constexpr uint64_t kSkewedM3SeventhFacts = 453'600;  // S, a tenth of machines'
// M3: an ordinary component's fact reaches All Components and its one
// machine, a 7th component's fact All Components and its 10,000 machines.
constexpr uint64_t kOrdinaryFanOut = 2;
constexpr uint64_t kSeventhFanOut = 1 + kSkewedSeventhMachines;
constexpr uint64_t skewed_m3_updates(uint64_t relevant, uint64_t seventh) {
  return kOrdinaryFanOut * (relevant - seventh) + kSeventhFanOut * seventh;
}
static_assert(skewed_m3_updates(kSkewedM3Relevant, kSkewedM3SeventhFacts) == 4'594'615'200);
// M1 and M2 as for machines; M3: 6 heavy rows * 20,001 + 1965 light-row
// targets filled of 23 plants * 19 families * 20,001.
const std::vector<ThesisQuery> kSkewedQueries{
    {"M1", 41'294'400, 1, 1, 41'294'400},
    {"M2", 6'216'000, 2'519, 2'519, 1'418'491'200},
    {"M3", kSkewedM3Relevant, 6 * 20'001 + 1'965, 23 * 19 * 20'001,
     skewed_m3_updates(kSkewedM3Relevant, kSkewedM3SeventhFacts)}};

uint64_t scaled(double scale, uint64_t n) { return static_cast<uint64_t>(std::llround(scale * n)); }

void expect_thesis_queries(const GeneratedCube& cube, double scale,
                           const std::vector<ThesisQuery>& thesis) {
  ASSERT_EQ(cube.queries.size(), thesis.size());
  for (size_t i = 0; i < thesis.size(); ++i) {
    const ThesisQuery& t = thesis[i];
    ASSERT_EQ(cube.queries[i].name, t.name);
    const QueryStats s = measure(cube, cube.queries[i]);
    EXPECT_EQ(s.relevant, scaled(scale, t.relevant)) << t.name;
    EXPECT_EQ(s.filled, t.filled) << t.name;
    EXPECT_EQ(s.overall, t.overall) << t.name;
    const double expected = static_cast<double>(t.updates) / static_cast<double>(t.relevant);
    const double got = static_cast<double>(s.updates) / static_cast<double>(s.relevant);
    EXPECT_NEAR(got, expected, 0.005 * expected) << t.name << ": updates per relevant cell";
  }
}

void expect_sorted_distinct_finite(const FactTable& facts) {
  const auto keys = facts.keys();
  EXPECT_TRUE(std::adjacent_find(keys.begin(), keys.end(),
                                 [](uint64_t a, uint64_t b) { return a >= b; }) == keys.end())
      << "keys must be strictly ascending";
  for (size_t m = 0; m < facts.measure_count(); ++m) {
    const auto values = facts.values(m);
    EXPECT_TRUE(
        std::all_of(values.begin(), values.end(), [](double v) { return std::isfinite(v); }));
  }
}

bool same_facts(const FactTable& a, const FactTable& b) {
  if (!std::ranges::equal(a.keys(), b.keys()) || a.measure_count() != b.measure_count())
    return false;
  for (size_t m = 0; m < a.measure_count(); ++m)
    if (!std::ranges::equal(a.values(m), b.values(m))) return false;
  return true;
}

TEST(ThesisShapes, BikerHasTheShapeOfTheThesisCube) {
  const double scale = 0.002;
  const GeneratedCube cube = generate_biker(scale, 1, {});
  EXPECT_EQ(cube.schema.dimension_count(), 8u);
  const double cells = cube.schema.base_cell_count();
  EXPECT_NEAR(cells, 6.68e12, 0.01e12);
  EXPECT_NEAR(100.0 * kBikerFacts / cells, 0.0042, 0.00005);  // fill ratio at scale 1
  EXPECT_EQ(cube.facts.size(), scaled(scale, kBikerFacts));
  EXPECT_EQ(cube.facts.measure_count(), 2u);
  expect_sorted_distinct_finite(cube.facts);
  expect_thesis_queries(cube, scale, kBikerQueries);
}

TEST(ThesisShapes, MachinesHasTheShapeOfTheThesisCube) {
  const double scale = 0.01;
  const GeneratedCube cube = generate_machines(scale, 1, {});
  EXPECT_EQ(cube.schema.dimension_count(), 6u);
  const double cells = cube.schema.base_cell_count();
  EXPECT_NEAR(cells, 226e9, 1e9);
  EXPECT_NEAR(100.0 * kMachinesFacts / cells, 0.01825, 0.00005);
  EXPECT_EQ(cube.facts.size(), scaled(scale, kMachinesFacts));
  expect_sorted_distinct_finite(cube.facts);
  expect_thesis_queries(cube, scale, kMachinesQueries);
}

TEST(ThesisShapes, MachinesLastDimensionIsTheThesisComponentDimension) {
  const GeneratedCube cube = generate_machines(0.0001, 5, {});
  const Dimension& components = cube.schema.dimension(cube.schema.dimension_count() - 1);
  ASSERT_EQ(components.base_count(), 64u);
  const auto total = components.find("All Components");
  ASSERT_TRUE(total.has_value());
  size_t machines = 0;
  for (ElementId e = 0; e < components.element_count(); ++e)
    if (!components.element(e).is_base() && e != *total) ++machines;
  EXPECT_EQ(machines, 2000u);
  for (BaseId c = 0; c < 64; ++c) {
    // Parents of a component: the total and the machines it is in.
    const size_t in_machines = components.parents(components.base_element(c)).size() - 1;
    EXPECT_EQ(in_machines, c % 7 == 0 ? 1000u : 1u) << "component " << c;
  }
}

TEST(ThesisShapes, SameSeedSameFactsWhateverTheThreadCount) {
  const GeneratedCube machines = generate_machines(0.002, 9, {});
  const GeneratedCube biker = generate_biker(0.0005, 9, {});
  {
    tbb::global_control one_thread(tbb::global_control::max_allowed_parallelism, 1);
    EXPECT_TRUE(same_facts(machines.facts, generate_machines(0.002, 9, {}).facts));
    EXPECT_TRUE(same_facts(biker.facts, generate_biker(0.0005, 9, {}).facts));
  }
  EXPECT_TRUE(same_facts(machines.facts, generate_machines(0.002, 9, {}).facts));
  EXPECT_FALSE(same_facts(machines.facts, generate_machines(0.002, 10, {}).facts));
  EXPECT_FALSE(same_facts(biker.facts, generate_biker(0.0005, 10, {}).facts));
  // Queries depend on the seed only through the machine structure.
  const GeneratedCube again = generate_machines(0.002, 9, {});
  for (size_t i = 0; i < machines.queries.size(); ++i)
    EXPECT_EQ(machines.queries[i].json, again.queries[i].json);
}

// The documented smallest scales at which every target count still holds.
TEST(ThesisShapes, TargetCountsHoldAtTheSmallestScales) {
  expect_thesis_queries(generate_biker(8.5e-5, 3, {}), 8.5e-5, kBikerQueries);
  expect_thesis_queries(generate_machines(7.5e-5, 3, {}), 7.5e-5, kMachinesQueries);
}

TEST(MachinesSkewed, TargetCountsHoldAtTheSmallestScale) {
  expect_thesis_queries(generate_machines_skewed(1.35e-4, 3, {}), 1.35e-4, kSkewedQueries);
}

TEST(MachinesSkewed, SeventhComponentsAreInTenThousandOfTwentyThousandMachines) {
  const GeneratedCube cube = generate_machines_skewed(0.0001, 5, {});
  EXPECT_EQ(cube.schema.name(), "Machines Skewed");
  ASSERT_EQ(cube.schema.dimension_count(), 6u);
  const Dimension& components = cube.schema.dimension(5);
  ASSERT_EQ(components.base_count(), 64u);
  const auto total = components.find("All Components");
  ASSERT_TRUE(total.has_value());
  // A machine without a component would be a base element: with 64 base
  // elements, every one of the 20,000 machines has a component.
  EXPECT_EQ(components.element_count(), 1u + kSkewedMachines + 64u);
  size_t machines = 0;
  for (ElementId e = 0; e < components.element_count(); ++e)
    if (!components.element(e).is_base() && e != *total) ++machines;
  EXPECT_EQ(machines, kSkewedMachines);
  for (const char* name : {"M00001", "M20000"}) {
    const auto m = components.find(name);
    ASSERT_TRUE(m.has_value()) << name;
    EXPECT_FALSE(components.element(*m).is_base()) << name;
  }
  for (BaseId c = 0; c < 64; ++c) {
    const size_t in_machines = components.parents(components.base_element(c)).size() - 1;
    EXPECT_EQ(in_machines, c % 7 == 0 ? kSkewedSeventhMachines : 1u) << "component " << c;
  }
}

TEST(MachinesSkewed, HasTheDocumentedFactsAndQueries) {
  const double scale = 0.001;
  const GeneratedCube cube = generate_cube("machines-skewed", scale, 1);
  EXPECT_NEAR(cube.schema.base_cell_count(), 226e9, 1e9);
  EXPECT_EQ(cube.facts.size(), scaled(scale, kMachinesFacts));
  expect_sorted_distinct_finite(cube.facts);
  expect_thesis_queries(cube, scale, kSkewedQueries);
}

// Every relevant fact of M3 reaches 2 or 10,001 targets, by its component,
// and the updates are exactly 2 (R - S) + 10,001 S at the scale.
TEST(MachinesSkewed, M3FanOutIsTwoOrTenThousandAndOne) {
  const double scale = 0.001;
  const GeneratedCube cube = generate_machines_skewed(scale, 2, {});
  ASSERT_EQ(cube.queries.size(), 3u);
  ASSERT_EQ(cube.queries[2].name, "M3");
  const AreaQuery query = parse_query_json(cube.schema, cube.queries[2].json, "M3");
  const AggregationMap map(cube.schema, query);
  uint64_t ordinary = 0, seventh = 0, updates = 0, wrong = 0;
  for (uint64_t key : cube.facts.keys()) {
    uint64_t targets = 0;
    if (!map.for_each_target(key, [&](uint64_t, double) { ++targets; })) continue;
    const bool is_seventh = cube.schema.codec().decode(key, 5) % 7 == 0;
    (is_seventh ? seventh : ordinary) += 1;
    if (targets != (is_seventh ? kSeventhFanOut : kOrdinaryFanOut)) ++wrong;
    updates += targets;
  }
  EXPECT_EQ(wrong, 0u) << "facts with a fan-out other than 2 or 10,001";
  const uint64_t relevant = scaled(scale, kSkewedM3Relevant);
  const uint64_t s = scaled(scale, kSkewedM3SeventhFacts);
  EXPECT_EQ(seventh, s);
  EXPECT_EQ(ordinary + seventh, relevant);
  EXPECT_EQ(updates, skewed_m3_updates(relevant, s));
  EXPECT_EQ(updates, 2 * relevant + 9'999 * s);
}

TEST(MachinesSkewed, IsDeterministicAndLeavesMachinesAlone) {
  const GeneratedCube skewed = generate_machines_skewed(0.0005, 9, {});
  EXPECT_TRUE(same_facts(skewed.facts, generate_machines_skewed(0.0005, 9, {}).facts));
  EXPECT_FALSE(same_facts(skewed.facts, generate_machines_skewed(0.0005, 10, {}).facts));
  const GeneratedCube machines = generate_machines(0.0005, 9, {});
  EXPECT_EQ(machines.schema.name(), "Machines");
  EXPECT_FALSE(same_facts(skewed.facts, machines.facts));
  EXPECT_EQ(generate_cube("machines", 0.0005, 9).facts.size(), machines.facts.size());
  EXPECT_THROW(generate_cube("machines_skewed", 0.0005, 9), InputError);
  EXPECT_THROW(generate_machines_skewed(0, 1, {}), InputError);
}

TEST(ThesisShapes, ProgressIsReportedUpToTheTotal) {
  uint64_t calls = 0, last_done = 0, last_total = 0;
  generate_biker(0.001, 1, [&](uint64_t done, uint64_t total) {
    EXPECT_LE(done, total);
    EXPECT_GE(done, last_done);
    ++calls;
    last_done = done;
    last_total = total;
  });
  EXPECT_GT(calls, 1u);
  EXPECT_EQ(last_done, last_total);
}

TEST(ThesisShapes, ScaleMustBePositive) {
  EXPECT_THROW(generate_biker(0, 1, {}), InputError);
  EXPECT_THROW(generate_machines(-1, 1, {}), InputError);
  EXPECT_THROW(generate_machines(std::nan(""), 1, {}), InputError);
}

}  // namespace
}  // namespace gpuolap
