// The cubes of row slices (one per GPU context) merged into one: per set, a
// k-way merge of the parts' cells by key, equal keys' states folded in
// part order (the slices' order).
#include <tbb/parallel_for.h>

#include "cube/coded_table.hpp"

namespace gpuolap::cube {
namespace {

groupby::AggregateState state_at(const SetCells& c, std::size_t a, std::size_t i) {
  groupby::AggregateState s;
  s.bits = c.bits[a][i];
  s.high = c.high[a].empty() ? 0 : c.high[a][i];
  s.count = c.count[a].empty() ? 0 : c.count[a][i];
  return s;
}

SetCells merge_set(const CodedTable& coded, const std::vector<const SetCells*>& parts) {
  const std::size_t aggregates = coded.slots.size();
  std::vector<std::uint64_t> keys;
  std::vector<groupby::AggregateState> states;
  std::vector<std::size_t> head(parts.size(), 0);
  while (true) {
    // The least key at the parts' heads.
    std::size_t least = parts.size();
    for (std::size_t p = 0; p < parts.size(); ++p)
      if (head[p] < parts[p]->keys.size() && (least == parts.size() || parts[p]->keys[head[p]] < parts[least]->keys[head[least]]))
        least = p;
    if (least == parts.size()) break;
    const std::uint64_t key = parts[least]->keys[head[least]];
    keys.push_back(key);
    for (std::size_t a = 0; a < aggregates; ++a) states.push_back(groupby::identity_state(coded.slots[a]));
    groupby::AggregateState* into = &states[states.size() - aggregates];
    for (std::size_t p = 0; p < parts.size(); ++p)
      if (head[p] < parts[p]->keys.size() && parts[p]->keys[head[p]] == key) {
        for (std::size_t a = 0; a < aggregates; ++a) groupby::merge_state(coded.slots[a], into[a], state_at(*parts[p], a, head[p]));
        ++head[p];
      }
  }
  return cells_from_states(coded, std::move(keys), states);
}

}  // namespace

std::vector<SetCells> merge_parts(const CodedTable& coded, const std::vector<std::vector<SetCells>>& parts) {
  if (parts.size() == 1) return parts.front();
  std::vector<SetCells> out(parts.front().size());
  tbb::parallel_for(std::size_t{0}, out.size(), [&](std::size_t s) {
    std::vector<const SetCells*> of_set;
    for (const auto& part : parts) of_set.push_back(&part[s]);
    out[s] = merge_set(coded, of_set);
  });
  return out;
}

}  // namespace gpuolap::cube
