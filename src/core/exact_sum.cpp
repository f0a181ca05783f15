#include "gpuolap/exact_sum.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace gpuolap {

namespace {

struct Decomposed {
  uint64_t mantissa;  // |x| = mantissa · 2^exponent, mantissa < 2^53
  int exponent;
  bool negative;
};

Decomposed decompose(double x) {
  uint64_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  const int field = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (field == 0) return {fraction, -1074, (bits >> 63) != 0};
  return {fraction | (uint64_t{1} << 52), field - 1075, (bits >> 63) != 0};
}

// A 192-bit two's-complement integer, least significant word first.
using Wide = uint64_t[3];

void negate(Wide x) {
  x[0] = ~x[0];
  x[1] = ~x[1];
  x[2] = ~x[2];
  for (int i = 0; i < 3 && ++x[i] == 0; ++i) {
  }
}

bool bit_set(const Wide x, int i) { return i < 192 && ((x[i / 64] >> (i % 64)) & 1) != 0; }

bool any_below(const Wide x, int i) {
  for (int w = 0; w < 3 && i > 0; ++w, i -= 64) {
    const uint64_t mask = i >= 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1;
    if (x[w] & mask) return true;
  }
  return false;
}

// Bits [k, k + 64) of x (k >= 0).
uint64_t bits_from(const Wide x, int k) {
  const int w = k / 64, b = k % 64;
  if (w >= 3) return 0;
  uint64_t r = x[w] >> b;
  if (b != 0 && w + 1 < 3) r |= x[w + 1] << (64 - b);
  return r;
}

int highest_bit(const Wide x) {
  for (int w = 2; w >= 0; --w)
    if (x[w]) return 64 * w + 63 - std::countl_zero(x[w]);
  return -1;
}

}  // namespace

void ValueBits::add(double x) {
  if (x == 0.0 || !std::isfinite(x)) return;
  const Decomposed d = decompose(x);
  const int t = d.exponent + std::bit_width(d.mantissa);  // |x| < 2^t
  const int l = d.exponent + std::countr_zero(d.mantissa);
  if (t > top) top = t;
  if (l < low) low = l;
}

ValueBits value_bits(std::span<const double> values) {
  ValueBits b;
  for (const double v : values) b.add(v);
  return b;
}

SumGrid make_sum_grid(const ValueBits& values, std::span<const ValueBits> weights, uint64_t terms) {
  SumGrid g;
  if (values.empty()) return g;
  int top = values.top;
  int weight_low = 0;
  for (const ValueBits& w : weights) {
    if (w.empty()) continue;  // a dimension without weights has no terms
    top += w.top;
    weight_low += w.low;
  }
  // A rounded product of the weights may reach the bound itself: one more bit.
  top += 1;
  // Phase 1 of two-phase aggregation adds the values before any weight, so
  // the unit is also no coarser than theirs.
  g.low = values.low + std::min(0, weight_low);
  // Every partial sum of at most `terms` terms below 2^top stays below
  // 2^(top + bit_width(terms)); the 192-bit integer holds 2^191 units.
  const int needed = top + std::bit_width(terms);
  if (needed - g.low > 191) {
    g.low = needed - 191;
    g.exact = false;
  }
  // No double has a bit below 2^-1074.
  if (g.low < -1074) g.low = -1074;
  g.scale = (g.low >= -1023 && g.low <= 1022) ? std::ldexp(1.0, -g.low) : std::numeric_limits<double>::quiet_NaN();
  return g;
}

void ExactSum::add_slow(double x, const SumGrid& g) {
  if (!std::isfinite(x)) {
    specials_ |= std::isnan(x) ? 4 : (x > 0 ? 1 : 2);
    return;
  }
  const Decomposed d = decompose(x);
  uint64_t m = d.mantissa;
  int shift = d.exponent - g.low;
  if (shift < 0) {
    // Below the grid: round to nearest, ties to even.
    const int drop = -shift;
    if (drop > 54) return;  // under half a unit
    const uint64_t q = m >> drop;
    const uint64_t rest = m & ((uint64_t{1} << drop) - 1);
    const uint64_t half = uint64_t{1} << (drop - 1);
    m = q + ((rest > half || (rest == half && (q & 1))) ? 1 : 0);
    shift = 0;
    if (m == 0) return;
  }
  if (shift + std::bit_width(m) > 191)
    throw std::overflow_error("exact sum: a term is beyond its grid's range");
  Wide t = {0, 0, 0};
  const int w = shift / 64, b = shift % 64;
  t[w] = m << b;
  if (b != 0 && w + 1 < 3) t[w + 1] = m >> (64 - b);
  if (d.negative) negate(t);
  merge(from_words(t[0], t[1], t[2]));
}

void ExactSum::add_product(double v, double w, const SumGrid& g) {
  const double p = v * w;
  add(p, g);
  if (!std::isfinite(p)) return;
  const double e = std::fma(v, w, -p);
  if (e != 0.0) add(e, g);
}

void ExactSum::add_scaled(const ExactSum& s, double w, const SumGrid& g) {
  if (w == 1.0) {
    merge(s);
    return;
  }
  if (s.specials_) {
    uint8_t sp = s.specials_;
    if (w < 0) sp = static_cast<uint8_t>((sp & 4) | ((sp & 1) << 1) | ((sp & 2) >> 1));
    specials_ |= sp;
  }
  Wide x = {s.words_[0], s.words_[1], s.words_[2]};
  const bool negative = (x[2] >> 63) != 0;
  if (negative) negate(x);
  // The magnitude cut into pieces of at most 53 bits, each an exact double.
  for (int h = highest_bit(x); h >= 0;) {
    const int b = h >= 52 ? h - 52 : 0;
    const uint64_t piece = bits_from(x, b) & ((uint64_t{1} << (h - b + 1)) - 1);
    const double value = std::ldexp(static_cast<double>(piece), g.low + b);
    add_product(negative ? -value : value, w, g);
    // The next set bit below this piece.
    int next = b - 1;
    while (next >= 0 && !bit_set(x, next)) --next;
    h = next;
  }
}

double ExactSum::to_double(const SumGrid& g) const {
  if (specials_) {
    if ((specials_ & 4) || specials_ == 3) return std::numeric_limits<double>::quiet_NaN();
    return specials_ == 1 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  Wide x = {words_[0], words_[1], words_[2]};
  const bool negative = (x[2] >> 63) != 0;
  if (negative) negate(x);
  const int h = highest_bit(x);
  if (h < 0) return 0.0;
  // 53 bits of precision, fewer where the result is subnormal.
  const int exponent = g.low + h;  // of the top bit
  const int precision = exponent >= -1022 ? 53 : 53 - (-1022 - exponent);
  const int drop = h + 1 - precision;
  double magnitude;
  if (drop <= 0) {
    magnitude = std::ldexp(static_cast<double>(x[0]), g.low);
  } else {
    uint64_t q = precision > 0 ? bits_from(x, drop) & ((uint64_t{1} << precision) - 1) : 0;
    const bool half = bit_set(x, drop - 1);
    const bool sticky = any_below(x, drop - 1);
    if (half && (sticky || (q & 1))) ++q;
    magnitude = std::ldexp(static_cast<double>(q), g.low + drop);
  }
  return negative ? -magnitude : magnitude;
}

ExactSum ExactSum::from_words(uint64_t w0, uint64_t w1, uint64_t w2) {
  ExactSum s;
  s.words_[0] = w0;
  s.words_[1] = w1;
  s.words_[2] = w2;
  return s;
}

}  // namespace gpuolap
