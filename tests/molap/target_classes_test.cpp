// Two-phase aggregation's classes (gpu/target_classes.hpp): two relevant
// bases of a dimension share a class exactly when their target lists —
// positions and weights — are equal; a class's representative base has
// that list; bases outside
// the area have none; class tuples number the product of the class counts.
#include "molap/planning/target_classes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "gpuolap/formats.hpp"
#include "molap/random_cube.hpp"
#include "support/random_maps.hpp"

namespace gpuolap {
namespace {

using gpu::kNoClass;

bool same_list(const DimensionMap& m, uint32_t a, uint32_t b) {
  const auto pa = m.positions_of(a), pb = m.positions_of(b);
  const auto wa = m.weights_of(a), wb = m.weights_of(b);
  return std::equal(pa.begin(), pa.end(), pb.begin(), pb.end()) &&
         std::equal(wa.begin(), wa.end(), wb.begin(), wb.end());
}

// Checks every property above; returns the class count of each dimension.
std::vector<uint32_t> check_classes(const AggregationMap& map, const gpu::TargetClasses& classes) {
  std::vector<uint32_t> counts;
  uint64_t cells = 1;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    const gpu::DimensionClasses& c = classes.dims[d];
    const auto bases = static_cast<uint32_t>(m.offsets.size() - 1);
    for (uint32_t a = 0; a < bases; ++a) {
      const uint32_t ca = c.class_of_base[a];
      EXPECT_EQ(ca == kNoClass, !m.relevant(a)) << "dimension " << d << " base " << a;
      if (ca == kNoClass) continue;
      EXPECT_LT(ca, c.count()) << "dimension " << d << " base " << a;
      if (ca >= c.count()) continue;
      const uint32_t r = c.representative[ca];
      EXPECT_EQ(c.class_of_base[r], ca) << "dimension " << d << " class " << ca << ": its representative is not in it";
      EXPECT_TRUE(same_list(m, a, r)) << "dimension " << d << " base " << a << ": its class keeps another list";
      for (uint32_t b = 0; b < bases; ++b) {
        if (m.relevant(b)) {
          EXPECT_EQ(ca == c.class_of_base[b], same_list(m, a, b)) << "dimension " << d << " bases " << a << ", " << b;
        }
      }
    }
    counts.push_back(c.count());
    cells *= std::max<uint32_t>(c.count(), 1);
  }
  EXPECT_EQ(classes.cells, cells);
  // A class tuple's number: the last dimension's class moves fastest.
  uint64_t stride = 1;
  for (size_t d = map.dimension_count(); d-- > 0;) {
    EXPECT_EQ(classes.strides[d], stride) << "dimension " << d;
    stride *= std::max<uint32_t>(counts[d], 1);
  }
  return counts;
}

TEST(TargetClasses, EqualListsShareAClassOnRandomAreas) {
  testing::for_random_maps(30, 4, [](const AggregationMap& map) {
    check_classes(map, gpu::target_classes(map, uint64_t{1} << 40));
  });
}

// Lists are hashed on a sample of their entries: long lists that differ only
// between the sampled ones must still fall into different classes.
TEST(TargetClasses, ListsThatDifferOnlyBetweenSampledEntriesAreTold) {
  // 40 elements over bases b0..b3: b0 is in all but C18, b1 in all but C17,
  // b2 and b3 in all. b0's and b1's lists (39 entries) differ at entry 17
  // alone, which a sample of every second entry skips.
  std::string elements = R"({"name": "b0"}, {"name": "b1"}, {"name": "b2"}, {"name": "b3"})";
  std::string area;
  for (int e = 0; e < 40; ++e) {
    const std::string name = (e < 10 ? "C0" : "C") + std::to_string(e);
    std::string children;
    for (int b = 0; b < 4; ++b) {
      if ((b == 0 && e == 18) || (b == 1 && e == 17)) continue;
      children += std::string(children.empty() ? "" : ", ") + R"({"name": "b)" + std::to_string(b) + R"("})";
    }
    elements += R"(, {"name": ")" + name + R"(", "children": [)" + children + "]}";
    area += std::string(area.empty() ? "" : ", ") + "\"" + name + "\"";
  }
  const std::string schema_json = R"({"name": "Lists", "dimensions": [{"name": "D", "elements": [)" + elements +
                                  R"(]}, {"name": "T", "elements": [{"name": "t1"}, {"name": "t2"}]}], "measures": ["M"]})";
  const Schema schema = parse_schema_json(schema_json, "schema");
  const AreaQuery query = parse_query_json(
      schema, R"({"measure": "M", "aggregate": "sum", "area": {"D": [)" + area + R"(], "T": ["t1", "t2"]}})", "query");
  const AggregationMap map(schema, query);
  const gpu::TargetClasses classes = gpu::target_classes(map, uint64_t{1} << 40);
  const std::vector<uint32_t> counts = check_classes(map, classes);
  EXPECT_EQ(counts, (std::vector<uint32_t>{3, 2}));
}

TEST(TargetClasses, TooManyClassTuplesGiveNone) {
  const RandomCube cube = random_cube(7);
  std::mt19937_64 rng(7);
  const AggregationMap map(cube.schema, random_query(rng, cube.schema));
  const gpu::TargetClasses all = gpu::target_classes(map, uint64_t{1} << 40);
  ASSERT_GT(all.cells, 1u);
  EXPECT_EQ(gpu::target_classes(map, all.cells - 1).cells, 0u);
  EXPECT_EQ(gpu::target_classes(map, all.cells).cells, all.cells);
}

}  // namespace
}  // namespace gpuolap
