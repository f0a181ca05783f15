#pragma once
// What a target cell accumulates on the device, and how parts of it merge.
// Which fields are kept is a compile-time set, so a sum-only query moves and
// updates only sums. min and max are kept as order-preserving 64-bit
// encodings of doubles, so hardware integer atomicMin/atomicMax apply. The
// MOLAP engine's sums are exact (kExact: gpuolap/exact_sum.hpp), three
// 64-bit words that integer atomics add whatever the order, so they have
// the CPU engines' bits; kSum is a plain double sum (the shared-memory
// GROUP BY operator's).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "gpuolap/exact_sum.hpp"

namespace gpuolap::gpu {

enum Fields : int {
  kSum = 1,    // sum of contributions
  kCount = 2,  // number of contributions
  kMin = 4,
  kMax = 8,
  kExact = 16,  // sum of contributions, exactly on the query's grid
};

// The fields an aggregate needs (count rides along with sum: avg needs both).
constexpr int kSumFields = kSum;
constexpr int kSumCountFields = kSum | kCount;
constexpr int kMinFields = kMin;
constexpr int kMaxFields = kMax;
// Phase 1 of two-phase aggregation keeps both: a negative weight turns the
// maximum of the values into the minimum of the contributions.
constexpr int kMinMaxFields = kMin | kMax;
// The MOLAP engine's sum, count and avg: the exact sum with the count (which
// also tells a filled slot: an exact sum has no value that means untouched).
constexpr int kExactFields = kExact | kCount;

// Calls fn(std::integral_constant<int, F>{}) with F the field set `fields`
// (one of the sets above), so a kernel templated on F is launched from a
// run-time choice in one place.
template <class Fn>
void with_fields(int fields, Fn&& fn) {
  switch (fields) {
    case kSumFields: fn(std::integral_constant<int, kSumFields>{}); break;
    case kSumCountFields: fn(std::integral_constant<int, kSumCountFields>{}); break;
    case kMinFields: fn(std::integral_constant<int, kMinFields>{}); break;
    case kMinMaxFields: fn(std::integral_constant<int, kMinMaxFields>{}); break;
    case kExactFields: fn(std::integral_constant<int, kExactFields>{}); break;
    default: fn(std::integral_constant<int, kMaxFields>{}); break;
  }
}

// Monotone map from doubles to unsigned integers: a < b <=> enc(a) < enc(b).
__host__ __device__ inline uint64_t encode_ordered(double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return (bits & 0x8000000000000000ull) ? ~bits : (bits | 0x8000000000000000ull);
}
__host__ __device__ inline double decode_ordered(uint64_t e) {
  const uint64_t bits = (e & 0x8000000000000000ull) ? (e & 0x7fffffffffffffffull) : ~e;
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}
// Identities: encode(+inf) > every finite value's code, encode(-inf) < them.
inline constexpr uint64_t kMinIdentity = ~0ull;
inline constexpr uint64_t kMaxIdentity = 0ull;

// An exact sum on the device, in the form its grid gives (exact_sum.hpp):
// carry-save limbs where the grid has them (limb_bits > 0: terms add limb
// by limb, and a store's atomics need no return value), else the 192-bit
// two's-complement words of an ExactSum, which carry. Three 64-bit words
// either way, so shuffles, stores and copies move them alike; `exact`
// reads either as an ExactSum. Neither keeps an infinity: the limbs serve
// only where no term can overflow (make_sum_grid), and the plan refuses
// grids whose terms may pass 2^1024.
struct DeviceSum {
  uint64_t word[3];

  __device__ void add_product(double v, double w, const SumGrid& g) {
    if (g.limb_bits) {
      CarrySave c = limbs();
      c.add_product(v, w, g);
      set(c);
    } else {
      ExactSum e = words();
      e.add_product(v, w, g);
      set(e);
    }
  }
  __device__ void merge(const DeviceSum& o, const SumGrid& g) {
    if (g.limb_bits) {
      for (int k = 0; k < 3; ++k) word[k] += o.word[k];  // limb by limb: no carries
    } else {
      ExactSum e = words();
      e.merge(o.words());
      set(e);
    }
  }
  __device__ ExactSum exact(const SumGrid& g) const { return g.limb_bits ? limbs().exact(g) : words(); }
  __device__ static DeviceSum of(const ExactSum& s, const SumGrid& g) {
    DeviceSum d;
    if (g.limb_bits) d.set(CarrySave::of(s, g));
    else d.set(s);
    return d;
  }

