// The statistics and costs `auto` chooses the gpu kernel by (kernel_model.hpp).
#include "gpuolap/kernel_model.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"
#include "support/test_path.hpp"

namespace gpuolap {
namespace {

const NamedQuery& query_named(const GeneratedCube& cube, const std::string& name) {
  for (const NamedQuery& q : cube.queries)
    if (q.name == name) return q;
  throw std::runtime_error("no query " + name);
}

// A small table is sampled whole: the statistics are exact. Machines' M3:
// every relevant fact reaches 2 or 1,001 targets; warps hold both, so the
// source kernel's lanes are busy about one step in six.
TEST(KernelModel, SmallTablesAreSampledWholeAndCountedExactly) {
  const GeneratedCube cube = generate_machines(0.0005, 3, {});
  const NamedQuery& m3 = query_named(cube, "M3");
  const AreaQuery q = parse_query_json(cube.schema, m3.json, m3.name);
  const AggregationMap map(cube.schema, q);
  ASSERT_LT(cube.facts.size(), 64u * 1024u);
  const FanOutStats s = sample_fan_out(cube.facts, map, q.measure);
  EXPECT_EQ(s.sampled, cube.facts.size());
  double pairs = 0, relevant = 0, steps = 0;
  for (size_t w = 0; w < cube.facts.size(); w += 32) {
    double widest = 0;
    for (size_t i = w; i < std::min(cube.facts.size(), w + 32); ++i) {
      double n = 1;
      for (size_t d = 0; d < map.dimension_count(); ++d) {
        const uint32_t b = map.codec().decode(cube.facts.keys()[i], d);
        n *= map.dimension(d).offsets[b + 1] - map.dimension(d).offsets[b];
      }
      pairs += n;
      relevant += n > 0;
      widest = std::max(widest, n);
    }
    steps += widest;
  }
  EXPECT_DOUBLE_EQ(s.pairs, pairs);
  EXPECT_DOUBLE_EQ(s.relevant, relevant);
  EXPECT_DOUBLE_EQ(s.warp_steps, steps);
  EXPECT_GT(s.uneven_pages, 0);  // pages holding both widths
  EXPECT_LT(s.uneven_pages, s.pages);
  EXPECT_LT(s.pairs / (32 * s.warp_steps), 0.5);
}

// Even fan-out favours the source kernel; a few wide cells among narrow
// ones favour a pair kernel, as the costs say.
TEST(KernelModel, PredictionsFollowTheWarpEfficiency) {
  KernelCosts c;
  FanOutStats even;
  even.cells = 1000000;
  even.relevant = 1e6;
  even.pairs = 18e6;
  even.warp_steps = even.pairs / 32 * 1.1;
  even.pages = even.cells / 256.0;
  EXPECT_EQ(predict_kernels(even, c).front().kernel, "source");
  FanOutStats skewed = even;
  // One fact of each warp reaches 10,001 targets, the others 2.
  skewed.pairs = 1e6 / 32 * 10001 + 1e6 * 31 / 32 * 2;
  skewed.warp_steps = even.cells / 32.0 * 10001;
  skewed.uneven_pages = skewed.pages;
  skewed.uneven_pairs = skewed.pairs;
  skewed.uneven_steps = skewed.warp_steps;
  EXPECT_NE(predict_kernels(skewed, c).front().kernel, "source");
}

// The CPU answers first only where the work is small: few facts, and few
// targets per fact.
TEST(KernelModel, TheCpuAnswersFirstOnlyWhereTheWorkIsSmall) {
  const GeneratedCube cube = generate_machines(0.0005, 3, {});
  KernelCosts c;
  c.gpu_fixed = 0.15e-3;
  c.cpu_per_contribution = 2e-9;  // the GPU's fixed cost buys 75,000 contributions
  for (const char* name : {"M1", "M3"}) {
    const NamedQuery& nq = query_named(cube, name);
    const AreaQuery q = parse_query_json(cube.schema, nq.json, nq.name);
    const AggregationMap map(cube.schema, q);
    const FanOutStats exact = sample_fan_out(cube.facts, map, q.measure);  // the whole (small) table
    const double estimate = estimated_contributions(map, cube.facts.size());
    EXPECT_GT(estimate, exact.pairs / 4) << name;
    EXPECT_LT(estimate, exact.pairs * 4) << name;
  }
  const auto decide = [&](const char* name, uint64_t cells) {
    const NamedQuery& nq = query_named(cube, name);
    const AggregationMap map(cube.schema, parse_query_json(cube.schema, nq.json, nq.name));
    return cpu_answers_first(map, cells, c);
  };
  EXPECT_TRUE(decide("M1", 20000));      // one target per fact: 40 us on the CPU
  EXPECT_FALSE(decide("M1", 100000));    // 200 us
  EXPECT_FALSE(decide("M3", 20000));     // about 150 targets per fact
  EXPECT_TRUE(decide("M3", 100));
}

TEST(KernelModel, CalibrationsAreKeptPerGpuAndBadFilesFallBackToDefaults) {
  const auto dir = testing::fresh_test_path("model");
  const std::string path = (dir / "sub" / "calibration.json").string();
  ASSERT_EQ(setenv("GPUOLAP_CALIBRATION", path.c_str(), 1), 0);
  std::string source;
  EXPECT_EQ(load_kernel_costs("GPU X", &source).per_pair, KernelCosts{}.per_pair);
  EXPECT_NE(source.find("default"), std::string::npos) << source;

  KernelCosts measured;
  measured.gpu = "GPU X";
  measured.per_pair = 1.25e-10;
  measured.gpu_fixed = 0.5e-3;
  save_kernel_costs(measured, path);
  const KernelCosts back = load_kernel_costs("GPU X", &source);
  EXPECT_DOUBLE_EQ(back.per_pair, 1.25e-10);
  EXPECT_DOUBLE_EQ(back.gpu_fixed, 0.5e-3);
  EXPECT_NE(source.find("calibrated"), std::string::npos) << source;

  EXPECT_EQ(load_kernel_costs("GPU Y", &source).per_pair, KernelCosts{}.per_pair);
  EXPECT_NE(source.find("GPU X"), std::string::npos) << source;

  std::ofstream(path) << "{\"gpu\": \"GPU X\", \"per_cell_s\": -1}";
  EXPECT_EQ(load_kernel_costs("GPU X", &source).per_pair, KernelCosts{}.per_pair);
  EXPECT_NE(source.find("unreadable"), std::string::npos) << source;
  unsetenv("GPUOLAP_CALIBRATION");
}

}  // namespace
}  // namespace gpuolap
