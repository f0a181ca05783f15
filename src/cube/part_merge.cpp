// The cubes of row slices (one per GPU context) merged into one: per set, a
// k-way merge of the parts' cells by key, equal keys' states folded in
// part order (the slices' order).
#include <tbb/parallel_for.h>

#include "cube/coded_table.hpp"

namespace gpuolap::cube {
namespace {

SetCells merge_set(const CodedTable& coded, const std::vector<const SetCells*>& parts) {
  const std::size_t k = parts.size();
  SetCells out = empty_cells(coded);
  // The merged keys, and where each part's cell lands among them.
  std::vector<std::vector<std::uint32_t>> landing(k);
  std::vector<std::size_t> head(k, 0);
  for (std::size_t p = 0; p < k; ++p) landing[p].resize(parts[p]->keys.size());
  while (true) {
    std::uint64_t least = ~std::uint64_t{0};
    bool any = false;
    for (std::size_t p = 0; p < k; ++p)
      if (head[p] < parts[p]->keys.size() && (!any || parts[p]->keys[head[p]] < least)) {
        least = parts[p]->keys[head[p]];
        any = true;
      }
    if (!any) break;
    const auto at = static_cast<std::uint32_t>(out.keys.size());
    out.keys.push_back(least);
    for (std::size_t p = 0; p < k; ++p)
      if (head[p] < parts[p]->keys.size() && parts[p]->keys[head[p]] == least) landing[p][head[p]++] = at;
  }
  // Each aggregate's states: the identity, then every part's folded in, in
  // part order.
  const std::size_t cells = out.keys.size();
  tbb::parallel_for(std::size_t{0}, coded.slots.size(), [&](std::size_t a) {
    const groupby::AggregateSlot& slot = coded.slots[a];
    const bool high = groupby::integer_sum(slot), count = slot.keeps_count;
    std::vector<groupby::AggregateState> states(cells, groupby::identity_state(slot));
    for (std::size_t p = 0; p < k; ++p) {
      const SetCells& part = *parts[p];
      for (std::size_t i = 0; i < part.keys.size(); ++i) {
        groupby::AggregateState s;
        s.bits = part.bits[a][i];
        s.high = high ? part.high[a][i] : 0;
        s.count = count ? part.count[a][i] : 0;
        groupby::merge_state(slot, states[landing[p][i]], s);
      }
    }
    out.bits[a].resize(cells);
    if (high) out.high[a].resize(cells);
    if (count) out.count[a].resize(cells);
    for (std::size_t c = 0; c < cells; ++c) {
      out.bits[a][c] = states[c].bits;
      if (high) out.high[a][c] = states[c].high;
      if (count) out.count[a][c] = states[c].count;
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
