// Where a group starts: row i starts a group when its key tuple differs
// from row i-1's. Shared by the CPU forms and the GPU kernels (host and
// device functions). Keys compare as GROUP BY compares them: NULL equals
// NULL, doubles by value with every NaN equal and -0.0 equal to +0.0.
#pragma once

#include <cstdint>

#include "groupby/aggregate_state.hpp"

namespace gpuolap::groupby {

struct KeySlot {
  ValueType type = ValueType::Int64;
  const void* values = nullptr;
  const std::uint8_t* nulls = nullptr;
};

// A key's value as a word that is equal exactly when GROUP BY calls the
// values equal.
GPUOLAP_HD std::uint64_t key_word(const KeySlot& k, std::size_t row) {
  switch (k.type) {
    case ValueType::Int32:
      return static_cast<std::uint32_t>(static_cast<const std::int32_t*>(k.values)[row]);
    case ValueType::Int64:
      return static_cast<std::uint64_t>(static_cast<const std::int64_t*>(k.values)[row]);
    default: {
      const double d = static_cast<const double*>(k.values)[row];
      return d != d ? kCanonicalNan : d == 0.0 ? 0 : double_bits(d);
    }
  }
}

struct KeySlots {
  int count = 0;
  KeySlot key[kMaxKeys];

  // Whether rows a and b are in the same group (all keys equal).
  GPUOLAP_HD bool same(std::size_t a, std::size_t b) const {
    for (int k = 0; k < count; ++k) {
      const KeySlot& s = key[k];
      const bool null_a = s.nulls && s.nulls[a];
      const bool null_b = s.nulls && s.nulls[b];
      if (null_a != null_b) return false;
      if (!null_a && key_word(s, a) != key_word(s, b)) return false;
    }
    return true;
  }
  // Whether row i starts a group (row 0 always does).
  GPUOLAP_HD bool starts(std::size_t i) const { return i == 0 || !same(i - 1, i); }
};

}  // namespace gpuolap::groupby
