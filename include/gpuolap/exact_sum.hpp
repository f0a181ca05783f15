#pragma once
// Sums that do not depend on the order of their terms.
//
// A SUM's terms are a fact's value times its cell's weight. Each engine
// adds them in an order of its own (threads, pages, class tuples, GPUs), and
// doubles added in another order round differently. So no engine adds
// doubles: every term v·w is taken exactly, as the two doubles p = fl(v·w)
// and e = v·w − p (an FMA gives e exactly), and both are added as integers
// on one grid of the query — multiples of 2^low — into a 192-bit
// two's-complement integer. Integer addition is associative, so the total
// is the same integer however the terms are grouped, and it is rounded to
// a double once, to nearest with ties to even. Two-phase aggregation,
// which sums a class tuple's values first and multiplies by the weight
// after, reaches the same integer: Σ(v)·w = Σ(v·w) exactly.
//
// The grid comes from the data, not the order (SumGrid): its unit is the
// lowest bit any term can have — the lowest set bit of the measure's values
// times that of the walked dimensions' weights — and the largest term times
// the number of facts must stay below 2^191 of it. Where both hold
// (`exact`), the answer is the exactly rounded sum: the double nearest the
// true sum of the terms. Where the values' bits span too much for 192 bits
// (say 1e-30 beside 1e30), the unit is raised until they fit, each term is
// rounded to it (to nearest, ties to even) before it is added, and the sum
// is still the same bits on every run and engine that adds the same terms —
// but class tuples would be rounded differently from their facts, so the
// engines then aggregate in one phase. A sum with no terms, or whose terms
// cancel, is +0.0.
//
// The weight of a cell is the product of its dimensions' weights rounded
// in dimension order (AggregationMap::for_each_target); every engine
// multiplies them in that order, so the terms themselves are the same.
#include <cstdint>
#include <span>

namespace gpuolap {

// The binary range of some doubles: |x| < 2^top, and every x is a multiple
// of 2^low. Empty (no non-zero finite value) when top < low.
struct ValueBits {
  int top = -2000;
  int low = 2000;
  bool empty() const { return top < low; }
  void add(double x);
  void merge(const ValueBits& o) {
    if (o.top > top) top = o.top;
    if (o.low < low) low = o.low;
  }
};
ValueBits value_bits(std::span<const double> values);

// The grid a query's sums are added on (see above).
struct SumGrid {
  int low = 0;        // the unit is 2^low
  bool exact = true;  // every term lies on the grid: the sum is exactly rounded
  double scale = 1.0;  // 2^-low, NaN where that is no normal double
};
// The grid for terms value × weight, the weight a product of one factor
// from each of `weights`, at most `terms` of them in a sum.
SumGrid make_sum_grid(const ValueBits& values, std::span<const ValueBits> weights, uint64_t terms);

class ExactSum {
 public:
  // Adds x (rounded to the grid first when the grid is not exact).
  void add(double x, const SumGrid& g) {
    if (x == 0.0) return;
    // Fast path: x / 2^low is an integer below 2^63 (the scaling by a power
    // of two is exact).
    const double scaled = scale_to_grid(x, g);
    if (scaled > -0x1p63 && scaled < 0x1p63 && scaled == static_cast<double>(static_cast<int64_t>(scaled))) {
      add_integer(static_cast<int64_t>(scaled));
      return;
    }
    add_slow(x, g);
  }
  // Adds v·w exactly (two terms: the rounded product and its error).
  void add_product(double v, double w, const SumGrid& g);
  // Adds s·w exactly: s's value cut into doubles, each times w exactly.
  void add_scaled(const ExactSum& s, double w, const SumGrid& g);
  void merge(const ExactSum& o) {
    unsigned __int128 lo = static_cast<unsigned __int128>(words_[0]) + o.words_[0];
    words_[0] = static_cast<uint64_t>(lo);
    lo = (lo >> 64) + words_[1] + o.words_[1];
    words_[1] = static_cast<uint64_t>(lo);
    words_[2] += o.words_[2] + static_cast<uint64_t>(lo >> 64);
    specials_ |= o.specials_;
  }
  // The sum rounded to the nearest double (ties to even); +0.0 when zero.
  double to_double(const SumGrid& g) const;
  bool is_zero() const { return words_[0] == 0 && words_[1] == 0 && words_[2] == 0 && specials_ == 0; }
  // The two's-complement words, least significant first (for tests and
  // for device results read back).
  const uint64_t* words() const { return words_; }
  static ExactSum from_words(uint64_t w0, uint64_t w1, uint64_t w2);

 private:
  // x / 2^low, exact unless it overflows (a NaN scale fails the fast path).
  static double scale_to_grid(double x, const SumGrid& g) { return x * g.scale; }
  void add_integer(int64_t x) {
    const uint64_t ext = x < 0 ? ~uint64_t{0} : 0;
    unsigned __int128 lo = static_cast<unsigned __int128>(words_[0]) + static_cast<uint64_t>(x);
    words_[0] = static_cast<uint64_t>(lo);
    lo = (lo >> 64) + words_[1] + ext;
    words_[1] = static_cast<uint64_t>(lo);
    words_[2] += ext + static_cast<uint64_t>(lo >> 64);
  }
  void add_slow(double x, const SumGrid& g);

  uint64_t words_[3] = {0, 0, 0};
  // Infinities and NaNs among the terms (values are finite; weights whose
  // product overflows are not): bit 0 +inf, bit 1 -inf, bit 2 NaN.
  uint8_t specials_ = 0;
};

}  // namespace gpuolap
