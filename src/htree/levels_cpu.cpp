// The cpu-parallel H-tree: tuples sorted and folded into leaf rows, leaf rows
// merged, and the levels built from sorted distinct leaf rows, with TBB.
// The same steps as the GPU form (gpu/htree_gpu.cu), so that both give the
// same tree: a node of level i starts at each leaf row whose first
// difference from the row before is at dimension i or above.
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <numeric>

#include "htree/header_table.hpp"
#include "htree/htree.hpp"
#include "htree/key_packing.hpp"

namespace gpuolap::htree {
namespace {

constexpr std::size_t kGrain = 1 << 14;

// The rows r in [0, n) with pred(r), in order, found in parallel chunks.
template <typename Pred>
std::vector<std::uint32_t> rows_where(std::size_t n, Pred pred) {
  const std::size_t chunks = (n + kGrain - 1) / kGrain;
  std::vector<std::size_t> counts(chunks + 1, 0);
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t c) {
    std::size_t k = 0;
    for (std::size_t r = c * kGrain; r < std::min(n, (c + 1) * kGrain); ++r) k += pred(r) ? 1 : 0;
    counts[c + 1] = k;
  });
  std::partial_sum(counts.begin(), counts.end(), counts.begin());
  std::vector<std::uint32_t> rows(counts.back());
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t c) {
    std::size_t k = counts[c];
    for (std::size_t r = c * kGrain; r < std::min(n, (c + 1) * kGrain); ++r)
      if (pred(r)) rows[k++] = static_cast<std::uint32_t>(r);
  });
  return rows;
}

std::vector<std::uint32_t> cardinalities_of(const std::vector<std::vector<std::uint32_t>>& codes) {
  std::vector<std::uint32_t> card(codes.size(), 1);
  tbb::parallel_for(std::size_t{0}, codes.size(), [&](std::size_t d) {
    for (std::uint32_t c : codes[d]) card[d] = std::max(card[d], c + 1);
  });
  return card;
}

// Whether leaf row a of x sorts before row b of y (codes compared in order).
bool row_less(const LeafRows& x, std::size_t a, const LeafRows& y, std::size_t b) {
  for (std::size_t d = 0; d < x.codes.size(); ++d)
    if (x.codes[d][a] != y.codes[d][b]) return x.codes[d][a] < y.codes[d][b];
  return false;
}
bool row_equal(const LeafRows& x, std::size_t a, const LeafRows& y, std::size_t b) {
  for (std::size_t d = 0; d < x.codes.size(); ++d)
    if (x.codes[d][a] != y.codes[d][b]) return false;
  return true;
}

}  // namespace

void fill_header_table(Level& level, std::uint32_t cardinality) {
  const std::size_t n = level.size();
  std::vector<std::uint32_t> count(cardinality, 0);
  for (std::uint32_t k : level.key) ++count[k];
  level.header_key.clear();
  level.header_count.clear();
  level.header_first.clear();
  std::vector<std::uint32_t> next(cardinality, 0);
  std::uint32_t first = 0;
  for (std::uint32_t k = 0; k < cardinality; ++k) {
    if (!count[k]) continue;
    level.header_key.push_back(k);
    level.header_count.push_back(count[k]);
    level.header_first.push_back(first);
    next[k] = first;
    first += count[k];
  }
  level.side_links.resize(n);
  for (std::size_t node = 0; node < n; ++node) level.side_links[next[level.key[node]]++] = static_cast<std::uint32_t>(node);
}

