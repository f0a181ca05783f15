// The H-tree's vocabulary: dictionaries, engine names, query kinds, and the
// check of a tree's invariants.
#include <fmt/format.h>

#include <charconv>
#include <cmath>

#include "gpuolap/error.hpp"
#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "table/date.hpp"

namespace gpuolap::htree {

std::uint32_t Dictionary::code(const std::string& canonical) {
  auto [it, added] = codes.try_emplace(canonical, static_cast<std::uint32_t>(values.size()));
  if (added) {
    if (values.size() >= kAbsent) throw InputError("an H-tree dimension holds at most 2^32 - 2 distinct values");
    values.push_back(canonical);
  }
  return it->second;
}

std::uint32_t Dictionary::find(const std::string& canonical) const {
  auto it = codes.find(canonical);
  return it == codes.end() ? kAbsent : it->second;
}

std::string Dictionary::canonical(std::string_view text) const {
  if (text.empty()) return {};
  switch (type) {
    case table::ColumnType::String:
      return std::string(text);
    case table::ColumnType::Int64: {
      std::int64_t v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size())
        throw InputError(fmt::format("'{}' is not an int64", table::clip_for_message(text)));
      return std::to_string(v);
    }
    case table::ColumnType::Double: {
      double v = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v))
        throw InputError(fmt::format("'{}' is not a finite double", table::clip_for_message(text)));
      return fmt::format("{}", v);
    }
    case table::ColumnType::Date: {
      std::int32_t days = 0;
      if (!table::parse_date(text, days))
        throw InputError(fmt::format("'{}' is not a date (YYYY-MM-DD)", table::clip_for_message(text)));
      return table::format_date(days);
    }
  }
  return std::string(text);
}

std::size_t HTree::node_count() const {
  std::size_t n = 0;
  for (const Level& l : levels) n += l.size();
  return n;
}

bool on_popular_path(const std::uint32_t* q, std::size_t dimensions) {
  std::size_t d = 0;
  while (d < dimensions && q[d] != kAny) ++d;
  while (d < dimensions && q[d] == kAny) ++d;
  return d == dimensions;
}

namespace {
constexpr std::string_view kEngineNames[] = {"cpu-serial", "cpu-parallel", "gpu", "auto"};
}

std::string_view engine_name(Engine e) { return kEngineNames[static_cast<int>(e)]; }

Engine parse_engine(std::string_view name) {
  for (int i = 0; i < 4; ++i)
    if (kEngineNames[i] == name) return static_cast<Engine>(i);
  throw InputError(fmt::format("unknown H-tree engine '{}' (cpu-serial, cpu-parallel, gpu or auto)",
                               table::clip_for_message(name)));
}

namespace {
constexpr std::string_view kSortNames[] = {"packed", "per-dimension"};
constexpr std::string_view kOnlineNames[] = {"block-per-query", "balanced"};
constexpr std::string_view kQueryIoNames[] = {"mapped", "copied"};
constexpr std::string_view kPathLookupNames[] = {"walk", "leaf-jump"};
}  // namespace

std::string_view sort_keys_name(SortKeys s) { return kSortNames[static_cast<int>(s)]; }
SortKeys parse_sort_keys(std::string_view name) {
  for (int i = 0; i < 2; ++i)
    if (kSortNames[i] == name) return static_cast<SortKeys>(i);
  throw InputError(fmt::format("unknown sort '{}' (packed or per-dimension)", table::clip_for_message(name)));
}
std::string_view online_kernel_name(OnlineKernel k) { return kOnlineNames[static_cast<int>(k)]; }
OnlineKernel parse_online_kernel(std::string_view name) {
  for (int i = 0; i < 2; ++i)
    if (kOnlineNames[i] == name) return static_cast<OnlineKernel>(i);
  throw InputError(
      fmt::format("unknown online-cubing kernel '{}' (block-per-query or balanced)", table::clip_for_message(name)));
}

