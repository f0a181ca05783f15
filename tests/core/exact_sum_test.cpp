// Exact sums: the same bits in any order and grouping, the exactly rounded
// sum where the grid is exact, and the grid chosen from the data.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpuolap/exact_sum.hpp"

namespace gpuolap {
namespace {

SumGrid grid_of(const std::vector<double>& values, std::initializer_list<double> weights = {}) {
  std::vector<ValueBits> w;
  for (const double x : weights) {
    ValueBits b;
    b.add(x);
    w.push_back(b);
  }
  return make_sum_grid(value_bits(values), w, values.size());
}

uint64_t bits(double x) { return std::bit_cast<uint64_t>(x); }

// Doubles of full 53-bit mantissas over 2^-20 .. 2^20: with a weight of a
// full mantissa too, their terms still fit the 192-bit grid.
std::vector<double> mixed_magnitudes(std::mt19937_64& rng, size_t n) {
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<int> exponent(-20, 20);
  std::vector<double> v(n);
  for (double& x : v) x = std::ldexp(unit(rng), exponent(rng));
  return v;
}

TEST(ExactSum, AnyOrderAndGroupingGivesTheSameWords) {
  std::mt19937_64 rng(11);
  const std::vector<double> values = mixed_magnitudes(rng, 5000);
  const SumGrid g = grid_of(values);
  ASSERT_TRUE(g.exact);
  ExactSum in_order;
  for (const double x : values) in_order.add(x, g);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<double> shuffled = values;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    // Added in groups of random sizes, the groups merged.
    ExactSum total, group;
    for (size_t i = 0; i < shuffled.size(); ++i) {
      group.add(shuffled[i], g);
      if (rng() % 37 == 0) {
        total.merge(group);
        group = ExactSum();
      }
    }
    total.merge(group);
    for (int w = 0; w < 3; ++w) ASSERT_EQ(total.word(w), in_order.word(w)) << "trial " << trial;
    EXPECT_EQ(bits(total.to_double(g)), bits(in_order.to_double(g)));
  }
  // Doubles added in those orders do differ (else this test proves little).
  double forward = 0, backward = 0;
  for (const double x : values) forward += x;
  for (auto it = values.rbegin(); it != values.rend(); ++it) backward += *it;
  EXPECT_NE(bits(forward), bits(backward));
}

// Terms a·2^-20 with |a| < 2^60: their exact sum is an __int128, whose
// conversion to double rounds to nearest, ties to even.
TEST(ExactSum, IsTheExactlyRoundedSum) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<double> values;
    __int128 exact = 0;
    const int n = 1 + static_cast<int>(rng() % 300);
    for (int i = 0; i < n; ++i) {
      const int64_t a = static_cast<int64_t>(rng() >> (4 + rng() % 50)) * (rng() % 2 ? 1 : -1);
      values.push_back(std::ldexp(static_cast<double>(a), -20));
      exact += static_cast<__int128>(static_cast<double>(a));  // a may round to 53 bits; the double is the term
    }
    const SumGrid g = grid_of(values);
    ExactSum s;
    for (const double x : values) s.add(x, g);
    EXPECT_EQ(bits(s.to_double(g)), bits(std::ldexp(static_cast<double>(exact), -20))) << "trial " << trial;
  }
}

TEST(ExactSum, CancellationLeavesTheSmallTerm) {
  const std::vector<double> values = {1e30, 1.0, -1e30, 0x1p-30};
  const SumGrid g = grid_of(values);
  ASSERT_TRUE(g.exact);
  ExactSum s;
  for (const double x : values) s.add(x, g);
  EXPECT_EQ(s.to_double(g), 1.0 + 0x1p-30);
  EXPECT_EQ(((1e30 + 1.0) - 1e30) + 0x1p-30, 0x1p-30);  // what doubles give
}

TEST(ExactSum, TiesRoundToEven) {
  // 2^53 + 1 is halfway between 2^53 and 2^53 + 2: to even, 2^53; 2^53 + 3
  // is halfway between 2^53 + 2 and 2^53 + 4: to even, 2^53 + 4.
  const std::vector<double> values = {0x1p53, 1.0, 3.0};
  const SumGrid g = grid_of(values);
  ExactSum a, b;
  a.add(0x1p53, g);
  a.add(1.0, g);
  EXPECT_EQ(a.to_double(g), 0x1p53);
  b.add(0x1p53, g);
  b.add(3.0, g);
  EXPECT_EQ(b.to_double(g), 0x1p53 + 4);
  // Just past halfway rounds up.
  const SumGrid fine{-10, true, 0x1p10};
  ExactSum c;
  c.add(0x1p53, fine);
  c.add(1.0, fine);
  c.add(0x1p-10, fine);
  EXPECT_EQ(c.to_double(fine), 0x1p53 + 2);
}

