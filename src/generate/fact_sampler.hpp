#pragma once
// Machinery shared by the cube generators (internal to src/generate):
//
// - a counter-based random number generator: every random word is a pure
//   function of (seed, stream, index), so what a generator produces depends on
//   its seed only, never on the number of threads or the order they run in;
// - integer apportionment (largest remainder), to turn scaled weights into
//   exact counts that add up to an exact total;
// - sample_keys(), which draws an exact number of distinct cell keys from each
//   of a list of disjoint strata. A stratum is a box: for every dimension a
//   set of base ids (a range or a list), the cell keys being their cartesian
//   product. Generators place facts stratum by stratum to control exactly
//   which query targets are reached and how often.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "gpuolap/formats.hpp"
#include "gpuolap/key_codec.hpp"
#include "gpuolap/huge_pages.hpp"

namespace gpuolap::generate_detail {

// The finaliser of splitmix64 (Steele, Lea, Flood 2014): a bijection on 64-bit
// words that mixes every input bit into every output bit.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// The index-th random word under `seed`.
inline uint64_t mix(uint64_t seed, uint64_t index) {
  return splitmix64(splitmix64(seed) + index * 0x9e3779b97f4a7c15ULL);
}

// The index-th random word of stream `stream` under `seed`.
inline uint64_t random_word(uint64_t seed, uint64_t stream, uint64_t index) {
  return mix(seed ^ splitmix64(stream ^ 0x243f6a8885a308d3ULL), index);
}

// A uniform number in [0, n) from a random word (Lemire's multiply-shift; the
// bias is below n / 2^64).
inline uint32_t below(uint64_t word, uint32_t n) {
  return static_cast<uint32_t>((static_cast<unsigned __int128>(word) * n) >> 64);
}

// A uniform number in [0, 1) with 53 random bits.
inline double unit_interval(uint64_t word) { return static_cast<double>(word >> 11) * 0x1.0p-53; }

// A sequential random stream for building structures (hierarchies, choices of
// rows and components): the words of stream `stream` in index order.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) : seed_(seed), stream_(stream) {}
  uint64_t next() { return random_word(seed_, stream_, index_++); }
  uint32_t below(uint32_t n) { return generate_detail::below(next(), n); }
  // k distinct numbers of [0, n), in random order (partial Fisher-Yates).
  std::vector<uint32_t> sample(uint32_t n, uint32_t k);
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(static_cast<uint32_t>(i))]);
  }

 private:
  uint64_t seed_, stream_, index_ = 0;
};

// round(scale * count), the number of facts a thesis count becomes at a scale.
uint64_t scaled_count(double scale, uint64_t count);

// Splits `total` into parts proportional to `weights` (non-negative, not all
// zero) that add up to exactly `total`: every part gets the floor of its
// quota, the remainder goes one each to the largest fractional parts (ties to
// the lower index).
std::vector<uint64_t> apportion(uint64_t total, const std::vector<double>& weights);

// A set of base ids of one dimension that a stratum draws from uniformly.
class BaseSet {
 public:
  BaseSet() = default;
  static BaseSet range(uint32_t first, uint32_t count) {
    BaseSet s;
    s.first_ = first;
    s.count_ = count;
    return s;
  }
  static BaseSet single(uint32_t id) { return range(id, 1); }
  // Several base ids; the list is shared between the strata that use it.
  static BaseSet list(std::shared_ptr<const std::vector<uint32_t>> ids) {
    BaseSet s;
    s.count_ = static_cast<uint32_t>(ids->size());
    s.list_ = std::move(ids);
    return s;
  }

  uint32_t size() const { return count_; }
  uint32_t operator[](uint32_t i) const { return list_ ? (*list_)[i] : first_ + i; }
  const uint32_t* ids() const { return list_ ? list_->data() : nullptr; }
  uint32_t first() const { return first_; }

 private:
  uint32_t first_ = 0;
  uint32_t count_ = 0;
  std::shared_ptr<const std::vector<uint32_t>> list_;
};

// A box of cells (one base set per dimension, in schema order) and how many
// distinct facts to draw from it.
struct Stratum {
  std::vector<BaseSet> dims;
  uint64_t count = 0;
};

// Draws strata[i].count distinct keys uniformly from each stratum and returns
// all of them sorted. Strata must be pairwise disjoint (a logic_error if two
// share a key). A stratum asked for more than half of its cells is an
// InputError (the scale is too large for the cube's shape). Stratum i uses
// random stream i, so the result depends on (strata, seed) only.
std::vector<uint64_t> sample_keys(const KeyCodec& codec, const std::vector<Stratum>& strata,
                                  uint64_t seed, const ProgressFn& progress);

// Sorts keys ascending on every core: one parallel scatter into buckets by
// the top bits of (key - smallest key), through a buffer as large as the
// keys, then each bucket sorted on its own (a large one on every core).
// tbb::parallel_sort partitions its first ranges on one thread, which at
// billions of keys was most of a large cube's generation; below 2^24 keys it
// is what runs (`bucketed_from`: the tests lower it).
void parallel_sort_keys(std::vector<uint64_t>& keys, size_t bucketed_from = size_t{1} << 24);

// Fills one value column in parallel: value(i) for every fact i.
template <typename Value>
std::vector<double> fill_column(size_t n, Value&& value) {
  std::vector<double> column;
  // Still a zero-fill on one thread (117 GB a column at Biker scale 52, about
  // 2 GB/s); huge pages make its faults fewer.
  resize_on_huge_pages(column, n);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n, 1 << 16),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t i = r.begin(); i < r.end(); ++i) column[i] = value(i);
                    });
  return column;
}

// Rounds to cents.
inline double round_cents(double v) { return static_cast<double>(std::llround(v * 100.0)) / 100.0; }

}  // namespace gpuolap::generate_detail