LeafRows leaves_of_tuples(const CodedTuples& tuples) {
  const std::size_t n = tuples.size(), m = tuples.codes.size();
  LeafRows out;
  out.codes.assign(m, {});
  if (n == 0) return out;
  const KeyPacking packing = make_packing(cardinalities_of(tuples.codes));
  const std::size_t w = static_cast<std::size_t>(packing.words);
  std::vector<std::uint64_t> words(n * w, 0);
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t r) {
    for (std::size_t d = 0; d < m; ++d)
      words[r * w + packing.word[d]] |= std::uint64_t{tuples.codes[d][r]} << packing.shift[d];
  });
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  tbb::parallel_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const std::uint64_t* x = words.data() + a * w;
    const std::uint64_t* y = words.data() + b * w;
    return std::lexicographical_compare(x, x + w, y, y + w);
  });
  const auto starts = rows_where(n, [&](std::size_t i) {
    const std::uint64_t* x = words.data() + order[i] * w;
    return i == 0 || !std::equal(x, x + w, words.data() + order[i - 1] * w);
  });
  const std::size_t leaves = starts.size();
  for (auto& c : out.codes) c.resize(leaves);
  out.aggregate.resize(leaves);
  tbb::parallel_for(std::size_t{0}, leaves, [&](std::size_t k) {
    const std::size_t end = k + 1 < leaves ? starts[k + 1] : n;
    for (std::size_t d = 0; d < m; ++d) out.codes[d][k] = tuples.codes[d][order[starts[k]]];
    Aggregate a;
    for (std::size_t i = starts[k]; i < end; ++i)
      if (tuples.measure_null.empty() || !tuples.measure_null[order[i]]) a.add(tuples.measure[order[i]]);
    out.aggregate[k] = a;
  });
  return out;
}

void build_levels(HTree& tree, const LeafRows& leaves) {
  const std::size_t m = tree.dimensions.size(), n = leaves.size();
  tree.levels.assign(m, {});
  tree.total = {};
  if (n == 0) {
    for (auto& l : tree.levels) fill_header_table(l, 0);
    return;
  }
  // diff[r]: the first dimension where row r differs from row r - 1.
  std::vector<std::uint8_t> diff(n, 0);
  tbb::parallel_for(std::size_t{1}, n, [&](std::size_t r) {
    std::size_t d = 0;
    while (d + 1 < m && leaves.codes[d][r] == leaves.codes[d][r - 1]) ++d;
    diff[r] = static_cast<std::uint8_t>(d);
  });
  std::vector<std::vector<std::uint32_t>> starts(m);
  tbb::parallel_for(std::size_t{0}, m, [&](std::size_t i) {
    starts[i] = i + 1 == m ? std::vector<std::uint32_t>() : rows_where(n, [&](std::size_t r) { return diff[r] <= i; });
  });
  starts[m - 1].resize(n);
  std::iota(starts[m - 1].begin(), starts[m - 1].end(), 0u);
  tbb::parallel_for(std::size_t{0}, m, [&](std::size_t i) {
    Level& l = tree.levels[i];
    const auto& s = starts[i];
    const std::size_t count = s.size();
    l.key.resize(count);
    l.parent.resize(count);
    l.first_child.resize(count);
    l.child_count.resize(count);
    tbb::parallel_for(std::size_t{0}, count, [&](std::size_t k) {
      l.key[k] = leaves.codes[i][s[k]];
      // The node above that starts at or before this one's first row.
      l.parent[k] = i ? static_cast<std::uint32_t>(std::upper_bound(starts[i - 1].begin(), starts[i - 1].end(), s[k]) -
                                                    starts[i - 1].begin() - 1)
                      : 0;
      if (i + 1 < m) {
        // Every start of this level starts a node of the level below too.
        const auto& below = starts[i + 1];
        const std::size_t first = std::lower_bound(below.begin(), below.end(), s[k]) - below.begin();
        const std::size_t next = k + 1 < count ? std::lower_bound(below.begin(), below.end(), s[k + 1]) - below.begin()
                                               : below.size();
        l.first_child[k] = static_cast<std::uint32_t>(first);
        l.child_count[k] = static_cast<std::uint32_t>(next - first);
      } else {
        l.first_child[k] = 0;
        l.child_count[k] = 0;
      }
    });
  });
  // Roll-up, bottom up: a node's aggregate over its children's.
  tree.levels[m - 1].aggregate = leaves.aggregate;
  for (std::size_t i = m - 1; i-- > 0;) {
    Level& l = tree.levels[i];
    const Level& below = tree.levels[i + 1];
    l.aggregate.assign(l.size(), {});
    tbb::parallel_for(std::size_t{0}, l.size(), [&](std::size_t k) {
      Aggregate a;
      for (std::uint32_t c = l.first_child[k]; c < l.first_child[k] + l.child_count[k]; ++c) a.merge(below.aggregate[c]);
      l.aggregate[k] = a;
    });
  }
  for (const Aggregate& a : tree.levels[0].aggregate) tree.total.merge(a);
  tbb::parallel_for(std::size_t{0}, m, [&](std::size_t i) {
    fill_header_table(tree.levels[i], static_cast<std::uint32_t>(tree.dictionaries[i].values.size()));
  });
}

