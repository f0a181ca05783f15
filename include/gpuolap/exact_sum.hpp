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

#if defined(__CUDACC__)
#define GPUOLAP_HOST_DEVICE __host__ __device__
#else
#define GPUOLAP_HOST_DEVICE
#endif
// A term's addition, inlined into the loops that add millions of them: a
// profile of cpu-parallel's M1 reduction showed CarrySave::add as a
// function of its own, called per value (one core: 7.3 ns a value; 5.7
// with the lanes' sums in locals; 4.4 with add inlined as well).
#if defined(__CUDA_ARCH__)
#define GPUOLAP_ALWAYS_INLINE __forceinline__
#else
#define GPUOLAP_ALWAYS_INLINE [[gnu::always_inline]] inline
#endif
#if !defined(__CUDA_ARCH__)
#include <bit>
#include <cmath>
#endif

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
  int low = 0;         // the unit is 2^low
  bool exact = true;   // every term lies on the grid: the sum is exactly rounded
  double scale = 1.0;  // 2^-low, NaN where that is no normal double
  int top = 0;         // every term is below 2^top (above 1024 a product may overflow)
  // The carry-save form (CarrySave) where it holds every sum of the query:
  // limbs of this many bits; 0 where it does not.
  int limb_bits = 0;
  // 1.5 · 2^(52 + k·limb_bits): a double added to it is rounded to a
  // multiple of 2^(k·limb_bits), which the sum's low bits then count.
  double limb_round[3] = {0.0, 0.0, 0.0};
};
// The grid for terms value × weight, the weight a product of one factor
// from each of `weights`, at most `terms` of them in a sum.
SumGrid make_sum_grid(const ValueBits& values, std::span<const ValueBits> weights, uint64_t terms);

// The arithmetic both the host and the device use (plain bit operations, so
// the two round alike).
namespace exact_detail {

GPUOLAP_HOST_DEVICE inline uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  return std::bit_cast<uint64_t>(x);
#endif
}
GPUOLAP_HOST_DEVICE inline double from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  return std::bit_cast<double>(b);
#endif
}
GPUOLAP_HOST_DEVICE inline int leading_zeros(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return std::countl_zero(x);
#endif
}
// m · 2^e for an integer m below 2^53 (exact where the result is a normal
// double or m is a multiple of what a subnormal keeps).
GPUOLAP_HOST_DEVICE inline double scaled(uint64_t m, int e) {
#if defined(__CUDA_ARCH__)
  return ::scalbn(static_cast<double>(m), e);
#else
  return std::ldexp(static_cast<double>(m), e);
#endif
}
GPUOLAP_HOST_DEVICE inline double product(double v, double w) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(v, w);
#else
  return v * w;
#endif
}
GPUOLAP_HOST_DEVICE inline double add_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
// v·w - fl(v·w), exact (an FMA rounds once).
GPUOLAP_HOST_DEVICE inline double product_error(double v, double w, double p) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(v, w, -p);
#else
  return std::fma(v, w, -p);
#endif
}
// A double's parts: |x| = mantissa · 2^exponent for a finite x (mantissa
// below 2^53, subnormals included); `special` for an infinity or a NaN
// (`mantissa` then the fraction: 0 for an infinity).
struct Decomposed {
  uint64_t mantissa;
  int exponent;
  bool negative;
  bool special;
};
GPUOLAP_HOST_DEVICE inline Decomposed decompose(double x) {
  const uint64_t bits = bits_of(x);
  const int field = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  const bool negative = (bits >> 63) != 0;
  if (field == 0x7ff) return {fraction, 0, negative, true};
  if (field == 0) return {fraction, -1074, negative, false};
  return {fraction | (uint64_t{1} << 52), field - 1075, negative, false};
}

