// Random inputs for ordered aggregation and the comparison of results: the
// CPU test and the GPU test use the same cases, so every form meets the same
// edges (empty, one row, one group, all distinct, long and short runs, runs
// across any chunk or tile border, several keys, NULL keys, NaN, +-0.0,
// +-inf, NULL values, every aggregate).
//
// Double values are multiples of 1/8 below 2^20 in size, so every partial
// sum is exact and sums agree to the bit in any order; NaN and infinities
// stay NaN and infinities in any order too. Results are compared exactly.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "groupby/ordered_aggregation.hpp"

namespace gpuolap::groupby::test {

struct OrderedCase {
  std::string name;
  std::vector<std::vector<std::int32_t>> int32s;
  std::vector<std::vector<std::int64_t>> int64s;
  std::vector<std::vector<double>> doubles;
  std::vector<std::vector<std::uint8_t>> nulls;
  OrderedInput input;
};

struct CaseShape {
  std::string name;
  std::size_t rows = 1000;
  double mean_run = 4;     // rows per group on average (geometric lengths)
  double long_runs = 0;    // the share of groups that are long (mean_run x 100)
  int keys = 1;            // 1: int32; 2: int64 and int32; 3: double, int32 and int64
  bool null_keys = false;
  bool null_values = true;
  bool special_doubles = true;  // NaN, +-0.0, +-inf among the doubles
};

inline OrderedCase make_case(const CaseShape& shape, std::uint64_t seed, int aggregate_set) {
  OrderedCase c;
  c.name = shape.name;
  std::mt19937_64 rng(seed);
  const std::size_t n = shape.rows;
  std::geometric_distribution<std::size_t> short_run(1.0 / shape.mean_run);
  std::geometric_distribution<std::size_t> long_run(1.0 / (shape.mean_run * 100));
  std::bernoulli_distribution is_long(shape.long_runs);
  std::bernoulli_distribution one_in_8(0.125);

  // Keys: group g's tuple grows with g, so the rows come sorted.
  std::vector<std::int32_t> k32(n);
  std::vector<std::int64_t> k64(n);
  std::vector<double> kd(n);
  std::vector<std::uint8_t> knull(n, 0);
  std::size_t row = 0;
  for (std::int64_t g = 0; row < n; ++g) {
    const std::size_t len = 1 + (is_long(rng) ? long_run(rng) : short_run(rng));
    // A NULL key group once in a while (all its rows NULL in key 0).
    const bool null_group = shape.null_keys && one_in_8(rng);
    for (std::size_t i = 0; i < len && row < n; ++i, ++row) {
      k32[row] = static_cast<std::int32_t>(g * 3 - 1000);
      k64[row] = (g / 2) * 1000000007LL;
      kd[row] = static_cast<double>(g / 4) - 50.25;
      // Inside one run, -0.0 and 0.0 alternate (they group together), and so
      // do NaNs of both signs (NaN equals NaN for GROUP BY).
      if (shape.keys == 3 && (g % 4) == 1) kd[row] = (i % 2) ? -0.0 : 0.0;
      if (shape.keys == 3 && (g % 4) == 3)
        kd[row] = (i % 2) ? -std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::quiet_NaN();
      knull[row] = null_group ? 1 : 0;
    }
  }
  auto add_key = [&](ValueType type, const void* values, bool nullable, std::string name) {
    ColumnView v{type, values, nullable ? c.nulls.emplace_back(knull).data() : nullptr, std::move(name)};
    c.input.keys.push_back(v);
  };
  if (shape.keys == 1) {
    add_key(ValueType::Int32, c.int32s.emplace_back(k32).data(), shape.null_keys, "k32");
  } else if (shape.keys == 2) {
    add_key(ValueType::Int64, c.int64s.emplace_back(k64).data(), shape.null_keys, "k64");
    add_key(ValueType::Int32, c.int32s.emplace_back(k32).data(), false, "k32");
  } else {
    add_key(ValueType::Double, c.doubles.emplace_back(kd).data(), shape.null_keys, "kd");
    add_key(ValueType::Int32, c.int32s.emplace_back(k32).data(), false, "k32");
    add_key(ValueType::Int64, c.int64s.emplace_back(k64).data(), false, "k64");
  }

  // Values: d (double), i (int64 up to 2^50: the sums of both signs carry
  // between the two words of the 128-bit sum), s (int32).
  std::uniform_int_distribution<std::int64_t> eighths(-8000000, 8000000);
  std::uniform_int_distribution<std::int64_t> big(-(std::int64_t{1} << 50), std::int64_t{1} << 50);
  std::uniform_int_distribution<std::int32_t> small(-100000, 100000);
  std::uniform_int_distribution<int> special(0, 199);
  std::bernoulli_distribution null_value(shape.null_values ? 0.1 : 0.0);
  std::vector<double> d(n);
  std::vector<std::int64_t> i(n);
  std::vector<std::int32_t> s(n);
  std::vector<std::uint8_t> dnull(n), snull(n);
  for (std::size_t r = 0; r < n; ++r) {
    d[r] = static_cast<double>(eighths(rng)) / 8;
    if (shape.special_doubles) {
      switch (special(rng)) {
        case 0: d[r] = std::numeric_limits<double>::quiet_NaN(); break;
        case 1: d[r] = -0.0; break;
        case 2: d[r] = 0.0; break;
        case 3: d[r] = std::numeric_limits<double>::infinity(); break;
        case 4: d[r] = -std::numeric_limits<double>::infinity(); break;
        case 5: d[r] = -std::numeric_limits<double>::quiet_NaN(); break;
        default: break;
      }
    }
    i[r] = big(rng);
    s[r] = small(rng);
    dnull[r] = null_value(rng);
    snull[r] = null_value(rng);
  }
  c.input.values.push_back({ValueType::Double, c.doubles.emplace_back(d).data(),
                            shape.null_values ? c.nulls.emplace_back(dnull).data() : nullptr, "d"});
  c.input.values.push_back({ValueType::Int64, c.int64s.emplace_back(i).data(), nullptr, "i"});
  c.input.values.push_back({ValueType::Int32, c.int32s.emplace_back(s).data(),
                            shape.null_values ? c.nulls.emplace_back(snull).data() : nullptr, "s"});
  using K = AggregateKind;
  if (aggregate_set == 0)
    c.input.aggregates = {{K::CountStar, -1}, {K::Sum, 0}, {K::Min, 0}, {K::Max, 0},
                          {K::Avg, 0},        {K::Count, 0}, {K::Sum, 1}, {K::Avg, 2}};
  else
    c.input.aggregates = {{K::Min, 1}, {K::Max, 1}, {K::Min, 2}, {K::Max, 2},
                          {K::Sum, 2}, {K::Count, 2}, {K::Avg, 1}, {K::CountStar, -1}};
  c.input.rows = n;
  return c;
}

// The shapes every form is checked on.
inline std::vector<CaseShape> standard_shapes() {
  std::vector<CaseShape> s;
  s.push_back({.name = "empty", .rows = 0});
  s.push_back({.name = "one row", .rows = 1});
  s.push_back({.name = "one group", .rows = 20011, .mean_run = 1e9});
  s.push_back({.name = "all distinct", .rows = 30011, .mean_run = 1.0000001});
  s.push_back({.name = "short runs", .rows = 100003, .mean_run = 3});
  s.push_back({.name = "mixed runs", .rows = 200003, .mean_run = 20, .long_runs = 0.02});
  s.push_back({.name = "long runs", .rows = 300007, .mean_run = 5000});
  s.push_back({.name = "two keys, NULL keys", .rows = 70001, .mean_run = 6, .keys = 2, .null_keys = true});
  s.push_back({.name = "three keys, double key", .rows = 50021, .mean_run = 2, .long_runs = 0.01, .keys = 3,
               .null_keys = true});
  s.push_back({.name = "no NULLs", .rows = 65536, .mean_run = 16, .null_values = false, .special_doubles = false});
  return s;
}

inline bool same_double(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::signbit(a) == std::signbit(b) && a == b;
}

inline void expect_same_column(const ResultColumn& want, const ResultColumn& got, std::size_t groups,
                               const std::string& what) {
  ASSERT_EQ(want.type, got.type) << what;
  for (std::size_t g = 0; g < groups; ++g) {
    ASSERT_EQ(want.is_null(g), got.is_null(g)) << what << ", group " << g;
    if (want.is_null(g)) continue;
    if (want.type == ValueType::Double) {
      ASSERT_TRUE(same_double(want.doubles[g], got.doubles[g]))
          << what << ", group " << g << ": want " << want.doubles[g] << ", got " << got.doubles[g];
    } else {
      ASSERT_EQ(want.ints[g], got.ints[g]) << what << ", group " << g;
    }
  }
}

inline void expect_same_result(const OrderedInput& input, const OrderedResult& want, const OrderedResult& got,
                               const std::string& what) {
  ASSERT_EQ(want.groups, got.groups) << what;
  ASSERT_EQ(want.keys.size(), got.keys.size()) << what;
  ASSERT_EQ(want.aggregates.size(), got.aggregates.size()) << what;
  for (std::size_t k = 0; k < want.keys.size(); ++k)
    expect_same_column(want.keys[k], got.keys[k], want.groups, what + ", key " + input.keys[k].name);
  for (std::size_t a = 0; a < want.aggregates.size(); ++a)
    expect_same_column(want.aggregates[a], got.aggregates[a], want.groups,
                       what + ", " + aggregate_label(input, input.aggregates[a]));
}

}  // namespace gpuolap::groupby::test
