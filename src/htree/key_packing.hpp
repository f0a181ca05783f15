// A tuple of dimension codes packed into a few 64-bit words, so that
// sorting, comparing and merging tuples runs on words instead of one code
// at a time: dimension d takes bit_width(cardinality - 1) bits, dimensions
// fill words in popular-path order, and an earlier dimension sits in higher
// bits of its word (and in an earlier word), so the words' lexicographic
// order is the tuples' order. D15C40 packs into 2 words instead of 15.
// Host and device code (the CPU forms and the GPU kernels share it).
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "gpuolap/error.hpp"

#if defined(__CUDACC__)
#define GPUOLAP_HTREE_HD __host__ __device__ __forceinline__
#else
#define GPUOLAP_HTREE_HD inline
#endif

namespace gpuolap::htree {

// Where each dimension sits; at most kMaxDimensions dimensions.
constexpr int kMaxDimensions = 64;

struct KeyPacking {
  int dimensions = 0;
  int words = 0;
  std::uint8_t word[kMaxDimensions] = {};   // the word dimension d is in
  std::uint8_t shift[kMaxDimensions] = {};  // its lowest bit there
  std::uint8_t bits[kMaxDimensions] = {};   // its width (0: a dimension of one value)

  GPUOLAP_HTREE_HD std::uint32_t code(const std::uint64_t* row_words, int d) const {
    if (bits[d] == 0) return 0;
    return static_cast<std::uint32_t>((row_words[word[d]] >> shift[d]) & ((std::uint64_t{1} << bits[d]) - 1));
  }
};

// The packing of tuples whose dimension d holds codes below cardinalities[d];
// with one_per_word, each dimension gets a word of its own (the paper's
// dimension-at-a-time sorts).
inline KeyPacking make_packing(const std::vector<std::uint32_t>& cardinalities, bool one_per_word = false) {
  if (cardinalities.empty() || cardinalities.size() > static_cast<std::size_t>(kMaxDimensions))
    throw InputError("an H-tree has 1 to 64 dimensions");
  KeyPacking p;
  p.dimensions = static_cast<int>(cardinalities.size());
  int used = 64;  // bits taken in the current word; 64 starts a new one
  for (int d = 0; d < p.dimensions; ++d) {
    const std::uint32_t c = cardinalities[d] ? cardinalities[d] : 1;
    const int b = static_cast<int>(std::bit_width(c - 1));
    if (p.words == 0 || one_per_word || used + b > 64) {
      ++p.words;
      used = 0;
    }
    p.bits[d] = static_cast<std::uint8_t>(b);
    used += b;
    p.word[d] = static_cast<std::uint8_t>(p.words - 1);
    p.shift[d] = static_cast<std::uint8_t>(b ? 64 - used : 0);  // a 0-bit code is 0, shifted nowhere
  }
  return p;
}

}  // namespace gpuolap::htree
