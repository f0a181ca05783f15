#include "gpuolap/exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace gpuolap {

void ValueBits::add(double x) {
  const exact_detail::Decomposed d = exact_detail::decompose(x);
  if (d.special || d.mantissa == 0) return;  // no bits: an infinity, a NaN or a zero
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
  int weight_top = 0;
  int weight_low = 0;
  for (const ValueBits& w : weights) {
    if (w.empty()) continue;  // a dimension without weights has no terms
    weight_top += w.top;
    weight_low += w.low;
  }
  top += weight_top;
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
  g.top = top;
  // No double has a bit below 2^-1074.
  if (g.low < -1074) g.low = -1074;
  g.scale = (g.low >= -1023 && g.low <= 1022) ? std::ldexp(1.0, -g.low) : std::numeric_limits<double>::quiet_NaN();
  // The carry-save form (CarrySave), with limbs of S bits. A sum has at
  // most 2·terms terms (a product and its error per fact), each limb of
  // them below 2^(S-1) — or, in phase 2 of two-phase aggregation, at most
  // `terms` class tuples' weighed sums, whose low limbs are below 2^S and
  // whose top limb is below 2^(S-1) per fact summed — so with
  // S = 62 - bit_width(terms) no limb of a sum reaches 2^63. A term, and a
  // value (phase 1 adds values before any weight), must split into three
  // limbs: below 2^(3S - 1) units. And every term must be finite (a product
  // of the weights below 2^1023): the form has no place for an infinity.
  const int limb_bits = std::min(51, 62 - static_cast<int>(std::bit_width(terms)));
  const int span = std::max(top, values.top) - g.low;
  if (g.exact && !std::isnan(g.scale) && weight_top < 1023 && top <= 1023 && limb_bits >= 16 &&
      span <= 3 * limb_bits - 1) {
    g.limb_bits = limb_bits;
    for (int k = 0; k < 3; ++k) g.limb_round[k] = std::ldexp(1.5, 52 + k * limb_bits);
  }
  return g;
}

}  // namespace gpuolap
