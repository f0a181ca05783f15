#include "fact_sampler.hpp"

#include <fmt/format.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "gpuolap/error.hpp"

namespace gpuolap::generate_detail {

std::vector<uint32_t> Rng::sample(uint32_t n, uint32_t k) {
  if (k > n) throw std::logic_error("Rng::sample: more numbers than the range holds");
  std::vector<uint32_t> all(n);
  std::iota(all.begin(), all.end(), 0u);
  for (uint32_t i = 0; i < k; ++i) std::swap(all[i], all[i + below(n - i)]);
  all.resize(k);
  return all;
}

uint64_t scaled_count(double scale, uint64_t count) {
  return static_cast<uint64_t>(std::llround(scale * static_cast<double>(count)));
}

std::vector<uint64_t> apportion(uint64_t total, const std::vector<double>& weights) {
  std::vector<uint64_t> parts(weights.size(), 0);
  long double sum = 0;
  for (double w : weights) sum += w;
  if (total == 0) return parts;
  if (weights.empty() || !(sum > 0)) throw std::logic_error("apportion: no positive weight");

  std::vector<long double> fraction(weights.size());
  uint64_t assigned = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    const long double quota = static_cast<long double>(total) * weights[i] / sum;
    parts[i] = static_cast<uint64_t>(quota);
    fraction[i] = quota - static_cast<long double>(parts[i]);
    assigned += parts[i];
  }
  // Rounding of the quotas can only leave a remainder below the number of
  // parts; guard against it overshooting all the same.
  while (assigned > total) {
    const size_t i =
        static_cast<size_t>(std::max_element(parts.begin(), parts.end()) - parts.begin());
    --parts[i];
    --assigned;
  }
  std::vector<size_t> order(weights.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return fraction[a] > fraction[b]; });
  for (size_t j = 0; assigned < total; ++j, ++assigned) ++parts[order[j % order.size()]];
  return parts;
}

namespace {

// One dimension of a stratum that takes more than one value.
struct Axis {
  uint32_t size;
  uint32_t first;
  const uint32_t* ids;  // null for a range
  int shift;
  bool new_word;  // draw a fresh random word before this axis
};

// Draws stratum.count distinct keys of the stratum into out[0, count), sorted.
// Candidates are generated in bulk, sorted, merged with the keys found so
// far and deduplicated; the deficit left by duplicates is drawn again with
// the next candidate indices until none is left.
void draw_stratum(const KeyCodec& codec, const Stratum& stratum, uint64_t seed, uint64_t stream,
                  uint64_t* out) {
  const uint64_t n = stratum.count;
  if (n == 0) return;

  // Dimensions with a single base id are fixed bits of every key. The others
  // take their numbers as digits of random words: a word serves several
  // dimensions while the product of their sizes stays below 2^32, which
  // keeps every digit uniform to within 2^-32.
  uint64_t fixed = 0;
  std::vector<Axis> axes;
  uint64_t budget = uint64_t{1} << 32;  // forces a word before the first axis
  uint32_t words = 0;
  for (size_t d = 0; d < stratum.dims.size(); ++d) {
    const BaseSet& set = stratum.dims[d];
    if (set.size() == 1) {
      fixed |= uint64_t{set[0]} << codec.shift(d);
      continue;
    }
    Axis a{set.size(), set.first(), set.ids(), codec.shift(d), false};
    if (budget * a.size > (uint64_t{1} << 32)) {
      a.new_word = true;
      ++words;
      budget = 1;
    }
    budget *= a.size;
    axes.push_back(a);
  }

  const uint64_t stream_seed = seed ^ splitmix64(stream ^ 0x243f6a8885a308d3ULL);
  auto candidate = [&](uint64_t index) {
    uint64_t key = fixed;
    uint64_t word = 0;
    uint64_t counter = index * words;
    for (const Axis& a : axes) {
      if (a.new_word) word = mix(stream_seed, counter++);
      const unsigned __int128 product = static_cast<unsigned __int128>(word) * a.size;
      const uint32_t i = static_cast<uint32_t>(product >> 64);
      word = static_cast<uint64_t>(product);
      key |= uint64_t{a.ids ? a.ids[i] : a.first + i} << a.shift;
    }
    return key;
  };

  uint64_t filled = 0;
  uint64_t index = 0;
  while (filled < n) {
    for (uint64_t j = filled; j < n; ++j) out[j] = candidate(index++);
    std::sort(out + filled, out + n);
    if (filled > 0) std::inplace_merge(out, out + filled, out + n);
    filled = static_cast<uint64_t>(std::unique(out, out + n) - out);
  }
}

}  // namespace

