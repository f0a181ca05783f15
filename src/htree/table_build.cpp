#include "htree/table_build.hpp"

#include <chrono>

#include "gpuolap/elapsed.hpp"
#include "htree/htree_io.hpp"

namespace gpuolap::htree {

namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

TableBuild build_from_table(const table::Table& t, const std::string& what, const std::vector<std::string>& order,
                            const std::string& measure, Engine engine, const GpuKnobs& knobs, bool gpu_timing) {
  TableBuild b;
  const auto coding = Clock::now();
  b.tree = tree_shell(t, order, measure);
  const CodedTuples tuples = code_rows(b.tree, t, what);
  b.coding_ms = ms_since(coding);
  b.engine = resolve_engine(engine);
  const auto building = Clock::now();
  if (b.engine == Engine::Gpu) {
    // Not htree::build: the gpu engine takes the knobs and reports its stages.
    GpuHTree g(-1, knobs);
    g.set_timing(gpu_timing);
    g.build(cardinalities(b.tree), tuples);
    g.download(b.tree);
    b.tree.tuples = tuples.size();
    if (gpu_timing) b.gpu_stages = g.stages();
  } else {
    build(b.tree, tuples, b.engine);
  }
  b.build_ms = ms_since(building);
  return b;
}

}  // namespace gpuolap::htree
