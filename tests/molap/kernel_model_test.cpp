// The statistics and costs `auto` chooses the gpu kernel by (kernel_model.hpp).
#include "molap/planning/kernel_model.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

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
      const auto n = static_cast<double>(map.fan_out(cube.facts.keys()[i]));
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
  EXPECT_EQ(predict_kernels(even, c).front().kernel, KernelKind::source);
  FanOutStats skewed = even;
  // One fact of each warp reaches 10,001 targets, the others 2.
  skewed.pairs = 1e6 / 32 * 10001 + 1e6 * 31 / 32 * 2;
  skewed.warp_steps = even.cells / 32.0 * 10001;
  skewed.uneven_pages = skewed.pages;
  skewed.uneven_pairs = skewed.pairs;
  skewed.uneven_steps = skewed.warp_steps;
  EXPECT_NE(predict_kernels(skewed, c).front().kernel, KernelKind::source);
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

// Copies of each target: the slot budget over the area, a power of two in
// [1, 64]; a dense store's budget stops at its slot limit.
TEST(KernelModel, CopiesAreTheSlotBudgetOverTheArea) {
  EXPECT_EQ(copies_for_budget(4096, 1), 64u);
  EXPECT_EQ(copies_for_budget(4096, 228), 16u);  // 17.96
  EXPECT_EQ(copies_for_budget(4096, 2048), 2u);
  EXPECT_EQ(copies_for_budget(4096, 2049), 1u);
  EXPECT_EQ(copies_for_budget(4096, 17460), 1u);
  EXPECT_EQ(copies_for_budget(4096, 0), 64u);
  EXPECT_EQ(copies_for_budget(4194304, 874437), 4u);
  KernelCosts c;
  c.hash_slot_budget = 0x1p40;
  c.dense_slot_budget = 0x1p40;
  EXPECT_EQ(model_copies(c, StoreKind::hash, uint64_t{1} << 26), 64u);
  EXPECT_EQ(model_copies(c, StoreKind::dense, uint64_t{1} << 26), 2u);
  EXPECT_EQ(model_copies(c, StoreKind::dense, kMaxDenseSlots), 1u);
  EXPECT_DOUBLE_EQ(slot_budget(c, StoreKind::dense), static_cast<double>(kMaxDenseSlots));
}

// The fitted budget gives each query its fastest copies where one budget
// can; the middle of the budgets that do, within those that change any
// timed query's copies.
TEST(KernelModel, TheSlotBudgetFitsTheFastestCopies) {
  std::vector<CopiesRun> runs;
  // One target: the more copies the faster. 1,000 targets: one copy.
  for (unsigned c = 1; c <= 64; c *= 2) {
    runs.push_back({"one", 1, c, 1.0 / c});
    runs.push_back({"wide", 1000, c, 1.0 + 0.1 * c});
  }
  SlotBudgetFit fit = fit_slot_budget(runs);
  EXPECT_DOUBLE_EQ(fit.mean_regret, 1.0);
  EXPECT_EQ(copies_for_budget(fit.budget, 1), 64u);
  EXPECT_EQ(copies_for_budget(fit.budget, 1000), 1u);
  // Budgets 64 to 1,024 serve both (2^6 .. 2^10): the middle is 2^8.
  EXPECT_DOUBLE_EQ(fit.budget, 256);

  // Where every query wants the most copies, budgets from 100 x 64 up serve
  // them all; the search stops at the first that gives the widest area 64
  // (2^13), instead of reaching for budgets far past anything timed.
  runs.clear();
  for (unsigned c = 1; c <= 64; c *= 2) {
    runs.push_back({"one", 1, c, 1.0 / c});
    runs.push_back({"hundred", 100, c, 1.0 / c});
  }
  fit = fit_slot_budget(runs);
  EXPECT_DOUBLE_EQ(fit.budget, 8192);
  EXPECT_DOUBLE_EQ(fit.mean_regret, 1.0);

  // Where no budget serves every query, the fit weighs what each loses: a
  // query wanting 4 copies of 5,000 targets (3x slower otherwise) against
  // one of 1,000 targets that loses a little per copy (1 % each).
  runs.clear();
  for (unsigned c = 1; c <= 64; c *= 2) {
    runs.push_back({"one", 1, c, 1.0 / c});
    runs.push_back({"wide", 1000, c, 1.0 + 0.01 * c});
    runs.push_back({"mid", 5000, c, c == 4 ? 1.0 : 3.0});
  }
  fit = fit_slot_budget(runs);
  EXPECT_DOUBLE_EQ(fit.budget, 32768);  // mid: 6.6 -> 4 copies; wide: 32
  EXPECT_NEAR(fit.mean_regret, (1.0 + 1.32 / 1.01 + 1.0) / 3, 1e-9);
  EXPECT_TRUE(fit_slot_budget({}).budget == 0);
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
  measured.hash_slot_budget = 512;
  measured.dense_slot_budget = 65536;
  save_kernel_costs(measured, path);
  const KernelCosts back = load_kernel_costs("GPU X", &source);
  EXPECT_DOUBLE_EQ(back.per_pair, 1.25e-10);
  EXPECT_DOUBLE_EQ(back.gpu_fixed, 0.5e-3);
  EXPECT_DOUBLE_EQ(back.hash_slot_budget, 512);
  EXPECT_DOUBLE_EQ(back.dense_slot_budget, 65536);
  EXPECT_NE(source.find("calibrated"), std::string::npos) << source;

  EXPECT_EQ(load_kernel_costs("GPU Y", &source).per_pair, KernelCosts{}.per_pair);
  EXPECT_NE(source.find("GPU X"), std::string::npos) << source;

  // A calibration from before the slot budgets keeps its kernel costs and
  // takes the default budgets; one budget without the other is unreadable.
  nlohmann::json j = nlohmann::json::parse(std::ifstream(path));
  j.erase("hash_slot_budget");
  std::ofstream(path) << j.dump();
  EXPECT_NE(load_kernel_costs("GPU X", &source).hash_slot_budget, 512);
  EXPECT_NE(source.find("unreadable"), std::string::npos) << source;
  j.erase("dense_slot_budget");
  std::ofstream(path) << j.dump();
  const KernelCosts old = load_kernel_costs("GPU X", &source);
  EXPECT_DOUBLE_EQ(old.per_pair, 1.25e-10);
  EXPECT_EQ(old.hash_slot_budget, KernelCosts{}.hash_slot_budget);
  EXPECT_EQ(old.dense_slot_budget, KernelCosts{}.dense_slot_budget);
  EXPECT_NE(source.find("default slot budgets"), std::string::npos) << source;

  std::ofstream(path) << "{\"gpu\": \"GPU X\", \"per_cell_s\": -1}";
  EXPECT_EQ(load_kernel_costs("GPU X", &source).per_pair, KernelCosts{}.per_pair);
  EXPECT_NE(source.find("unreadable"), std::string::npos) << source;
  unsetenv("GPUOLAP_CALIBRATION");
}

}  // namespace
}  // namespace gpuolap