std::string_view query_io_name(QueryIo io) { return kQueryIoNames[static_cast<int>(io)]; }
QueryIo parse_query_io(std::string_view name) {
  for (int i = 0; i < 2; ++i)
    if (kQueryIoNames[i] == name) return static_cast<QueryIo>(i);
  throw InputError(fmt::format("unknown query io '{}' (mapped or copied)", table::clip_for_message(name)));
}

std::string_view path_lookup_name(PathLookup p) { return kPathLookupNames[static_cast<int>(p)]; }
PathLookup parse_path_lookup(std::string_view name) {
  for (int i = 0; i < 2; ++i)
    if (kPathLookupNames[i] == name) return static_cast<PathLookup>(i);
  throw InputError(fmt::format("unknown path lookup '{}' (walk or leaf-jump)", table::clip_for_message(name)));
}

void check_tree(const HTree& tree) {
  const std::size_t m = tree.dimensions.size();
  if (m == 0 || m > 64) throw InputError("an H-tree has 1 to 64 dimensions");
  if (tree.dictionaries.size() != m || tree.levels.size() != m)
    throw InputError("an H-tree needs a dictionary and a level per dimension");
  for (std::size_t i = 0; i < m; ++i) {
    const Level& l = tree.levels[i];
    const std::size_t n = l.size();
    const std::size_t above = i ? tree.levels[i - 1].size() : 1;
    const std::size_t below = i + 1 < m ? tree.levels[i + 1].size() : 0;
    auto bad = [&](std::size_t node, const char* what) {
      return InputError(fmt::format("H-tree level {} ({}), node {}: {}", i + 1, tree.dimensions[i], node, what));
    };
    if (l.parent.size() != n || l.first_child.size() != n || l.child_count.size() != n ||
        l.aggregate.size() != n || l.side_links.size() != n || l.header_count.size() != l.header_key.size() ||
        l.header_first.size() != l.header_key.size())
      throw bad(0, "its arrays differ in length");
    if ((n == 0) != (tree.levels[0].size() == 0)) throw bad(0, "an empty level in a tree that is not empty");
    const std::size_t cardinality = tree.dictionaries[i].values.size();
    for (std::size_t k = 0; k < n; ++k) {
      if (l.key[k] >= cardinality) throw bad(k, "a key outside the dimension's dictionary");
      if (l.parent[k] >= above) throw bad(k, "a parent outside the level above");
      if (k && (l.parent[k] < l.parent[k - 1] || (l.parent[k] == l.parent[k - 1] && l.key[k] <= l.key[k - 1])))
        throw bad(k, "nodes out of path order");
      if (i + 1 < m ? (l.child_count[k] == 0 || l.first_child[k] + std::uint64_t{l.child_count[k]} > below)
                    : l.child_count[k] != 0)
        throw bad(k, "children outside the level below");
      if (i + 1 < m && (l.first_child[k] != (k ? l.first_child[k - 1] + l.child_count[k - 1] : 0) ||
                        tree.levels[i + 1].parent[l.first_child[k]] != k ||
                        tree.levels[i + 1].parent[l.first_child[k] + l.child_count[k] - 1] != k))
        throw bad(k, "children that are not its own");
      if (i + 1 < m && k + 1 == n && l.first_child[k] + std::uint64_t{l.child_count[k]} != below)
        throw bad(k, "nodes of the level below without a parent");
      if (l.side_links[k] >= n) throw bad(k, "a side link outside the level");
    }
    std::uint64_t listed = 0;
    for (std::size_t h = 0; h < l.header_key.size(); ++h) {
      if (l.header_first[h] != listed || (h && l.header_key[h] <= l.header_key[h - 1]))
        throw bad(h, "a header table out of order");
      for (std::uint32_t s = 0; s < l.header_count[h]; ++s)
        if (l.key[l.side_links[listed + s]] != l.header_key[h]) throw bad(listed + s, "a side link to another key");
      listed += l.header_count[h];
    }
    if (listed != n) throw bad(0, "a header table that does not list every node");
  }
}

}  // namespace gpuolap::htree