 private:
  __device__ CarrySave limbs() const {
    return CarrySave::from_limbs(static_cast<int64_t>(word[0]), static_cast<int64_t>(word[1]),
                                 static_cast<int64_t>(word[2]));
  }
  __device__ ExactSum words() const { return ExactSum::from_words(word[0], word[1], word[2]); }
  __device__ void set(const CarrySave& c) {
    for (int k = 0; k < 3; ++k) word[k] = static_cast<uint64_t>(c.limb(k));
  }
  __device__ void set(const ExactSum& e) {
    for (int k = 0; k < 3; ++k) word[k] = e.word(k);
  }
};

// A partial aggregate: one contribution, or several merged.
struct Part {
  double sum;
  unsigned count;
  uint64_t min;  // encoded
  uint64_t max;  // encoded
  DeviceSum exact;  // zero: the identity in either form

  __device__ static Part identity() { return Part{0.0, 0u, kMinIdentity, kMaxIdentity, {{0, 0, 0}}}; }
  __device__ static Part of(double contribution) {
    const uint64_t e = encode_ordered(contribution);
    return Part{contribution, 1u, e, e, {{0, 0, 0}}};
  }
  // The contribution value × weight: the rounded product (min, max, a
  // double sum), and with kExact the exact product on the grid.
  template <int F>
  __device__ static Part of(double value, double weight, const SumGrid& g) {
    Part p = of(__dmul_rn(weight, value));
    if (F & kExact) p.exact.add_product(value, weight, g);
    return p;
  }
  // Adds the contribution value × weight to this part in place (a thread's
  // run of one target: cheaper than a part of its own merged in).
  template <int F>
  __device__ void add(double value, double weight, const SumGrid& g) {
    const double c = __dmul_rn(weight, value);
    if (F & kSum) sum += c;
    if (F & kExact) exact.add_product(value, weight, g);
    if (F & kCount) ++count;
    if (F & (kMin | kMax)) {
      const uint64_t e = encode_ordered(c);
      if (F & kMin) min = e < min ? e : min;
      if (F & kMax) max = e > max ? e : max;
    }
  }
  // (The grid tells the exact sum's form.)
  template <int F>
  __device__ void merge(const Part& o, const SumGrid& g) {
    if (F & kSum) sum += o.sum;
    if (F & kExact) exact.merge(o.exact, g);
    if (F & kCount) count += o.count;
    if (F & kMin) min = o.min < min ? o.min : min;
    if (F & kMax) max = o.max > max ? o.max : max;
  }
};

// The accumulated fields of a target after all copies are merged, as the
// compaction step reduces them (sums in double, counts in 64 bits).
struct Cell {
  double sum;
  unsigned long long count;
  uint64_t min;
  uint64_t max;
  ExactSum exact;
};

struct MergeCells {
  __host__ __device__ Cell operator()(const Cell& a, const Cell& b) const {
    Cell c{a.sum + b.sum, a.count + b.count, a.min < b.min ? a.min : b.min, a.max > b.max ? a.max : b.max, a.exact};
    c.exact.merge(b.exact);
    return c;
  }
};

// Adds an exact sum to the three words of a slot, the atomics' order free.
// Only non-zero addends cost an atomic. Carry-save limbs add each on its
// own, the old value unread, so no carry waits on it (sm_90 still issues
// ATOMG.ADD.64 in global memory and a compare-and-swap loop in shared
// memory, by cuobjdump). An ExactSum's words
// carry: a word's carry is found from the value it had (a small positive
// sum is usually one atomic; a small negative one, whose upper words are
// all ones, usually two).
__device__ inline void atomic_add_words(unsigned long long* w0, unsigned long long* w1, unsigned long long* w2,
                                        const DeviceSum& s, const SumGrid& g) {
  const unsigned long long x0 = s.word[0], x1 = s.word[1], x2 = s.word[2];
  if (g.limb_bits) {
    if (x0) atomicAdd(w0, x0);
    if (x1) atomicAdd(w1, x1);
    if (x2) atomicAdd(w2, x2);
    return;
  }
  unsigned long long carry = 0;
  if (x0) {
    const unsigned long long old = atomicAdd(w0, x0);
    carry = old + x0 < old;
  }
  const unsigned long long y1 = x1 + carry;
  unsigned long long carry2 = y1 < x1;  // x1 all ones plus a carry
  if (y1) {
    const unsigned long long old = atomicAdd(w1, y1);
    carry2 += old + y1 < old;
  }
  const unsigned long long y2 = x2 + carry2;
  if (y2) atomicAdd(w2, y2);
}

}  // namespace gpuolap::gpu
