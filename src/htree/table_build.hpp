#pragma once
// An H-tree built from a table of a database: the one path of `gpuolap htree
// build` and Python's HTree.build — the tree's shell (dimensions, measure,
// dictionaries), the table's rows coded, and the tree built on an engine.
#include <string>
#include <utility>
#include <vector>

#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "table/table.hpp"

namespace gpuolap::htree {

struct TableBuild {
  HTree tree;
  Engine engine = Engine::CpuParallel;  // the engine that built it (auto resolved)
  double coding_ms = 0;                 // the shell and the rows coded
  double build_ms = 0;                  // the build on `engine`
  // The gpu build's stages and their times, when asked for (gpu only).
  std::vector<std::pair<std::string, double>> gpu_stages;
};

// A tree over the rows of `t` (called `what` in errors): dimensions in
// `order`, or by ascending distinct count when empty; `measure` an int64 or
// double column. `knobs` and `gpu_timing` apply to the gpu engine only.
TableBuild build_from_table(const table::Table& t, const std::string& what, const std::vector<std::string>& order,
                            const std::string& measure, Engine engine, const GpuKnobs& knobs = {},
                            bool gpu_timing = false);

}  // namespace gpuolap::htree