TEST(ExactSum, ProductsAreExact) {
  // (1 + 2^-52)(1 - 2^-52) = 1 - 2^-104: the rounded product is 1, the
  // error -2^-104; the sum of it and -1 is -2^-104 exactly.
  const double v = 1.0 + 0x1p-52, w = 1.0 - 0x1p-52;
  const SumGrid g = grid_of({v, -1.0}, {w});
  ASSERT_TRUE(g.exact);
  ExactSum s;
  s.add_product(v, w, g);
  s.add(-1.0, g);
  EXPECT_EQ(s.to_double(g), -0x1p-104);
}

// Two-phase aggregation: Σ(v)·w added at once equals Σ(v·w) term by term.
TEST(ExactSum, AScaledSumEqualsItsScaledTerms) {
  std::mt19937_64 rng(3);
  for (const double w : {1.0, -1.0, 0.5, 2.0, 0.25, 1.0 / 3.0, -7.123456789}) {
    const std::vector<double> values = mixed_magnitudes(rng, 400);
    const SumGrid g = grid_of(values, {w});
    ASSERT_TRUE(g.exact);
    ExactSum raw, by_term, scaled;
    for (const double v : values) {
      raw.add(v, g);
      by_term.add_product(v, w, g);
    }
    scaled.add_scaled(raw, w, g);
    for (int k = 0; k < 3; ++k) ASSERT_EQ(scaled.word(k), by_term.word(k)) << "weight " << w;
  }
}

TEST(ExactSum, ZeroIsPositiveAndSpecialsPropagate) {
  const SumGrid g = grid_of({1.0});
  ExactSum s;
  s.add(-0.0, g);
  EXPECT_EQ(bits(s.to_double(g)), bits(0.0));
  s.add(1.0, g);
  s.add(-1.0, g);
  EXPECT_EQ(bits(s.to_double(g)), bits(0.0));
  ExactSum inf;
  inf.add(std::numeric_limits<double>::infinity(), g);
  inf.add(1.0, g);
  EXPECT_EQ(inf.to_double(g), std::numeric_limits<double>::infinity());
  inf.add(-std::numeric_limits<double>::infinity(), g);
  EXPECT_TRUE(std::isnan(inf.to_double(g)));
}

TEST(ExactSum, SubnormalSumsRoundOnce) {
  const double tiny = std::numeric_limits<double>::denorm_min();
  const SumGrid g = grid_of({tiny, 0x1p-1000});
  ASSERT_TRUE(g.exact);
  ExactSum s;
  s.add(0x1p-1060, g);
  s.add(tiny, g);
  EXPECT_EQ(s.to_double(g), 0x1p-1060 + tiny);
}

TEST(SumGrid, ExactWhereTheBitsFitElseRoundedOnTheData) {
  EXPECT_TRUE(grid_of({0.01, 1e9, -123.456}).exact);
  const SumGrid wide = grid_of({1e-300, 1e300});
  EXPECT_FALSE(wide.exact);
  // Rounded terms still add up the same in any order.
  ExactSum a, b;
  for (const double x : {1e300, 1e-300, 3.0, -1e300}) a.add(x, wide);
  for (const double x : {-1e300, 3.0, 1e-300, 1e300}) b.add(x, wide);
  EXPECT_EQ(bits(a.to_double(wide)), bits(b.to_double(wide)));
  // Fractional weights move the unit down; the values' count moves the top.
  EXPECT_LT(grid_of({1.0}, {0.25}).low, grid_of({1.0}, {1.0}).low);
  EXPECT_TRUE(make_sum_grid(ValueBits{}, {}, 0).exact);
}

