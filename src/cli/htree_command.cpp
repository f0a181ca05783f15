#include "htree_command.hpp"

#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "gpuolap/elapsed.hpp"
#include "gpuolap/error.hpp"
#include "htree/durable_htree.hpp"
#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "htree/htree_io.hpp"
#include "htree/table_build.hpp"
#include "table/database.hpp"

namespace gpuolap::cli {
namespace {

using Clock = std::chrono::steady_clock;

htree::GpuKnobs knobs_of(const HTreeKnobOptions& o) {
  htree::GpuKnobs k;
  k.sort = htree::parse_sort_keys(o.sort);
  k.online = htree::parse_online_kernel(o.online);
  if (o.block_threads != 32 && o.block_threads != 64 && o.block_threads != 128 && o.block_threads != 256)
    throw InputError(fmt::format("--block-threads must be 32, 64, 128 or 256, not {}", o.block_threads));
  k.block_threads = o.block_threads;
  k.query_io = htree::parse_query_io(o.query_io);
  k.path_lookup = htree::parse_path_lookup(o.path_lookup);
  return k;
}

void print_stages(const std::vector<std::pair<std::string, double>>& stages) {
  for (const auto& [name, ms] : stages) std::cerr << fmt::format("  {:<7} {:9.3f} ms\n", name, ms);
}

}  // namespace

int run_htree_build(const HTreeBuildOptions& o) {
  const auto start = Clock::now();
  const table::Database db(o.db);
  const auto t = db.load(o.table);
  const htree::TableBuild b = htree::build_from_table(*t, "table " + o.table, o.order, o.measure,
                                                      htree::parse_engine(o.engine), knobs_of(o), o.timing);
  if (o.timing) print_stages(b.gpu_stages);
  htree::DurableHTree::create(o.out, b.tree, o.force);
  const htree::HTree& tree = b.tree;
  std::cerr << fmt::format(
      "htree build: {} tuples of {} over {} ({} levels), {} leaves, {} nodes; {} in {:.1f} ms (coding {:.1f} ms, "
      "total {:.1f} ms) -> {}\n",
      tree.tuples, o.table, fmt::join(tree.dimensions, ","), tree.levels.size(), tree.leaf_count(), tree.node_count(),
      htree::engine_name(b.engine), b.build_ms, b.coding_ms, ms_since(start), o.out);
  return 0;
}

int run_htree_update(const HTreeUpdateOptions& o) {
  const auto start = Clock::now();
  htree::DurableHTree t(o.tree, htree::parse_engine(o.engine), knobs_of(o));
  t.set_gpu_timing(o.timing);
  const double open_ms = ms_since(start);
  const auto batch = htree::read_batch_table(t.meta(), o.csv);
  const auto appended = Clock::now();
  t.append(batch, o.csv);
  std::cerr << fmt::format("htree update: {} tuples appended (durable) in {:.1f} ms; the tree holds {} tuples, {} leaves, "
                           "{} nodes ({}, opened in {:.1f} ms)\n",
                           batch.row_count(), ms_since(appended), t.meta().tuples, t.leaf_count(), t.node_count(),
                           htree::engine_name(t.engine()), open_ms);
  if (o.timing) print_stages(t.gpu_stages());
  return 0;
}

int run_htree_info(const HTreeInfoOptions& o) {
  htree::DurableHTree t(o.tree, htree::Engine::CpuParallel);
  const htree::HTree& h = t.meta();
  std::cout << fmt::format("H-tree {}: measure {}, {} tuples, {} leaves, {} nodes\n", o.tree, h.measure, h.tuples,
                           h.leaf_count(), h.node_count());
  std::cout << fmt::format("total: count {}, sum {}\n", h.total.count, h.total.sum);
  for (std::size_t i = 0; i < h.dimensions.size(); ++i)
    std::cout << fmt::format("level {:2} {:<20} {:<6} {:>10} values {:>12} nodes\n", i + 1, h.dimensions[i],
                             table::type_name(h.dictionaries[i].type), h.dictionaries[i].values.size(),
                             h.levels[i].size());
  const htree::OpenReport& r = t.report();
  std::cout << fmt::format("snapshot {} bytes; log {} bytes, {} batches ({} tuples) replayed{}\n", r.snapshot_bytes,
                           r.log_bytes, r.replayed_batches, r.replayed_tuples,
                           r.log_problem.empty() ? "" : "; " + r.log_problem);
  return 0;
}

int run_htree_query(const HTreeQueryOptions& o) {
  const auto start = Clock::now();
  htree::DurableHTree t(o.tree, htree::parse_engine(o.engine), knobs_of(o));
  t.set_gpu_timing(o.timing);
  const double open_ms = ms_since(start);
  const auto read = Clock::now();
  const htree::QueryFile q = htree::read_query_csv(t.meta(), o.queries, t.query_memory());
  const double read_ms = ms_since(read);
  const auto ran = Clock::now();
  htree::QueryStats stats;
  const auto answers = t.query(q.batch, &stats);
  const double query_ms = ms_since(ran);
  const auto written = Clock::now();
  htree::write_answers(std::cout, q, answers);
  std::cout.flush();
  const double write_ms = ms_since(written);
  if (o.timing) {
    std::cerr << fmt::format("htree query: {} queries ({} on the popular path, {} online over {} side-link nodes) in "
                             "{:.3f} ms on {}; reading them {:.3f} ms, writing the answers {:.3f} ms (tree opened in "
                             "{:.1f} ms)\n",
                             q.batch.size(), stats.popular_path, stats.online, stats.side_link_nodes, query_ms,
                             htree::engine_name(t.engine()), read_ms, write_ms, open_ms);
    print_stages(t.gpu_stages());
  }
  return 0;
}

}  // namespace gpuolap::cli
