// Ordered aggregation on the GPU against cpu-serial: every architecture x
// variant x a grid of local sizes and intents, on the standard cases (runs
// crossing chunk, block and tile borders, sizes not powers of two, several
// keys, NULL keys, NaN and +-0.0, every aggregate). Needs an NVIDIA GPU.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "gpuolap/error.hpp"
#include "groupby/ordered_cases.hpp"

namespace gpuolap::groupby {
namespace {

struct Knobs {
  int local_size, intent;
};

// Odd and paper-like knobs: a block of 1 thread, partial warps, the paper's
// winner (8, 128), and the sizes the one-pass kernels favour.
const std::vector<Knobs> kGrid{{1, 1}, {8, 128}, {24, 3}, {32, 1}, {96, 7}, {256, 8}, {1024, 16}, {64, 4096}};

void check_plan_on_cases(const OrderedPlan& plan, bool all_cases) {
  const auto shapes = test::standard_shapes();
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (!all_cases && i % 3 != 1 && shapes[i].rows > 1) continue;
    for (int set = 0; set < 2; ++set) {
      const test::OrderedCase c = test::make_case(shapes[i], 11 + i, set);
      const std::string what = fmt::format("{} / {} / local {} / intent {} on '{}' (set {})",
                                           architecture_name(plan.architecture), variant_name(plan.variant),
                                           plan.local_size, plan.intent, shapes[i].name, set);
      const OrderedResult want = aggregate_serial(c.input);
      OrderedResult got;
      ASSERT_NO_THROW(got = aggregate_gpu(c.input, plan, {})) << what;
      test::expect_same_result(c.input, want, got, what);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

class OrderedGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gpu_available()) GTEST_SKIP() << "no GPU";
  }
};

TEST_F(OrderedGpu, PaperArchitecturesAndVariantsEqualCpuSerial) {
  for (Architecture arch : {Architecture::FiveKernel, Architecture::ThreeKernel, Architecture::TwoKernel,
                            Architecture::OneKernel})
    for (Variant v : all_variants())
      for (std::size_t k = 0; k < kGrid.size(); ++k) {
        OrderedPlan plan{arch, v, kGrid[k].local_size, kGrid[k].intent, ""};
        // Every shape on two knob settings, a third of them on the rest.
        check_plan_on_cases(plan, k == 1 || k == 5);
        if (HasFatalFailure()) return;
      }
}

TEST_F(OrderedGpu, BlockCooperativeEqualsCpuSerial) {
  for (const Knobs k : {Knobs{32, 4}, Knobs{64, 12}, Knobs{96, 20}, Knobs{128, 8}, Knobs{256, 16}, Knobs{512, 32}, Knobs{32, 32}}) {
    check_plan_on_cases({Architecture::BlockCooperative, Variant::PrivateVariable, k.local_size, k.intent, ""}, true);
    if (HasFatalFailure()) return;
  }
}

TEST_F(OrderedGpu, CubBaselinesEqualCpuSerial) {
  const test::OrderedCase c =
      test::make_case({.name = "cub", .rows = 100003, .mean_run = 9, .null_values = false}, 5, 0);
  OrderedInput in = c.input;
  using K = AggregateKind;
  in.aggregates = {{K::CountStar, -1}, {K::Sum, 0}, {K::Min, 0}, {K::Max, 1}, {K::Avg, 0}, {K::Count, 2}, {K::Min, 2}};
  const OrderedResult want = aggregate_serial(in);
  test::expect_same_result(in, want, aggregate_gpu(in, {Architecture::CubReduceByKey, Variant::PrivateVariable, 256, 8, ""}, {}),
                           "cub-reduce-by-key");
  in.aggregates = {{K::CountStar, -1}, {K::CountStar, -1}};
  test::expect_same_result(in, aggregate_serial(in),
                           aggregate_gpu(in, {Architecture::CubRunLength, Variant::PrivateVariable, 256, 8, ""}, {}),
                           "cub-run-length");
}

TEST_F(OrderedGpu, AutoEqualsCpuSerialAndReportsStages) {
  const test::OrderedCase c = test::make_case({.name = "auto", .rows = 250000, .mean_run = 30}, 9, 1);
  OrderedGpuOptions options;
  options.timing = true;
  const OrderedPlan plan = choose_ordered_plan(c.input, options);
  const OrderedResult got = aggregate_gpu(c.input, plan, options);
  test::expect_same_result(c.input, aggregate_serial(c.input), got, "auto");
  EXPECT_FALSE(got.stage_ms.empty());
}

TEST_F(OrderedGpu, IntegerOverflowIsTheSameErrorAsOnTheCpu) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int32_t> keys(5000, 1);
  std::vector<std::int64_t> v(5000, max / 4000);
  OrderedInput in;
  in.rows = keys.size();
  in.keys = {{ValueType::Int32, keys.data(), nullptr, "k"}};
  in.values = {{ValueType::Int64, v.data(), nullptr, "v"}};
  in.aggregates = {{AggregateKind::Sum, 0}};
  EXPECT_THROW(aggregate_serial(in), InputError);
  for (Architecture arch : {Architecture::TwoKernel, Architecture::OneKernel, Architecture::BlockCooperative})
    EXPECT_THROW(aggregate_gpu(in, {arch, Variant::PrivateVariable, 64, 8, ""}, {}), InputError)
        << architecture_name(arch);
}

}  // namespace
}  // namespace gpuolap::groupby
