#include "htree/pointer_htree.hpp"

#include <algorithm>

#include "htree/header_table.hpp"

namespace gpuolap::htree {

PointerHTree::PointerHTree(std::size_t dimensions) : dimensions_(dimensions), header_(dimensions) {}

PointerHTree::Node* PointerHTree::child(Node* parent, std::size_t level, std::uint32_t key) {
  auto& kids = parent->children;
  auto it = std::lower_bound(kids.begin(), kids.end(), key, [](const Node* n, std::uint32_t k) { return n->key < k; });
  if (it != kids.end() && (*it)->key == key) return *it;
  nodes_.push_back(std::make_unique<Node>());
  Node* node = nodes_.back().get();
  node->key = key;
  node->parent = parent;
  kids.insert(it, node);
  auto& header = header_[level];
  if (header.size() <= key) header.resize(key + 1);
  HeaderEntry& e = header[key];
  (e.last ? e.last->side_link : e.first) = node;
  e.last = node;
  ++e.count;
  return node;
}

void PointerHTree::insert(const std::uint32_t* codes, const double* measure) {
  ++tuples_;
  Node* node = root_.get();
  if (measure) root_->aggregate.add(*measure);
  for (std::size_t i = 0; i < dimensions_; ++i) {
    node = child(node, i, codes[i]);
    if (measure) node->aggregate.add(*measure);
  }
}

void PointerHTree::insert_all(const CodedTuples& tuples) {
  std::vector<std::uint32_t> row(dimensions_);
  for (std::size_t r = 0; r < tuples.size(); ++r) {
    for (std::size_t d = 0; d < dimensions_; ++d) row[d] = tuples.codes[d][r];
    const bool null = !tuples.measure_null.empty() && tuples.measure_null[r];
    insert(row.data(), null ? nullptr : &tuples.measure[r]);
  }
}

Aggregate PointerHTree::query(const std::uint32_t* q, std::uint64_t* visited) const {
  if (nodes_.empty()) return {};
  if (on_popular_path(q, dimensions_)) {
    const Node* node = root_.get();
    for (std::size_t i = 0; i < dimensions_ && q[i] != kAny; ++i) {
      const auto& kids = node->children;
      auto it = std::lower_bound(kids.begin(), kids.end(), q[i], [](const Node* n, std::uint32_t k) { return n->key < k; });
      if (it == kids.end() || (*it)->key != q[i]) return {};
      node = *it;
    }
    return node->aggregate;
  }
  std::size_t f = dimensions_ - 1;
  while (q[f] == kAny) --f;
  if (q[f] >= header_[f].size()) return {};
  Aggregate a;
  for (const Node* node = header_[f][q[f]].first; node; node = node->side_link) {
    if (visited) ++*visited;
    const Node* up = node->parent;
    bool match = true;
    for (std::size_t j = f; j-- > 0; up = up->parent)
      if (q[j] != kAny && up->key != q[j]) {
        match = false;
        break;
      }
    if (match) a.merge(node->aggregate);
  }
  return a;
}

void PointerHTree::to_levels(HTree& tree) const {
  tree.levels.assign(dimensions_, {});
  tree.total = root_->aggregate;
  tree.tuples = tuples_;
  // Level by level, each node's children in key order: the SoA's path order.
  std::vector<const Node*> current{root_.get()}, next;
  for (std::size_t i = 0; i < dimensions_; ++i) {
    Level& l = tree.levels[i];
    next.clear();
    for (std::size_t p = 0; p < current.size(); ++p) {
      if (i) {
        tree.levels[i - 1].first_child[p] = static_cast<std::uint32_t>(next.size());
        tree.levels[i - 1].child_count[p] = static_cast<std::uint32_t>(current[p]->children.size());
      }
      for (const Node* c : current[p]->children) {
        next.push_back(c);
        l.key.push_back(c->key);
        l.parent.push_back(static_cast<std::uint32_t>(p));
        l.aggregate.push_back(c->aggregate);
      }
    }
    l.first_child.assign(l.size(), 0);
    l.child_count.assign(l.size(), 0);
    std::swap(current, next);
  }
  for (std::size_t i = 0; i < dimensions_; ++i)
    fill_header_table(tree.levels[i], static_cast<std::uint32_t>(tree.dictionaries[i].values.size()));
}

PointerHTree PointerHTree::from_levels(const HTree& tree) {
  PointerHTree t(tree.levels.size());
  t.tuples_ = tree.tuples;
  t.root_->aggregate = tree.total;
  std::vector<Node*> above{t.root_.get()}, here;
  for (std::size_t i = 0; i < tree.levels.size(); ++i) {
    const Level& l = tree.levels[i];
    here.assign(l.size(), nullptr);
    for (std::size_t k = 0; k < l.size(); ++k) {
      t.nodes_.push_back(std::make_unique<Node>());
      Node* node = t.nodes_.back().get();
      node->key = l.key[k];
      node->parent = above[l.parent[k]];
      node->aggregate = l.aggregate[k];
      node->parent->children.push_back(node);  // in key order already
      auto& header = t.header_[i];
      if (header.size() <= node->key) header.resize(node->key + 1);
      HeaderEntry& e = header[node->key];
      (e.last ? e.last->side_link : e.first) = node;
      e.last = node;
      ++e.count;
      here[k] = node;
    }
    std::swap(above, here);
  }
  return t;
}

}  // namespace gpuolap::htree