// A 192-bit two's-complement integer, least significant word first.
GPUOLAP_HOST_DEVICE inline void negate(uint64_t (&x)[3]) {
  x[0] = ~x[0];
  x[1] = ~x[1];
  x[2] = ~x[2];
  if (++x[0] == 0 && ++x[1] == 0) ++x[2];
}
GPUOLAP_HOST_DEVICE inline void add_to(uint64_t (&x)[3], const uint64_t (&y)[3], uint64_t carry_in = 0) {
#if !defined(__CUDA_ARCH__)
  // On the host the compiler turns 128-bit adds into add-with-carry.
  unsigned __int128 s = static_cast<unsigned __int128>(x[0]) + y[0] + carry_in;
  x[0] = static_cast<uint64_t>(s);
  s = (s >> 64) + x[1] + y[1];
  x[1] = static_cast<uint64_t>(s);
  x[2] += y[2] + static_cast<uint64_t>(s >> 64);
#else
  const uint64_t t0 = x[0] + y[0];
  const uint64_t s0 = t0 + carry_in;
  const uint64_t c0 = (t0 < x[0]) + (s0 < t0);
  const uint64_t t1 = x[1] + y[1];
  const uint64_t s1 = t1 + c0;
  const uint64_t c1 = (t1 < x[1]) + (s1 < t1);
  x[0] = s0;
  x[1] = s1;
  x[2] += y[2] + c1;
#endif
}
GPUOLAP_HOST_DEVICE inline bool bit_set(const uint64_t (&x)[3], int i) { return i < 192 && ((x[i / 64] >> (i % 64)) & 1) != 0; }
GPUOLAP_HOST_DEVICE inline bool any_below(const uint64_t (&x)[3], int i) {
  for (int w = 0; w < 3 && i > 0; ++w, i -= 64) {
    const uint64_t mask = i >= 64 ? ~uint64_t{0} : (uint64_t{1} << i) - 1;
    if (x[w] & mask) return true;
  }
  return false;
}
// Bits [k, k + 64) of x (k >= 0).
GPUOLAP_HOST_DEVICE inline uint64_t bits_from(const uint64_t (&x)[3], int k) {
  const int w = k / 64, b = k % 64;
  if (w >= 3) return 0;
  uint64_t r = x[w] >> b;
  if (b != 0 && w + 1 < 3) r |= x[w + 1] << (64 - b);
  return r;
}
GPUOLAP_HOST_DEVICE inline int highest_bit(const uint64_t (&x)[3]) {
  for (int w = 2; w >= 0; --w)
    if (x[w]) return 64 * w + 63 - leading_zeros(x[w]);
  return -1;
}
// v · 2^s as a 192-bit two's-complement integer (0 <= s < 128).
GPUOLAP_HOST_DEVICE inline void widened(int64_t v, int s, uint64_t (&out)[3]) {
  const uint64_t sign = v < 0 ? ~uint64_t{0} : 0;
  const uint64_t x[3] = {static_cast<uint64_t>(v), sign, sign};
  const int w = s / 64, b = s % 64;
  for (int k = 2; k >= 0; --k) {
    const uint64_t upper = k - w >= 0 ? x[k - w] << b : 0;
    const uint64_t lower = b != 0 && k - w - 1 >= 0 ? x[k - w - 1] >> (64 - b) : 0;
    out[k] = upper | lower;
  }
}

}  // namespace exact_detail

