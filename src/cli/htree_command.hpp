#pragma once
// `gpuolap htree build|update|info|query`: H-tree partial cubes over a
// table's dimension columns, kept durable in a directory (README, "H-trees").
#include <string>
#include <vector>

namespace gpuolap::cli {

struct HTreeKnobOptions {
  std::string engine = "auto";
  std::string sort = "packed";
  std::string online = "block-per-query";
  unsigned block_threads = 128;
  std::string query_io = "mapped";
  std::string path_lookup = "leaf-jump";
  bool timing = false;
};

struct HTreeBuildOptions : HTreeKnobOptions {
  std::string db, table, measure, out;
  std::vector<std::string> order;
  bool force = false;
};
int run_htree_build(const HTreeBuildOptions& o);

struct HTreeUpdateOptions : HTreeKnobOptions {
  std::string tree, csv;
};
int run_htree_update(const HTreeUpdateOptions& o);

struct HTreeInfoOptions {
  std::string tree;
};
int run_htree_info(const HTreeInfoOptions& o);

struct HTreeQueryOptions : HTreeKnobOptions {
  std::string tree, queries;
};
int run_htree_query(const HTreeQueryOptions& o);

}  // namespace gpuolap::cli
