// Slices of a coded table by ranges of its finest key (key_split.hpp).
#include "cube/key_split.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <algorithm>
#include <cstring>

#include "cube/coded_table.hpp"

namespace gpuolap::cube {
namespace {

constexpr std::size_t kSample = 65536;
constexpr std::size_t kBlockRows = std::size_t{1} << 20;
constexpr std::uint64_t kPastEveryKey = ~std::uint64_t{0};  // keys fit 63 bits

// Copies the rows `at` (ascending, `n` of them) of one column to `to`, `width` bytes a row.
void gather(const void* from, std::size_t width, const std::uint32_t* at, std::size_t n, std::size_t first, void* to) {
  auto rows = [&](auto word) {
    using T = decltype(word);
    const T* f = static_cast<const T*>(from) + first;
    T* t = static_cast<T*>(to);
    for (std::size_t i = 0; i < n; ++i) t[i] = f[at[i]];
  };
  switch (width) {
    case 1: rows(std::uint8_t{}); break;
    case 4: rows(std::uint32_t{}); break;
    case 8: rows(std::uint64_t{}); break;
    default: {
      const auto* f = static_cast<const std::uint8_t*>(from) + first * width;
      auto* t = static_cast<std::uint8_t*>(to);
      for (std::size_t i = 0; i < n; ++i) std::memcpy(t + i * width, f + at[i] * width, width);
    }
  }
}

}  // namespace

double KeySplit::imbalance() const {
  std::size_t total = 0, most = 0;
  for (std::size_t r : rows) {
    total += r;
    most = std::max(most, r);
  }
  return total ? static_cast<double>(most) * static_cast<double>(rows.size()) / static_cast<double>(total) : 1.0;
}

KeySplit split_by_key(const CodedTable& coded, std::size_t parts) {
  parts = std::max<std::size_t>(parts, 1);
  const std::uint64_t* keys = coded.keys.data();
  const std::size_t n = coded.rows;
  KeySplit split;
  split.cuts.push_back(0);
  // The keys at the quantiles: all of them when sorted, else a sample.
  std::vector<std::uint64_t> sample;
  if (!coded.sorted) {
    const std::size_t s = std::min(n, kSample);
    sample.resize(s);
    for (std::size_t i = 0; i < s; ++i) sample[i] = keys[n / s * i + n % s * i / s];
    std::sort(sample.begin(), sample.end());
  }
  const std::uint64_t* quantile_of = coded.sorted ? keys : sample.data();
  const std::size_t of = coded.sorted ? n : sample.size();
  for (std::size_t p = 1; p < parts; ++p)
    split.cuts.push_back(std::max(split.cuts.back(), of ? quantile_of[of * p / parts] : 0));
  split.cuts.push_back(kPastEveryKey);
  split.rows.assign(parts, 0);
  if (coded.sorted) {
    for (std::size_t p = 0; p < parts; ++p)
      split.rows[p] = static_cast<std::size_t>(std::lower_bound(keys, keys + n, split.cuts[p + 1]) -
                                               std::lower_bound(keys, keys + n, split.cuts[p]));
    return split;
  }
  // A row's part: how many inner cuts are at or below its key.
  const std::uint64_t* inner = split.cuts.data() + 1;
  const std::size_t inner_cuts = parts - 1;
  split.rows = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n, kBlockRows), std::vector<std::size_t>(parts, 0),
      [&](const tbb::blocked_range<std::size_t>& r, std::vector<std::size_t> counts) {
        for (std::size_t i = r.begin(); i < r.end(); ++i)
          ++counts[static_cast<std::size_t>(std::upper_bound(inner, inner + inner_cuts, keys[i]) - inner)];
        return counts;
      },
      [](std::vector<std::size_t> a, const std::vector<std::size_t>& b) {
        for (std::size_t p = 0; p < a.size(); ++p) a[p] += b[p];
        return a;
      });
  return split;
}

std::size_t copy_key_range(const std::uint64_t* keys, std::size_t rows, bool sorted, std::uint64_t lo,
                           std::uint64_t hi, const std::vector<RowColumn>& columns) {
  if (sorted) {
    const auto first = static_cast<std::size_t>(std::lower_bound(keys, keys + rows, lo) - keys);
    const auto last = static_cast<std::size_t>(std::lower_bound(keys + first, keys + rows, hi) - keys);
    for (const RowColumn& c : columns)
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, (last - first) * c.width, std::size_t{1} << 22),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          std::memcpy(static_cast<std::uint8_t*>(c.to) + r.begin(),
                                      static_cast<const std::uint8_t*>(c.from) + first * c.width + r.begin(), r.size());
                        });
    return last - first;
  }
  // Each block's rows in range counted, then copied from where the blocks
  // before it end.
  const std::size_t blocks = (rows + kBlockRows - 1) / kBlockRows;
  std::vector<std::size_t> at(blocks + 1, 0);
  auto in_range = [&](std::size_t i) { return keys[i] >= lo && keys[i] < hi; };
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::size_t count = 0;
    for (std::size_t i = b * kBlockRows; i < std::min(rows, (b + 1) * kBlockRows); ++i) count += in_range(i);
    at[b + 1] = count;
  });
  for (std::size_t b = 0; b < blocks; ++b) at[b + 1] += at[b];
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    const std::size_t first = b * kBlockRows, last = std::min(rows, first + kBlockRows);
    std::vector<std::uint32_t> picked;  // rows of the block in range, from `first`
    picked.reserve(at[b + 1] - at[b]);
    for (std::size_t i = first; i < last; ++i)
      if (in_range(i)) picked.push_back(static_cast<std::uint32_t>(i - first));
    for (const RowColumn& c : columns)
      gather(c.from, c.width, picked.data(), picked.size(), first, static_cast<std::uint8_t*>(c.to) + at[b] * c.width);
  });
  return at[blocks];
}

}  // namespace gpuolap::cube
