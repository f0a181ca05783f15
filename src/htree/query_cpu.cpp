// Queries on the SoA tree, a query per task (cpu-parallel): on-popular-path
// queries by a binary search per level down one path (Algorithm 3), the
// others by online cubing over the side links of the deepest instantiated
// level (Algorithm 4), each node checked against the instantiated
// dimensions above it on its way up.
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <algorithm>

#include "htree/htree.hpp"

namespace gpuolap::htree {
namespace {

// The node of `level` in [lo, hi) whose key is `key`, or hi.
std::uint32_t find_child(const Level& level, std::uint32_t lo, std::uint32_t hi, std::uint32_t key) {
  const auto begin = level.key.begin() + lo, end = level.key.begin() + hi;
  const auto it = std::lower_bound(begin, end, key);
  return it != end && *it == key ? static_cast<std::uint32_t>(it - level.key.begin()) : hi;
}

Aggregate popular_path(const HTree& tree, const std::uint32_t* q) {
  std::uint32_t lo = 0, hi = static_cast<std::uint32_t>(tree.levels[0].size());
  Aggregate found = tree.total;
  for (std::size_t i = 0; i < tree.levels.size() && q[i] != kAny; ++i) {
    const Level& l = tree.levels[i];
    const std::uint32_t node = find_child(l, lo, hi, q[i]);
    if (node == hi) return {};
    found = l.aggregate[node];
    lo = l.first_child[node];
    hi = lo + l.child_count[node];
  }
  return found;
}

Aggregate online_cubing(const HTree& tree, const std::uint32_t* q, std::uint64_t& visited) {
  std::size_t deepest = tree.levels.size(), shallowest = 0;
  while (q[deepest - 1] == kAny) --deepest;
  const std::size_t f = deepest - 1;
  while (q[shallowest] == kAny) ++shallowest;
  const Level& l = tree.levels[f];
  const auto h = std::lower_bound(l.header_key.begin(), l.header_key.end(), q[f]);
  if (h == l.header_key.end() || *h != q[f]) return {};
  const std::size_t t = h - l.header_key.begin();
  Aggregate a;
  const std::uint32_t first = l.header_first[t], count = l.header_count[t];
  visited += count;
  for (std::uint32_t s = first; s < first + count; ++s) {
    const std::uint32_t node = l.side_links[s];
    std::uint32_t up = l.parent[node];
    bool match = true;
    // Up to the shallowest instantiated level only: nothing above it is asked.
    for (std::size_t j = f; j-- > shallowest;) {
      if (q[j] != kAny && tree.levels[j].key[up] != q[j]) {
        match = false;
        break;
      }
      up = tree.levels[j].parent[up];
    }
    if (match) a.merge(l.aggregate[node]);
  }
  return a;
}

}  // namespace

Answers query_levels(const HTree& tree, const QueryBatch& batch, QueryStats* stats) {
  const std::size_t n = batch.size(), m = batch.dimensions;
  Answers out(n, batch.codes.get_allocator().resource());
  if (tree.leaf_count() == 0) {
    out.fill(Aggregate{});
    return out;
  }
  tbb::enumerable_thread_specific<QueryStats> local;
  tbb::parallel_for(std::size_t{0}, n, [&](std::size_t i) {
    const std::uint32_t* q = batch.query(i);
    QueryStats& s = local.local();
    if (on_popular_path(q, m)) {
      ++s.popular_path;
      out[i] = popular_path(tree, q);
    } else {
      ++s.online;
      out[i] = online_cubing(tree, q, s.side_link_nodes);
    }
  });
  if (stats) {
    *stats = {};
    for (const QueryStats& s : local) {
      stats->popular_path += s.popular_path;
      stats->online += s.online;
      stats->side_link_nodes += s.side_link_nodes;
    }
  }
  return out;
}

}  // namespace gpuolap::htree
