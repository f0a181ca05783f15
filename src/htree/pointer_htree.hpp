// The sequential H-tree the paper compares with (cpu-serial, the oracle of
// the tree's shape): nodes with pointers to their parent, their children
// (kept sorted by key, found by binary search) and the next node of equal
// value (the side link), a header table per level holding each value's node
// count and its side-link list; tuples inserted one at a time, each adding
// its measure to every node on its path.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "htree/htree.hpp"

namespace gpuolap::htree {

class PointerHTree {
 public:
  explicit PointerHTree(std::size_t dimensions);
  // The tree of an SoA tree's levels (for a cpu-serial update or query).
  static PointerHTree from_levels(const HTree& tree);

  // Inserts a tuple (its codes in popular-path order); `measure` null: a
  // path without a measure.
  void insert(const std::uint32_t* codes, const double* measure);
  void insert_all(const CodedTuples& tuples);

  Aggregate query(const std::uint32_t* q, std::uint64_t* visited = nullptr) const;
  // Writes the levels, header tables and total into `tree` (whose
  // dictionaries give each level's cardinality).
  void to_levels(HTree& tree) const;
  std::size_t node_count() const { return nodes_.size(); }

 private:
  struct Node {
    std::uint32_t key = 0;
    Node* parent = nullptr;
    Node* side_link = nullptr;
    std::vector<Node*> children;  // sorted by key
    Aggregate aggregate;
  };
  struct HeaderEntry {
    std::uint32_t count = 0;
    Node* first = nullptr;
    Node* last = nullptr;
  };

  Node* child(Node* parent, std::size_t level, std::uint32_t key);

  std::size_t dimensions_;
  std::uint64_t tuples_ = 0;
  std::unique_ptr<Node> root_ = std::make_unique<Node>();  // on the heap: nodes point to it across moves
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::vector<HeaderEntry>> header_;  // [level][key]
};

}  // namespace gpuolap::htree