// A sum of terms on a grid: a 192-bit two's-complement count of units.
class ExactSum {
 public:
  // Adds x (rounded to the grid first when the grid is not exact).
  GPUOLAP_HOST_DEVICE void add(double x, const SumGrid& g) {
    // Fast path, without branches on the data: a normal x on the grid, its
    // mantissa shifted into place and negated as two's complement.
    const uint64_t bits = exact_detail::bits_of(x);
    const int field = static_cast<int>((bits >> 52) & 0x7ff);
    const int shift = field - 1075 - g.low;
    if (field == 0 || field == 0x7ff || shift < 0 || shift > 191 - 53) {
      add_slow(x, g);  // zero, subnormal, inf or NaN, or below the grid
      return;
    }
    const uint64_t m = (bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1} << 52);
    const int w = shift >> 6, b = shift & 63;
    const uint64_t low = m << b;
    const uint64_t high = (m >> 1) >> (63 - b);  // m >> (64 - b), 0 when b is 0
    const uint64_t negative = uint64_t{0} - (bits >> 63);  // all ones when x < 0
    const uint64_t t[3] = {(w == 0 ? low : 0) ^ negative,
                           (w == 0 ? high : w == 1 ? low : 0) ^ negative,
                           (w == 1 ? high : w == 2 ? low : 0) ^ negative};
    exact_detail::add_to(words_, t, bits >> 63);  // ~t + 1 = -t
  }
  // Adds v·w exactly (two terms: the rounded product and its error, which a
  // weight that is a power of two, as most are, never leaves).
  GPUOLAP_HOST_DEVICE void add_product(double v, double w, const SumGrid& g) {
    const double p = exact_detail::product(v, w);
    add(p, g);
    const uint64_t field = (exact_detail::bits_of(p) >> 52) & 0x7ff;
    if (field == 0x7ff) return;
    if ((exact_detail::bits_of(w) & ((uint64_t{1} << 52) - 1)) == 0 && field != 0) return;
    const double e = exact_detail::product_error(v, w, p);
    if (e != 0.0) add(e, g);
  }
  // Adds s·w exactly: s's value cut into doubles of at most 53 bits, each
  // times w exactly.
  GPUOLAP_HOST_DEVICE void add_scaled(const ExactSum& s, double w, const SumGrid& g) {
    if (w == 1.0) {
      merge(s);
      return;
    }
    if (s.specials_) {
      uint8_t sp = s.specials_;
      if (w < 0) sp = static_cast<uint8_t>((sp & 4) | ((sp & 1) << 1) | ((sp & 2) >> 1));
      specials_ |= sp;
    }
    uint64_t x[3] = {s.words_[0], s.words_[1], s.words_[2]};
    const bool negative = (x[2] >> 63) != 0;
    if (negative) exact_detail::negate(x);
    for (int h = exact_detail::highest_bit(x); h >= 0;) {
      const int b = h >= 52 ? h - 52 : 0;
      const uint64_t piece = exact_detail::bits_from(x, b) & ((uint64_t{1} << (h - b + 1)) - 1);
      const double value = exact_detail::scaled(piece, g.low + b);
      add_product(negative ? -value : value, w, g);
      int next = b - 1;  // the next set bit below this piece
      while (next >= 0 && !exact_detail::bit_set(x, next)) --next;
      h = next;
    }
  }
  GPUOLAP_HOST_DEVICE void merge(const ExactSum& o) {
    exact_detail::add_to(words_, o.words_);
    specials_ |= o.specials_;
  }
  // The sum rounded to the nearest double (ties to even); +0.0 when zero.
  GPUOLAP_HOST_DEVICE double to_double(const SumGrid& g) const {
    if (specials_) {
      if ((specials_ & 4) || specials_ == 3) return exact_detail::from_bits(0x7ff8000000000000ull);  // NaN
      return exact_detail::from_bits(specials_ == 1 ? 0x7ff0000000000000ull : 0xfff0000000000000ull);
    }
    uint64_t x[3] = {words_[0], words_[1], words_[2]};
    const bool negative = (x[2] >> 63) != 0;
    if (negative) exact_detail::negate(x);
    const int h = exact_detail::highest_bit(x);
    if (h < 0) return 0.0;
    // 53 bits of precision, fewer where the result is subnormal.
    const int exponent = g.low + h;  // of the top bit
    const int precision = exponent >= -1022 ? 53 : 53 - (-1022 - exponent);
    const int drop = h + 1 - precision;
    double magnitude;
    if (drop <= 0) {
      magnitude = exact_detail::scaled(x[0], g.low);
    } else {
      uint64_t q = precision > 0 ? exact_detail::bits_from(x, drop) & ((uint64_t{1} << precision) - 1) : 0;
      const bool half = exact_detail::bit_set(x, drop - 1);
      const bool sticky = exact_detail::any_below(x, drop - 1);
      if (half && (sticky || (q & 1))) ++q;
      magnitude = exact_detail::scaled(q, g.low + drop);
    }
    return negative ? -magnitude : magnitude;
  }
  // The two's-complement words, least significant first (a device store
  // keeps them apart; the host merges a device's words).
  GPUOLAP_HOST_DEVICE uint64_t word(int k) const { return words_[k]; }
  GPUOLAP_HOST_DEVICE static ExactSum from_words(uint64_t w0, uint64_t w1, uint64_t w2) {
    ExactSum s;
    s.words_[0] = w0;
    s.words_[1] = w1;
    s.words_[2] = w2;
    return s;
  }

 private:
  GPUOLAP_HOST_DEVICE void add_slow(double x, const SumGrid& g) {
    const exact_detail::Decomposed d = exact_detail::decompose(x);
    if (d.special) {
      specials_ |= d.mantissa ? 4 : (d.negative ? 2 : 1);
      return;
    }
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
    // The grid holds every term (make_sum_grid): shift + 53 <= 191.
    uint64_t t[3] = {0, 0, 0};
    const int w = shift / 64, b = shift % 64;
    if (w < 3) t[w] = m << b;
    if (b != 0 && w + 1 < 3) t[w + 1] = m >> (64 - b);
    if (d.negative) exact_detail::negate(t);
    exact_detail::add_to(words_, t);
  }

  uint64_t words_[3] = {0, 0, 0};
  // Infinities and NaNs among the terms (values are finite; a product of
  // weights and a value may not be): bit 0 +inf, bit 1 -inf, bit 2 NaN.
  uint8_t specials_ = 0;
};

