// The cubes of row slices (one per GPU context) merged into one: per set,
// the parts' cells in key order, equal keys' states folded in part order
// (the slices' order).
//
// Parts often hold long stretches of keys that no other part has: cut by
// ranges of the finest key, a set that keeps the first columns overlaps
// only where the ranges meet. So the merge walks stretches, not cells: the
// part with the least key copies every cell below the other parts' least
// key at once (found by binary search), and only cells of equal keys are
// folded one by one. Cut by position, parts in random order share most
// keys, and the walk folds cell by cell as a plain k-way merge would.
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cstring>

#include "cube/coded_table.hpp"

namespace gpuolap::cube {
namespace {

// Where the merged cells come from, in order: a stretch of one part's
// cells copied as they are, or one cell folded from several parts.
struct Piece {
  std::size_t part;  // a stretch's part, or kFold
  std::size_t begin, end;  // a stretch's cells; a fold's contributors in `folded`
  std::size_t out;   // its first merged cell
};
constexpr std::size_t kFold = ~std::size_t{0};

SetCells merge_set(const CodedTable& coded, const std::vector<const SetCells*>& parts) {
  const std::size_t k = parts.size();
  std::vector<Piece> pieces;
  std::vector<std::pair<std::size_t, std::size_t>> folded;  // (part, cell), per fold in part order
  std::vector<std::size_t> head(k, 0);
  std::size_t cells = 0;
  constexpr std::uint64_t kNone = ~std::uint64_t{0};  // past every key (keys fit 63 bits)
  while (true) {
    // The least head key, its first part, and the least key of the others.
    std::uint64_t least = kNone, next = kNone;
    std::size_t first = k;
    for (std::size_t p = 0; p < k; ++p) {
      if (head[p] == parts[p]->keys.size()) continue;
      const std::uint64_t key = parts[p]->keys[head[p]];
      if (key < least) {
        next = least;
        least = key;
        first = p;
      } else if (key < next) {
        next = key;
      }
    }
    if (first == k) break;
    if (least < next) {  // a stretch that no other part has
      const std::vector<std::uint64_t>& keys = parts[first]->keys;
      const auto end = static_cast<std::size_t>(std::lower_bound(keys.begin() + head[first], keys.end(), next) -
                                                keys.begin());
      pieces.push_back({first, head[first], end, cells});
      cells += end - head[first];
      head[first] = end;
      continue;
    }
    const std::size_t from = folded.size();
    for (std::size_t p = 0; p < k; ++p)
      if (head[p] < parts[p]->keys.size() && parts[p]->keys[head[p]] == least) folded.emplace_back(p, head[p]++);
    pieces.push_back({kFold, from, folded.size(), cells++});
  }

  SetCells out = empty_cells(coded);
  out.keys.resize(cells);
  for (const Piece& piece : pieces) {
    if (piece.part == kFold)
      out.keys[piece.out] = parts[folded[piece.begin].first]->keys[folded[piece.begin].second];
    else
      std::memcpy(out.keys.data() + piece.out, parts[piece.part]->keys.data() + piece.begin,
                  (piece.end - piece.begin) * 8);
  }
  // Each aggregate's words: stretches copied, folds from the identity with
  // every contributor merged in part order.
  tbb::parallel_for(std::size_t{0}, coded.slots.size(), [&](std::size_t a) {
    const groupby::AggregateSlot& slot = coded.slots[a];
    const bool high = groupby::integer_sum(slot), count = slot.keeps_count;
    out.bits[a].resize(cells);
    if (high) out.high[a].resize(cells);
    if (count) out.count[a].resize(cells);
    for (const Piece& piece : pieces) {
      if (piece.part != kFold) {
        const SetCells& part = *parts[piece.part];
        const std::size_t n = (piece.end - piece.begin) * 8;
        std::memcpy(out.bits[a].data() + piece.out, part.bits[a].data() + piece.begin, n);
        if (high) std::memcpy(out.high[a].data() + piece.out, part.high[a].data() + piece.begin, n);
        if (count) std::memcpy(out.count[a].data() + piece.out, part.count[a].data() + piece.begin, n);
        continue;
      }
      groupby::AggregateState state = groupby::identity_state(slot);
      for (std::size_t f = piece.begin; f < piece.end; ++f) {
        const auto [p, i] = folded[f];
        groupby::AggregateState s;
        s.bits = parts[p]->bits[a][i];
        s.high = high ? parts[p]->high[a][i] : 0;
        s.count = count ? parts[p]->count[a][i] : 0;
        groupby::merge_state(slot, state, s);
      }
      out.bits[a][piece.out] = state.bits;
      if (high) out.high[a][piece.out] = state.high;
      if (count) out.count[a][piece.out] = state.count;
    }
  });
  return out;
}

}  // namespace

std::vector<SetCells> merge_parts(const CodedTable& coded, const std::vector<std::vector<SetCells>>& parts,
                                  const std::vector<bool>& skip) {
  if (parts.size() == 1 && skip.empty()) return parts.front();
  std::vector<SetCells> out(parts.front().size());
  tbb::parallel_for(std::size_t{0}, out.size(), [&](std::size_t s) {
    if (s < skip.size() && skip[s]) return;
    std::vector<const SetCells*> of_set;
    for (const auto& part : parts) of_set.push_back(&part[s]);
    out[s] = merge_set(coded, of_set);
  });
  return out;
}

}  // namespace gpuolap::cube
