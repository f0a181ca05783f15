// The shared-memory operators on the GPU against cpu-serial: every variant
// of grouped aggregation (COUNT, SUM of 4- and 8-byte columns, MIN/MAX) and
// of the FK join, on Zipf columns of several skews and cardinalities, row
// counts that are not multiples of a chunk or a block, placements made for
// the query's launch shape and for another. Needs an NVIDIA GPU.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>

#include "gpuolap/error.hpp"
#include "groupby/shared_memory/shared_aggregation.hpp"
#include "groupby/shared_memory_cases.hpp"

namespace gpuolap::groupby {
namespace {

// Whole doubles and integers sum the same in every order: equal exactly;
// other doubles within a relative 1e-9 of the sum of magnitudes.
void expect_same(const GroupedResult& want, const GroupedResult& got, bool exact, const std::string& what) {
  ASSERT_EQ(want.count, got.count) << what;
  EXPECT_EQ(want.sum_ints, got.sum_ints) << what;
  ASSERT_EQ(want.sum_doubles.size(), got.sum_doubles.size()) << what;
  for (std::size_t g = 0; g < want.sum_doubles.size(); ++g) {
    if (exact) ASSERT_EQ(want.sum_doubles[g], got.sum_doubles[g]) << what << " group " << g;
    else ASSERT_NEAR(want.sum_doubles[g], got.sum_doubles[g], 1e-9 * (1 + want.count[g] * 600.0)) << what << " group " << g;
  }
  for (std::size_t g = 0; g < want.count.size(); ++g) {
    if (want.count[g] == 0) continue;
    if (!want.min_ints.empty()) {
      ASSERT_EQ(want.min_ints[g], got.min_ints[g]) << what;
      ASSERT_EQ(want.max_ints[g], got.max_ints[g]) << what;
    }
    if (!want.min_doubles.empty()) {
      ASSERT_EQ(want.min_doubles[g], got.min_doubles[g]) << what;
      ASSERT_EQ(want.max_doubles[g], got.max_doubles[g]) << what;
    }
  }
}

struct Case {
  std::size_t rows;
  std::uint32_t groups;
  double theta;
};
const std::vector<Case> kCases{{0, 10, 1},          {1, 1, 0},          {1000, 7, 2},        {33'333, 64, 0.5},
                               {100'003, 1024, 0},  {100'003, 1024, 2}, {200'001, 8192, 1},  {70'000, 3, 1.5}};

TEST(SharedGpu, GroupedAggregationEqualsCpuSerialInEveryVariant) {
  ASSERT_TRUE(shared_gpu_available());
  std::uint64_t seed = 100;
  for (const Case& k : kCases) {
    const auto codes = test::zipf_codes(k.rows, k.groups, k.theta, ++seed);
    const auto whole = test::test_doubles(k.rows, true, ++seed);
    const auto any = test::test_doubles(k.rows, false, ++seed);
    const auto ints = test::test_ints(k.rows, ++seed);
    for (int kind = 0; kind < 4; ++kind) {  // COUNT only, int32, whole doubles, any doubles
      GroupedInput in;
      in.rows = k.rows;
      in.groups = k.groups;
      in.codes = codes.data();
      if (kind == 1) in.value_type = SharedValueType::Int32, in.values = ints.data();
      if (kind == 2) in.values = whole.data();
      if (kind == 3) in.values = any.data();
      in.min_max = kind > 0 && k.rows % 2 == 1;
      const GroupedResult want = grouped_cpu(in);
      // The placement for this query's shape, and one made for another.
      PlacementOptions po;
      po.shape = LaunchShape{256, 8192, grouped_word_bytes(in)};
      po.budget = k.groups <= 1024 ? std::vector<double>{1, 2, 4, 6}[seed % 4] : 1.5;
      po.window = std::vector<int>{0, 4, 16}[seed % 3];
      const Placement own = optimize_placement(codes, k.groups, po);
      po.shape = LaunchShape{64, 640, 4};
      const Placement other = optimize_placement(codes, k.groups, po);
      for (SharedVariant v : all_shared_variants()) {
        for (const Placement* p : {&own, &other}) {
          if (p == &other && v != SharedVariant::Placement) continue;
          SharedGpuOptions o;
          o.variant = v;
          o.shape = LaunchShape{256, 8192, 8};
          GroupedInput run = in;
          if (v == SharedVariant::Placement) run.codes = p->column.data(), run.placement = p;
          const std::string what = fmt::format("{} on {} rows, C {}, theta {}, kind {}{}", shared_variant_name(v),
                                               k.rows, k.groups, k.theta, kind, p == &other ? " (other shape)" : "");
          GroupedResult got;
          try {
            got = grouped_gpu(run, o);
          } catch (const InputError& e) {
            // Only what shared memory cannot hold may be refused, and the
            // target store's integer sums (it sums doubles).
            if (v == SharedVariant::TargetStore && (kind == 1 || in.min_max)) {
              EXPECT_NE(std::string(e.what()).find("target store"), std::string::npos) << what << ": " << e.what();
              continue;
            }
            EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << what << ": " << e.what();
            EXPECT_GE(k.groups, 8192u) << what;
            continue;
          }
          EXPECT_FALSE(v == SharedVariant::TargetStore && in.values && (kind == 1 || in.min_max))
              << what << ": integer sums and MIN/MAX must be refused";
          expect_same(want, got, kind != 3, what);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(SharedGpu, NaiveReplicasTakeAnyCopyCount) {
  const auto codes = test::zipf_codes(50'000, 100, 1.0, 7);
  const auto x = test::test_doubles(codes.size(), true, 8);
  GroupedInput in;
  in.rows = codes.size();
  in.groups = 100;
  in.codes = codes.data();
  in.values = x.data();
  const GroupedResult want = grouped_cpu(in);
  for (int copies : {1, 2, 5, 32}) {
    SharedGpuOptions o;
    o.variant = SharedVariant::NaiveReplicas;
    o.copies = copies;
    o.shape = LaunchShape{128, 1024, 8};
    expect_same(want, grouped_gpu(in, o), true, fmt::format("{} copies", copies));
  }
}

TEST(SharedGpu, ForeignKeyJoinEqualsCpuSerialInEveryVariant) {
  std::uint64_t seed = 300;
  for (const Case& k : kCases) {
    const std::uint32_t dim_rows = k.groups;
    auto keys = test::zipf_codes(k.rows, dim_rows, k.theta, ++seed);
    const auto placement_keys = keys;
    // Some keys without a match (an inner join drops them), where the
    // placement is not used.
    for (std::size_t r = 0; r < keys.size(); r += 97) keys[r] = dim_rows + static_cast<std::uint32_t>(r % 5);
    const auto b_ints = test::test_ints(dim_rows, ++seed);
    const auto b_doubles = test::test_doubles(dim_rows, true, ++seed);
    for (SharedValueType type : {SharedValueType::Int32, SharedValueType::Double}) {
      JoinInput in;
      in.rows = k.rows;
      in.keys = keys.data();
      in.dim_rows = dim_rows;
      in.value_type = type;
      in.dim_values = type == SharedValueType::Int32 ? static_cast<const void*>(b_ints.data()) : b_doubles.data();
      PlacementOptions po;
      po.goal = PlacementGoal::Read;
      po.shape = LaunchShape{256, 8192, join_word_bytes(in)};
      po.budget = dim_rows <= 1024 ? 4 : 1.5;
      const Placement p = optimize_placement(placement_keys, dim_rows, po);
      for (SharedVariant v : all_shared_variants()) {
        if (!join_has_variant(v)) {
          SharedGpuOptions o;
          o.variant = v;
          EXPECT_THROW(join_gpu(in, o), InputError);
          continue;
        }
        JoinInput run = in;
        if (v == SharedVariant::Placement) run.keys = p.column.data(), run.placement = &p;
        JoinInput oracle = in;
        if (v == SharedVariant::Placement) oracle.keys = placement_keys.data();
        const JoinResult want = join_cpu(oracle);
        SharedGpuOptions o;
        o.variant = v;
        o.shape = LaunchShape{256, 8192, 4};
        const std::string what = fmt::format("{} on {} rows, {} dimension rows, theta {}", shared_variant_name(v),
                                             k.rows, dim_rows, k.theta);
        JoinResult got;
        try {
          got = join_gpu(run, o);
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("shared memory"), std::string::npos) << what << ": " << e.what();
          continue;
        }
        EXPECT_EQ(want.matched, got.matched) << what;
        EXPECT_EQ(want.sum_int, got.sum_int) << what;
        EXPECT_EQ(want.sum_double, got.sum_double) << what;
      }
    }
  }
}

TEST(SharedGpu, AutoThreadsAndAutoVariantAnswerAsCpuSerial) {
  for (std::uint32_t c : {1024u, 8192u}) {
    const auto codes = test::zipf_codes(300'000, c, 1.5, c);
    const auto x = test::test_doubles(codes.size(), true, 5);
    GroupedInput in;
    in.rows = codes.size();
    in.groups = c;
    in.codes = codes.data();
    in.values = x.data();
    std::string why;
    SharedGpuOptions o;  // threads 0: picked by the state's shared memory
    o.variant = choose_shared_variant(in, false, why);
    EXPECT_EQ(o.variant, SharedVariant::WarpAggregation) << why;
    GroupedResult got = grouped_gpu(in, o);
    EXPECT_NE(got.plan.find("(auto)"), std::string::npos) << got.plan;
    expect_same(grouped_cpu(in), got, true, "auto variant, C " + std::to_string(c));
    o.variant = SharedVariant::OneCopy;
    got = grouped_gpu(in, o);
    EXPECT_NE(got.plan.find(c == 8192 ? "of 1024 threads" : "of 512 threads"), std::string::npos) << got.plan;
    expect_same(grouped_cpu(in), got, true, "one copy, auto threads, C " + std::to_string(c));
  }
}

TEST(SharedGpu, StateThatDoesNotFitIsRefusedByName) {
  const std::vector<std::uint32_t> codes{0, 1, 2};
  GroupedInput in;
  in.rows = codes.size();
  in.groups = 1u << 20;
  in.codes = codes.data();
  SharedGpuOptions o;
  o.variant = SharedVariant::OneCopy;
  EXPECT_THROW(grouped_gpu(in, o), InputError);
  o.variant = SharedVariant::GlobalAtomics;
  EXPECT_EQ(grouped_gpu(in, o).count[2], 1);
}

}  // namespace
}  // namespace gpuolap::groupby