// A sum in carry-save form, on a grid with limb_bits S > 0: three signed
// 64-bit limbs, worth l0 + l1·2^S + l2·2^2S units. A term is cut into its
// limbs by three double additions — x + 1.5·2^(52+kS) rounds x to a
// multiple of 2^kS, and the result's bits less the constant's count those
// multiples — and each limb is added on its own, without a carry between
// them: make_sum_grid chooses S so that no limb of any sum of the query's
// terms can overflow. So limbs add in any order, a device's atomics need no
// return value (no carry to pass on), and adding a term costs a few double
// and integer additions instead of a shift into 192 bits with carries. Read
// as an ExactSum (the same integer) when the sum is done.
class CarrySave {
 public:
  // Adds x, a multiple of the grid's unit below 2^(low + 3S - 1).
  GPUOLAP_ALWAYS_INLINE GPUOLAP_HOST_DEVICE void add(double x, const SumGrid& g) {
    using exact_detail::add_rn;
    using exact_detail::bits_of;
    const double y = exact_detail::product(x, g.scale);  // in units: exact (a power of two)
    const double t2 = add_rn(y, g.limb_round[2]);
    const double r1 = add_rn(y, -add_rn(t2, -g.limb_round[2]));  // y less its top limb: exact
    const double t1 = add_rn(r1, g.limb_round[1]);
    const double r0 = add_rn(r1, -add_rn(t1, -g.limb_round[1]));
    const double t0 = add_rn(r0, g.limb_round[0]);
    limbs_[2] += static_cast<int64_t>(bits_of(t2) - bits_of(g.limb_round[2]));
    limbs_[1] += static_cast<int64_t>(bits_of(t1) - bits_of(g.limb_round[1]));
    limbs_[0] += static_cast<int64_t>(bits_of(t0) - bits_of(g.limb_round[0]));
  }
  // Adds v·w exactly: the rounded product and its error (none when w is a
  // power of two), as ExactSum::add_product.
  GPUOLAP_HOST_DEVICE void add_product(double v, double w, const SumGrid& g) {
    const double p = exact_detail::product(v, w);
    add(p, g);
    if ((exact_detail::bits_of(w) & ((uint64_t{1} << 52) - 1)) == 0) return;
    add(exact_detail::product_error(v, w, p), g);
  }
  GPUOLAP_HOST_DEVICE void merge(const CarrySave& o) {
    limbs_[0] += o.limbs_[0];
    limbs_[1] += o.limbs_[1];
    limbs_[2] += o.limbs_[2];
  }
  // The same integer as an ExactSum.
  GPUOLAP_HOST_DEVICE ExactSum exact(const SumGrid& g) const {
    uint64_t total[3], part[3];
    exact_detail::widened(limbs_[0], 0, total);
    exact_detail::widened(limbs_[1], g.limb_bits, part);
    exact_detail::add_to(total, part);
    exact_detail::widened(limbs_[2], 2 * g.limb_bits, part);
    exact_detail::add_to(total, part);
    return ExactSum::from_words(total[0], total[1], total[2]);
  }
  // An exact sum (of at most the query's terms) in carry-save form: its
  // low 2S bits as two non-negative limbs, the rest, signed, as the third.
  GPUOLAP_HOST_DEVICE static CarrySave of(const ExactSum& s, const SumGrid& g) {
    const uint64_t x[3] = {s.word(0), s.word(1), s.word(2)};
    const uint64_t mask = (uint64_t{1} << g.limb_bits) - 1;
    return from_limbs(static_cast<int64_t>(exact_detail::bits_from(x, 0) & mask),
                      static_cast<int64_t>(exact_detail::bits_from(x, g.limb_bits) & mask),
                      static_cast<int64_t>(exact_detail::bits_from(x, 2 * g.limb_bits)));
  }
  GPUOLAP_HOST_DEVICE int64_t limb(int k) const { return limbs_[k]; }
  GPUOLAP_HOST_DEVICE static CarrySave from_limbs(int64_t l0, int64_t l1, int64_t l2) {
    CarrySave c;
    c.limbs_[0] = l0;
    c.limbs_[1] = l1;
    c.limbs_[2] = l2;
    return c;
  }

 private:
  int64_t limbs_[3] = {0, 0, 0};
};

}  // namespace gpuolap
