// The engines behind one interface: cpu-serial (the pointer tree),
// cpu-parallel (levels_cpu.cpp, query_cpu.cpp) and gpu (GpuHTree).
#include <tbb/enumerable_thread_specific.h>

#include "gpu/runtime/device_info.hpp"
#include "gpu/runtime/pinned_memory.hpp"
#include "gpuolap/error.hpp"
#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "htree/pointer_htree.hpp"

namespace gpuolap::htree {
Engine resolve_engine(Engine e) {
  if (e == Engine::Auto) return gpu_available() ? Engine::Gpu : Engine::CpuParallel;
  if (e == Engine::Gpu && !gpu_available())
    throw InputError("the gpu H-tree engine is not available here (" + gpu_status().problem + "): use cpu-parallel");
  return e;
}

void build(HTree& tree, const CodedTuples& tuples, Engine engine) {
  switch (resolve_engine(engine)) {
    case Engine::CpuSerial: {
      PointerHTree p(tree.dimensions.size());
      p.insert_all(tuples);
      p.to_levels(tree);
      return;
    }
    case Engine::CpuParallel:
      build_levels(tree, leaves_of_tuples(tuples));
      break;
    default: {
      GpuHTree g;
      g.build(cardinalities(tree), tuples);
      g.download(tree);
    }
  }
  tree.tuples = tuples.size();
}

void update(HTree& tree, const CodedTuples& batch, Engine engine) {
  switch (resolve_engine(engine)) {
    case Engine::CpuSerial: {
      PointerHTree p = PointerHTree::from_levels(tree);
      p.insert_all(batch);
      p.to_levels(tree);
      return;
    }
    case Engine::CpuParallel:
      build_levels(tree, merge_leaves(leaves_of_tree(tree), leaves_of_tuples(batch)));
      break;
    default: {
      GpuHTree g;
      g.upload(tree);
      g.update(cardinalities(tree), batch);
      g.download(tree);
    }
  }
  tree.tuples += batch.size();
}

std::pmr::memory_resource* query_memory(Engine engine) {
  return resolve_engine(engine) == Engine::Gpu ? gpu::pinned_memory() : std::pmr::get_default_resource();
}

Answers query(const HTree& tree, const QueryBatch& batch, Engine engine, QueryStats* stats) {
  if (batch.dimensions != tree.dimensions.size()) throw InputError("a query batch must name every dimension of the tree");
  switch (resolve_engine(engine)) {
    case Engine::CpuSerial: {
      const PointerHTree p = PointerHTree::from_levels(tree);
      Answers out(batch.size(), batch.codes.get_allocator().resource());
      QueryStats s;
      for (std::size_t i = 0; i < batch.size(); ++i) {
        const bool popular = on_popular_path(batch.query(i), batch.dimensions);
        ++(popular ? s.popular_path : s.online);
        out[i] = p.query(batch.query(i), &s.side_link_nodes);
      }
      if (stats) *stats = s;
      return out;
    }
    case Engine::CpuParallel:
      return query_levels(tree, batch, stats);
    default: {
      GpuHTree g;
      g.upload(tree);
      return g.query(batch, stats);
    }
  }
}

}  // namespace gpuolap::htree
