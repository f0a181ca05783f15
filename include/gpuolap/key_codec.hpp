#pragma once
// Packs the base ids of all dimensions into one 64-bit cell key. The first
// dimension takes the most significant bits, so sorting keys sorts cells by
// (first dimension, second dimension, ...).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace gpuolap {

class KeyCodec {
 public:
  KeyCodec() = default;
  // bits[d] = bits of dimension d; throws InputError naming `where` when the
  // total exceeds 64.
  KeyCodec(const std::vector<int>& bits, const std::vector<std::string>& dimension_names,
           const std::string& where);

  size_t dimension_count() const { return shifts_.size(); }
  int total_bits() const { return total_bits_; }
  int shift(size_t d) const { return shifts_[d]; }
  uint64_t mask(size_t d) const { return masks_[d]; }

  uint32_t decode(uint64_t key, size_t d) const {
    return static_cast<uint32_t>((key >> shifts_[d]) & masks_[d]);
  }
  uint64_t encode(std::span<const uint32_t> base_ids) const {
    uint64_t key = 0;
    for (size_t d = 0; d < base_ids.size(); ++d) key |= uint64_t{base_ids[d]} << shifts_[d];
    return key;
  }

 private:
  std::vector<int> shifts_;
  std::vector<uint64_t> masks_;
  int total_bits_ = 0;
};

}  // namespace gpuolap
