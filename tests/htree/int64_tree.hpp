// A small H-tree over int64 columns for the tests and harnesses that need a
// stored tree: t(a, b, m) with a tree over (a, b) measuring m. Plain C++ (no
// GoogleTest), so fuzz harnesses include it too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "htree/durable_htree.hpp"
#include "htree/htree_io.hpp"
#include "table/table.hpp"

namespace gpuolap::htree::testing {

// Writes the durable tree of t(a, b, m) to `dir` (replacing one there).
inline void create_ab_tree(const std::filesystem::path& dir, std::vector<std::int64_t> a, std::vector<std::int64_t> b,
                           std::vector<std::int64_t> m) {
  table::Table t;
  t.name = "t";
  table::Column ca, cb, cm;
  ca.name = "a";
  cb.name = "b";
  cm.name = "m";
  ca.int64s = std::move(a);
  cb.int64s = std::move(b);
  cm.int64s = std::move(m);
  t.columns = {ca, cb, cm};
  HTree tree = tree_shell(t, {"a", "b"}, "m");
  build(tree, code_rows(tree, t, "t"), Engine::CpuParallel);
  DurableHTree::create(dir, tree, true);
}

}  // namespace gpuolap::htree::testing