// The carry-save form holds the same integer as the 192-bit words, in any
// order and grouping, for products with weights of full mantissas too.
TEST(CarrySave, GivesTheExactSumsWords) {
  std::mt19937_64 rng(17);
  for (const double w : {1.0, -0.5, 1.0 / 3.0, -7.123456789}) {
    const std::vector<double> values = mixed_magnitudes(rng, 3000);
    const SumGrid g = grid_of(values, {w});
    ASSERT_GT(g.limb_bits, 0) << "weight " << w;
    ExactSum words;
    for (const double v : values) words.add_product(v, w, g);
    for (int trial = 0; trial < 5; ++trial) {
      std::vector<double> shuffled = values;
      std::shuffle(shuffled.begin(), shuffled.end(), rng);
      CarrySave total, group;
      for (const double v : shuffled) {
        group.add_product(v, w, g);
        if (rng() % 29 == 0) {
          total.merge(group);
          group = CarrySave();
        }
      }
      total.merge(group);
      const ExactSum read = total.exact(g);
      for (int k = 0; k < 3; ++k) ASSERT_EQ(read.word(k), words.word(k)) << "weight " << w << ", trial " << trial;
    }
  }
}

// Decimal fractions (cents as doubles) have low bits far below the cent:
// the thesis data's grid.
TEST(CarrySave, HoldsCentsAndTheirCancellation) {
  std::mt19937_64 rng(23);
  std::vector<double> values;
  for (int i = 0; i < 20000; ++i)
    values.push_back(static_cast<double>(static_cast<int64_t>(rng() % 20000000) - 10000000) / 100.0);
  values.push_back(1e5);
  values.push_back(-1e5);
  const SumGrid g = grid_of(values);
  ASSERT_GT(g.limb_bits, 0);
  ExactSum words;
  CarrySave limbs;
  for (const double v : values) {
    words.add(v, g);
    limbs.add(v, g);
  }
  for (int k = 0; k < 3; ++k) EXPECT_EQ(limbs.exact(g).word(k), words.word(k));
  EXPECT_EQ(bits(limbs.exact(g).to_double(g)), bits(words.to_double(g)));
}

// Phase 2 of two-phase aggregation on the device: a class tuple's exact sum,
// weighed, back into carry-save form, gives the same integer.
TEST(CarrySave, SplitsAnExactSumAndBack) {
  std::mt19937_64 rng(29);
  const std::vector<double> values = mixed_magnitudes(rng, 1000);
  const SumGrid g = grid_of(values, {-3.0});
  ASSERT_GT(g.limb_bits, 0);
  for (const double sign : {1.0, -1.0}) {
    ExactSum s;
    for (const double v : values) s.add(sign * std::abs(v), g);
    const ExactSum back = CarrySave::of(s, g).exact(g);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(back.word(k), s.word(k)) << "sign " << sign;
    ExactSum scaled;
    scaled.add_scaled(s, -3.0, g);
    CarrySave by_term;
    for (const double v : values) by_term.add_product(sign * std::abs(v), -3.0, g);
    CarrySave pieces = CarrySave::of(scaled, g);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(pieces.exact(g).word(k), by_term.exact(g).word(k)) << "sign " << sign;
  }
}

TEST(SumGrid, CarrySaveOnlyWhereItsLimbsHoldEverySum) {
  // Cents: some 80 bits of span, three limbs of 51 bits for a few terms.
  EXPECT_EQ(grid_of({0.01, 1e5, -123.45}).limb_bits, 51);
  // Many terms leave fewer bits a limb: 2^40 facts, 62 - 41 = 21 bits,
  // 62 bits of span at most; cents span more.
  ValueBits cents;
  for (const double x : {0.01, 1e5}) cents.add(x);
  const SumGrid many = make_sum_grid(cents, {}, uint64_t{1} << 40);
  EXPECT_TRUE(many.exact);
  EXPECT_EQ(many.limb_bits, 0);
  ValueBits integers;
  for (const double x : {1.0, 1e6}) integers.add(x);
  EXPECT_EQ(make_sum_grid(integers, {}, uint64_t{1} << 40).limb_bits, 21);
  // A span past 3·51 bits: the 192-bit words only.
  EXPECT_EQ(grid_of({1e-30, 1e30}).limb_bits, 0);
  EXPECT_FALSE(grid_of({1e-300, 1e300}).exact);
  EXPECT_EQ(grid_of({1e-300, 1e300}).limb_bits, 0);
}

}  // namespace
}  // namespace gpuolap
