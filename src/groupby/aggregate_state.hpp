// The running state of one aggregate of one group, and how a row or another
// state joins it: the one definition the CPU forms and the GPU kernels share
// (host and device functions), so that both compute the same thing and the
// GPU's results are finished by the same host code as the CPU's.
//
// A state is three 64-bit words, `bits`, `high` and `count`:
//   COUNT(*), COUNT(x)  bits = the count
//   SUM/AVG of doubles  bits = the double sum's bit pattern, count = values
//   SUM/AVG of integers bits:high = a 128-bit two's-complement sum (exact in
//                       any order, so atomics need no order), count = values
//   MIN/MAX             bits = order_bits(value), count = values
// order_bits maps a value to an unsigned word whose order is the value's
// order, so that MIN and MAX are integer atomics on the GPU and give the
// same bits on every engine: NaN (any NaN, made one) above +inf as in
// PostgreSQL, and -0.0 below +0.0.
#pragma once

#include <cstdint>
#include <cstring>

#include "groupby/ordered_aggregation.hpp"

#if defined(__CUDACC__)
#define GPUOLAP_HD __host__ __device__ __forceinline__
#else
#define GPUOLAP_HD inline
#endif

namespace gpuolap::groupby {

constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
constexpr std::uint64_t kCanonicalNan = 0x7ff8000000000000ull;

GPUOLAP_HD std::uint64_t double_bits(double d) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(d));
#else
  std::uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
#endif
}
GPUOLAP_HD double bits_double(std::uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
#endif
}

GPUOLAP_HD std::uint64_t order_bits(double d) {
  std::uint64_t u = d != d ? kCanonicalNan : double_bits(d);
  return (u & kSignBit) ? ~u : (u | kSignBit);
}
GPUOLAP_HD std::uint64_t order_bits(std::int64_t x) { return static_cast<std::uint64_t>(x) ^ kSignBit; }
GPUOLAP_HD double double_of_order_bits(std::uint64_t o) { return bits_double((o & kSignBit) ? (o ^ kSignBit) : ~o); }
GPUOLAP_HD std::int64_t int_of_order_bits(std::uint64_t o) { return static_cast<std::int64_t>(o ^ kSignBit); }

// One aggregate as the kernels and loops see it: what to compute over which
// column, resolved once from OrderedInput.
struct AggregateSlot {
  AggregateKind kind = AggregateKind::CountStar;
  ValueType type = ValueType::Int64;  // of the value column
  const void* values = nullptr;
  const std::uint8_t* nulls = nullptr;
  bool keeps_count = false;  // the state's `count` is needed (nullable or AVG)
};

struct AggregateState {
  std::uint64_t bits = 0;
  std::uint64_t high = 0;
  std::uint64_t count = 0;
};

GPUOLAP_HD bool integer_sum(const AggregateSlot& s) {
  return (s.kind == AggregateKind::Sum || s.kind == AggregateKind::Avg) && s.type != ValueType::Double;
}

// The identity of each aggregate. A double sum starts at -0.0, IEEE's true
// additive identity (-0.0 + x is x for every x, +0.0 included), so that the
// sum of -0.0s is -0.0 as in PostgreSQL, whose sum starts at the first value.
GPUOLAP_HD AggregateState identity_state(const AggregateSlot& s) {
  AggregateState st;
  if (s.kind == AggregateKind::Min) st.bits = ~std::uint64_t{0};
  if ((s.kind == AggregateKind::Sum || s.kind == AggregateKind::Avg) && s.type == ValueType::Double) st.bits = kSignBit;
  return st;
}

// 128-bit two's-complement add of a sign-extended 64-bit value.
GPUOLAP_HD void add128(AggregateState& st, std::int64_t x) {
  const std::uint64_t low = st.bits + static_cast<std::uint64_t>(x);
  st.high += (low < st.bits ? 1 : 0) + (x < 0 ? ~std::uint64_t{0} : 0);
  st.bits = low;
}

GPUOLAP_HD std::int64_t int_value(const AggregateSlot& s, std::size_t row) {
  return s.type == ValueType::Int32 ? static_cast<const std::int32_t*>(s.values)[row]
                                    : static_cast<const std::int64_t*>(s.values)[row];
}
GPUOLAP_HD double double_value(const AggregateSlot& s, std::size_t row) {
  return static_cast<const double*>(s.values)[row];
}
GPUOLAP_HD std::uint64_t ordered_value(const AggregateSlot& s, std::size_t row) {
  return s.type == ValueType::Double ? order_bits(double_value(s, row)) : order_bits(int_value(s, row));
}

// Whether the slot reads its column's values (COUNT reads only its NULLs).
GPUOLAP_HD bool reads_values(const AggregateSlot& s) {
  return s.kind == AggregateKind::Sum || s.kind == AggregateKind::Avg || s.kind == AggregateKind::Min ||
         s.kind == AggregateKind::Max;
}

// The 64-bit word a value enters a state as: a double's bits, an integer
// sign-extended.
GPUOLAP_HD std::uint64_t value_word(const AggregateSlot& s, std::size_t row) {
  return s.type == ValueType::Double ? double_bits(double_value(s, row))
                                     : static_cast<std::uint64_t>(int_value(s, row));
}

// Adds a row to `st` given its value's word (value_word; ignored where
// the slot reads no values) and whether the value is NULL.
GPUOLAP_HD void add_word(const AggregateSlot& s, AggregateState& st, std::uint64_t word, bool null) {
  if (s.kind == AggregateKind::CountStar) {
    ++st.bits;
    return;
  }
  if (null) return;
  ++st.count;
  switch (s.kind) {
    case AggregateKind::Count:
      ++st.bits;
      break;
    case AggregateKind::Sum:
    case AggregateKind::Avg:
      if (s.type == ValueType::Double) st.bits = double_bits(bits_double(st.bits) + bits_double(word));
      else add128(st, static_cast<std::int64_t>(word));
      break;
    case AggregateKind::Min:
    case AggregateKind::Max: {
      const std::uint64_t o =
          s.type == ValueType::Double ? order_bits(bits_double(word)) : order_bits(static_cast<std::int64_t>(word));
      if (s.kind == AggregateKind::Min ? o < st.bits : o > st.bits) st.bits = o;
      break;
    }
    default:
      break;
  }
}

// Adds row `row` of the slot's column to `st`.
GPUOLAP_HD void add_row(const AggregateSlot& s, AggregateState& st, std::size_t row) {
  if (s.kind == AggregateKind::CountStar) {
    ++st.bits;
    return;
  }
  const bool null = s.nulls && s.nulls[row];
  add_word(s, st, !null && reads_values(s) ? value_word(s, row) : 0, null);
}

// Merges state `b` into `a` (b's rows come after a's).
GPUOLAP_HD void merge_state(const AggregateSlot& s, AggregateState& a, const AggregateState& b) {
  a.count += b.count;
  switch (s.kind) {
    case AggregateKind::CountStar:
    case AggregateKind::Count:
      a.bits += b.bits;
      break;
    case AggregateKind::Sum:
    case AggregateKind::Avg:
      if (s.type == ValueType::Double) {
        a.bits = double_bits(bits_double(a.bits) + bits_double(b.bits));
      } else {
        const std::uint64_t low = a.bits + b.bits;
        a.high += b.high + (low < a.bits ? 1 : 0);
        a.bits = low;
      }
      break;
    case AggregateKind::Min:
      if (b.bits < a.bits) a.bits = b.bits;
      break;
    case AggregateKind::Max:
      if (b.bits > a.bits) a.bits = b.bits;
      break;
  }
}

}  // namespace gpuolap::groupby