LeafRows leaves_of_tree(const HTree& tree) {
  const std::size_t m = tree.levels.size(), n = tree.leaf_count();
  LeafRows out;
  out.codes.assign(m, std::vector<std::uint32_t>(n));
  if (n == 0) return out;
  out.aggregate = tree.levels.back().aggregate;
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t leaf) {
    std::uint32_t node = static_cast<std::uint32_t>(leaf);
    for (std::size_t i = m; i-- > 0;) {
      out.codes[i][leaf] = tree.levels[i].key[node];
      node = tree.levels[i].parent[node];
    }
  });
  return out;
}

LeafRows merge_leaves(const LeafRows& a, const LeafRows& b) {
  const std::size_t m = a.codes.size(), na = a.size(), nb = b.size();
  // The place of each row of b among a's rows (lower bound) and whether it
  // equals that row: the paper's search step.
  std::vector<std::uint32_t> rank(nb);
  std::vector<std::uint8_t> found(nb);
  tbb::parallel_for(std::size_t{0}, nb, [&](std::size_t e) {
    std::size_t lo = 0, hi = na;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (row_less(a, mid, b, e)) lo = mid + 1;
      else hi = mid;
    }
    rank[e] = static_cast<std::uint32_t>(lo);
    found[e] = lo < na && row_equal(a, lo, b, e);
  });
  // Rows of b that equal one of a fold into it; the others are scattered
  // between a's rows: a's row j moves up by the new rows before it.
  const auto inserted = rows_where(nb, [&](std::size_t e) { return !found[e]; });
  LeafRows out;
  const std::size_t n = na + inserted.size();
  out.codes.assign(m, std::vector<std::uint32_t>(n));
  out.aggregate.resize(n);
  std::vector<std::uint32_t> inserted_rank(inserted.size());
  for (std::size_t k = 0; k < inserted.size(); ++k) inserted_rank[k] = rank[inserted[k]];
  tbb::parallel_for(std::size_t{0}, na, [&](std::size_t j) {
    const std::size_t to = j + (std::upper_bound(inserted_rank.begin(), inserted_rank.end(), j) - inserted_rank.begin());
    for (std::size_t d = 0; d < m; ++d) out.codes[d][to] = a.codes[d][j];
    out.aggregate[to] = a.aggregate[j];
  });
  tbb::parallel_for(std::size_t{0}, inserted.size(), [&](std::size_t k) {
    const std::size_t e = inserted[k], to = inserted_rank[k] + k;
    for (std::size_t d = 0; d < m; ++d) out.codes[d][to] = b.codes[d][e];
    out.aggregate[to] = b.aggregate[e];
  });
  // Folding after the scatter: a's row j went to j + (inserted ranks <= j).
  // b's rows are distinct, so no two fold into one row.
  tbb::parallel_for(std::size_t{0}, nb, [&](std::size_t e) {
    if (!found[e]) return;
    const std::size_t j = rank[e];
    const std::size_t to = j + (std::upper_bound(inserted_rank.begin(), inserted_rank.end(), j) - inserted_rank.begin());
    out.aggregate[to].merge(b.aggregate[e]);
  });
  return out;
}

}  // namespace gpuolap::htree