std::vector<uint64_t> sample_keys(const KeyCodec& codec, const std::vector<Stratum>& strata,
                                  uint64_t seed, const ProgressFn& progress) {
  std::vector<uint64_t> offset(strata.size() + 1, 0);
  for (size_t i = 0; i < strata.size(); ++i) {
    const Stratum& s = strata[i];
    if (s.dims.size() != codec.dimension_count())
      throw std::logic_error("sample_keys: a stratum of the wrong rank");
    double cells = 1;
    for (const BaseSet& set : s.dims) cells *= set.size();
    if (s.count > 0 && 2.0 * static_cast<double>(s.count) > cells)
      throw InputError(
          fmt::format("the scale asks for {} facts in a part of the cube that has {} cells; use a "
                      "smaller scale",
                      s.count, cells));
    offset[i + 1] = offset[i] + s.count;
  }
  const uint64_t total = offset.back();
  // Progress units: one per fact drawn, then a quarter of that for the sort.
  const uint64_t units = total + total / 4;
  std::vector<uint64_t> keys;
  resize_on_huge_pages(keys, total);

  // Strata are drawn in parallel, in batches of about 2 % of the facts so
  // that progress can be reported from the calling thread.
  const uint64_t batch_facts = std::max<uint64_t>(total / 50, 1);
  for (size_t begin = 0; begin < strata.size();) {
    size_t end = begin + 1;
    while (end < strata.size() && offset[end] - offset[begin] < batch_facts) ++end;
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, 1),
                      [&](const tbb::blocked_range<size_t>& r) {
                        for (size_t i = r.begin(); i < r.end(); ++i)
                          draw_stratum(codec, strata[i], seed, i, keys.data() + offset[i]);
                      });
    if (progress) progress(offset[end], units);
    begin = end;
  }

  parallel_sort_keys(keys);
  const bool distinct = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(1, std::max<size_t>(keys.size(), 1), 1 << 16), true,
      [&](const tbb::blocked_range<size_t>& r, bool ok) {
        for (size_t i = r.begin(); ok && i < r.end(); ++i) ok = keys[i] != keys[i - 1];
        return ok;
      },
      [](bool a, bool b) { return a && b; });
  if (!distinct) throw std::logic_error("sample_keys: two strata share a cell");
  if (progress) progress(units, units);
  return keys;
}

void parallel_sort_keys(std::vector<uint64_t>& keys, size_t bucketed_from) {
  const size_t n = keys.size();
  // Below this its 128 MiB table of chunk offsets costs more than it saves
  // (a review measured 192 against 59 ms for tbb at 1 M keys on 2 cores).
  if (n < bucketed_from) {
    tbb::parallel_sort(keys.begin(), keys.end());
    return;
  }
  using Range = std::pair<uint64_t, uint64_t>;
  const Range range = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, n, 1 << 16), Range{~uint64_t{0}, 0},
      [&](const tbb::blocked_range<size_t>& r, Range m) {
        for (size_t i = r.begin(); i < r.end(); ++i) m = {std::min(m.first, keys[i]), std::max(m.second, keys[i])};
        return m;
      },
      [](Range a, Range b) { return Range{std::min(a.first, b.first), std::max(a.second, b.second)}; });
  const uint64_t low = range.first, high = range.second;  // named, not bound: lambdas below take them
  constexpr int kBucketBits = 16;
  constexpr size_t kBuckets = size_t{1} << kBucketBits;
  const int shift = std::max(0, static_cast<int>(std::bit_width(high - low)) - kBucketBits);
  auto bucket = [&](uint64_t key) { return static_cast<size_t>((key - low) >> shift); };

  // Per chunk of the input and bucket, where the chunk's keys of that
  // bucket go: chunks write their runs of a bucket in chunk order.
  constexpr size_t kChunks = 256;
  const size_t per_chunk = (n + kChunks - 1) / kChunks;
  std::vector<uint64_t> at(kChunks * kBuckets, 0);
  tbb::parallel_for(size_t{0}, kChunks, [&](size_t c) {
    uint64_t* count = &at[c * kBuckets];
    for (size_t i = c * per_chunk; i < std::min(n, (c + 1) * per_chunk); ++i) ++count[bucket(keys[i])];
  });
  std::vector<uint64_t> bucket_begin(kBuckets + 1);
  uint64_t sum = 0;
  for (size_t b = 0; b < kBuckets; ++b) {
    bucket_begin[b] = sum;
    for (size_t c = 0; c < kChunks; ++c) sum += std::exchange(at[c * kBuckets + b], sum);
  }
  bucket_begin[kBuckets] = sum;

  // Not a vector: its zero-fill would be one thread writing every byte.
  // The keys' size again at the peak, before the value columns exist.
  const std::unique_ptr<uint64_t[]> scattered(new uint64_t[n]);
  tbb::parallel_for(size_t{0}, kChunks, [&](size_t c) {
    uint64_t* next = &at[c * kBuckets];
    for (size_t i = c * per_chunk; i < std::min(n, (c + 1) * per_chunk); ++i) scattered[next[bucket(keys[i])]++] = keys[i];
  });
  // Keys far from the rest can crowd most keys into a few buckets (the
  // range is cut evenly between the smallest and largest): a bucket that
  // large is sorted on every core too.
  const size_t large_bucket = std::max<size_t>(n / 256, size_t{1} << 20);
  tbb::parallel_for(size_t{0}, kBuckets, [&](size_t b) {
    uint64_t* first = scattered.get() + bucket_begin[b];
    uint64_t* last = scattered.get() + bucket_begin[b + 1];
    if (static_cast<size_t>(last - first) > large_bucket)
      tbb::parallel_sort(first, last);
    else
      std::sort(first, last);
    std::copy(first, last, keys.data() + bucket_begin[b]);
  });
}

}  // namespace gpuolap::generate_detail
