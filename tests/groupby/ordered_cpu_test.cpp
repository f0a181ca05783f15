// Ordered aggregation on the CPU: cpu-parallel against cpu-serial on the
// standard random cases, cpu-serial against hand-computed answers, the
// errors, the aggregate list parser and the plan's checks.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gpuolap/error.hpp"
#include "groupby/ordered_cases.hpp"

namespace gpuolap::groupby {
namespace {

TEST(OrderedAggregation, ParallelEqualsSerialOnEveryShape) {
  for (const test::CaseShape& shape : test::standard_shapes())
    for (int set = 0; set < 2; ++set) {
      const test::OrderedCase c = test::make_case(shape, 7 + set, set);
      const OrderedResult want = aggregate_serial(c.input);
      test::expect_same_result(c.input, want, aggregate_parallel(c.input), shape.name);
    }
}

TEST(OrderedAggregation, SerialMatchesHandComputedGroups) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::int64_t> keys{1, 1, 2, 0, 0, 5};
  const std::vector<std::uint8_t> key_nulls{0, 0, 0, 1, 1, 0};
  const std::vector<double> d{1.5, nan, -0.0, 2, 7, 0.0};
  const std::vector<std::uint8_t> d_nulls{0, 0, 0, 0, 1, 0};
  OrderedInput in;
  in.rows = 6;
  in.keys = {{ValueType::Int64, keys.data(), key_nulls.data(), "k"}};
  in.values = {{ValueType::Double, d.data(), d_nulls.data(), "d"}};
  using K = AggregateKind;
  in.aggregates = {{K::CountStar, -1}, {K::Count, 0}, {K::Sum, 0}, {K::Min, 0}, {K::Max, 0}, {K::Avg, 0}};
  const OrderedResult r = aggregate_serial(in);
  ASSERT_EQ(r.groups, 4u);
  EXPECT_EQ(r.keys[0].ints, (std::vector<std::int64_t>{1, 2, 0, 5}));
  EXPECT_EQ(r.keys[0].nulls, (std::vector<std::uint8_t>{0, 0, 1, 0}));  // NULL keys: a group of their own
  EXPECT_EQ(r.aggregates[0].ints, (std::vector<std::int64_t>{2, 1, 2, 1}));
  EXPECT_EQ(r.aggregates[1].ints, (std::vector<std::int64_t>{2, 1, 1, 1}));
  EXPECT_TRUE(std::isnan(r.aggregates[2].doubles[0]));  // NaN poisons the sum
  EXPECT_EQ(r.aggregates[3].doubles[0], 1.5);           // and is above every number for MIN/MAX
  EXPECT_TRUE(std::isnan(r.aggregates[4].doubles[0]));
  EXPECT_TRUE(std::signbit(r.aggregates[3].doubles[1]));  // MIN(-0.0) keeps its sign
  EXPECT_TRUE(std::signbit(r.aggregates[2].doubles[1]));  // and so does SUM(-0.0), as in PostgreSQL
  EXPECT_EQ(r.aggregates[2].doubles[2], 2.0);             // the NULL value is skipped
  EXPECT_EQ(r.aggregates[5].doubles[2], 2.0);
  EXPECT_FALSE(std::signbit(r.aggregates[4].doubles[3]));
}

TEST(OrderedAggregation, AnAggregateOverOnlyNullsIsNull) {
  const std::vector<std::int32_t> keys{3, 3, 4};
  const std::vector<std::int32_t> v{0, 0, 9};
  const std::vector<std::uint8_t> nulls{1, 1, 0};
  OrderedInput in;
  in.rows = 3;
  in.keys = {{ValueType::Int32, keys.data(), nullptr, "k"}};
  in.values = {{ValueType::Int32, v.data(), nulls.data(), "v"}};
  in.aggregates = {{AggregateKind::Sum, 0}, {AggregateKind::Min, 0}, {AggregateKind::Count, 0}};
  const OrderedResult r = aggregate_parallel(in);
  ASSERT_EQ(r.groups, 2u);
  EXPECT_TRUE(r.aggregates[0].is_null(0));
  EXPECT_TRUE(r.aggregates[1].is_null(0));
  EXPECT_EQ(r.aggregates[2].ints[0], 0);  // COUNT is 0, not NULL
  EXPECT_EQ(r.aggregates[0].ints[1], 9);
  EXPECT_EQ(r.aggregates[1].ints[1], 9);
}

TEST(OrderedAggregation, IntegerSumsAreExactAndOverflowIsAnError) {
  const std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::int32_t> keys{1, 1, 1, 2, 2};
  const std::vector<std::int64_t> v{max, max, -max, max, 1};
  OrderedInput in;
  in.rows = 5;
  in.keys = {{ValueType::Int32, keys.data(), nullptr, "k"}};
  in.values = {{ValueType::Int64, v.data(), nullptr, "v"}};
  in.aggregates = {{AggregateKind::Avg, 0}};
  const OrderedResult avg = aggregate_serial(in);
  EXPECT_DOUBLE_EQ(avg.aggregates[0].doubles[0], static_cast<double>(max) / 3);  // no overflow on the way
  in.aggregates = {{AggregateKind::Sum, 0}};
  try {
    aggregate_serial(in);
    FAIL() << "the sum of group 2 leaves int64";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sum(v) of group 2 leaves the int64 range"), std::string::npos) << e.what();
  }
}

// AVG of integers divides the exact sum in long double, as SQL's engines
// do: 579832826712306748 / 33 rounds to another double when the sum is
// first rounded to a double.
TEST(OrderedAggregation, IntegerAveragesDivideAsSqlDoes) {
  const std::int64_t sum = 579832826712306748, part = sum / 33;
  std::vector<std::int64_t> v(33, part);
  v.back() = sum - 32 * part;
  const std::vector<std::int32_t> keys(33, 7);
  OrderedInput in;
  in.rows = 33;
  in.keys = {{ValueType::Int32, keys.data(), nullptr, "k"}};
  in.values = {{ValueType::Int64, v.data(), nullptr, "v"}};
  in.aggregates = {{AggregateKind::Avg, 0}};
  const double want = static_cast<double>(static_cast<long double>(sum) / 33);
  ASSERT_NE(want, static_cast<double>(sum) / 33.0);  // the case tells the two apart
  EXPECT_EQ(aggregate_serial(in).aggregates[0].doubles[0], want);
  EXPECT_EQ(aggregate_parallel(in).aggregates[0].doubles[0], want);
}

TEST(OrderedAggregation, ParsesAggregateLists) {
  std::vector<int> values;
  const auto a = parse_aggregates("sum(x), count(*),AVG(y),max(x)", {"k", "x", "y"}, values);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_EQ(values, (std::vector<int>{1, 2}));
  EXPECT_EQ(a[0].kind, AggregateKind::Sum);
  EXPECT_EQ(a[0].value, 0);
  EXPECT_EQ(a[1].kind, AggregateKind::CountStar);
  EXPECT_EQ(a[2].kind, AggregateKind::Avg);
  EXPECT_EQ(a[2].value, 1);
  EXPECT_EQ(a[3].value, 0);
  EXPECT_THROW(parse_aggregates("median(x)", {"x"}, values), InputError);
  EXPECT_THROW(parse_aggregates("sum(z)", {"x"}, values), InputError);
  EXPECT_THROW(parse_aggregates("sum x", {"x"}, values), InputError);
  EXPECT_THROW(parse_aggregates("", {"x"}, values), InputError);
}

TEST(OrderedAggregation, PlanKnobsAreChecked) {
  const test::OrderedCase c = test::make_case({.name = "small", .rows = 100}, 1, 0);
  OrderedGpuOptions o;
  o.local_size = 0;
  EXPECT_THROW(choose_ordered_plan(c.input, o), InputError);
  o.local_size = 8;
  o.intent = 5000;
  EXPECT_THROW(choose_ordered_plan(c.input, o), InputError);
  o.intent = 128;
  o.architecture = Architecture::BlockCooperative;  // whole warps only
  EXPECT_THROW(choose_ordered_plan(c.input, o), InputError);
  o.local_size = 64;  // and 4..32 rows per thread, 4 at a time
  EXPECT_THROW(choose_ordered_plan(c.input, o), InputError);
  o.intent = 16;
  o.variant = Variant::PrivateArray;  // block-cooperative takes no variant
  EXPECT_THROW(choose_ordered_plan(c.input, o), InputError);
  o.variant.reset();
  EXPECT_NO_THROW(choose_ordered_plan(c.input, o));
  o.architecture = Architecture::CubRunLength;  // COUNT(*) only
  EXPECT_THROW(choose_ordered_plan(c.input, o), InputError);
  // 2^31 rows at one thread a block would launch too many blocks (the
  // check reads only the row count: no column is touched).
  OrderedInput huge = c.input;
  huge.rows = std::size_t{1} << 31;
  EXPECT_THROW(check_plan(huge, {Architecture::FiveKernel, Variant::DirectAtomics, 1, 8, ""}), InputError);
  EXPECT_NO_THROW(check_plan(huge, {Architecture::FiveKernel, Variant::DirectAtomics, 2, 8, ""}));
  EXPECT_EQ(parse_architecture("2-kernel"), Architecture::TwoKernel);
  EXPECT_EQ(parse_variant("private-variable"), Variant::PrivateVariable);
  EXPECT_THROW(parse_architecture("4-kernel"), InputError);
}

TEST(OrderedAggregation, EstimatesRunLength) {
  const test::OrderedCase c = test::make_case({.name = "runs of 16", .rows = 1 << 16, .mean_run = 16}, 3, 0);
  const double run = estimate_run_length(c.input);
  EXPECT_GT(run, 12);
  EXPECT_LT(run, 21);
}


// Rows not sorted are grouped by runs; cpu-parallel's galloping border search
// may jump past a later run, and its cuts stay in order all the same.
TEST(OrderedAggregation, ParallelGroupsUnsortedRowsByRunsAsSerialDoes) {
  std::vector<std::int32_t> keys(3 << 16, 7);
  keys[2 << 16] = 8;  // one run of 8 inside the 7s: runs 7, 8, 7
  std::vector<double> v(keys.size(), 1.0);
  OrderedInput in;
  in.rows = keys.size();
  in.keys = {{ValueType::Int32, keys.data(), nullptr, "k"}};
  in.values = {{ValueType::Double, v.data(), nullptr, "v"}};
  in.aggregates = {{AggregateKind::Sum, 0}, {AggregateKind::CountStar, -1}};
  const OrderedResult want = aggregate_serial(in);
  ASSERT_EQ(want.groups, 3u);
  test::expect_same_result(in, want, aggregate_parallel(in), "unsorted");
}

}  // namespace
}  // namespace gpuolap::groupby
