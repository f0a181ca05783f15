// The H-tree paper's figures 1-6 and table 2, re-measured with its shapes,
// then scaled: every GPU time beside the sequential pointer tree
// (cpu-serial, one core) and the multi-threaded SoA tree (cpu-parallel, all
// cores), all in one run on one machine, with the floors of the GPU:
//   build/update floor  the bytes that must move (the tuples read, the tree's
//                       arrays written: 52 bytes a node) over the streaming
//                       bandwidth measured here;
//   online cubing       side-link node visits per second beside the GPU's
//                       measured rate of dependent random 4-byte reads (the
//                       walk up from a node reads a key and a parent a level);
//   popular-path batch  answered in place: its bytes moved across the bus by
//                       a kernel of the lookup's shape that does nothing
//                       else, with the launch and the wait (limits.cu).
// Figures (--figures, comma-separated; default all):
//   fig1   build: D15C160 T100K-1M; D6-18 C160 T400K; D15 C20-320 T400K
//   fig2   update of a D15C40T300K tree with 50K-300K tuples; D6-18 and
//          C20-320 with 300K on T300K
//   fig3-6 10K on-popular-path and 10K online-cubing queries: D6-18 (C40
//          T600K), C20-320 (D15 T600K)
//   table2 the GPU's stages for D15C40T600K build, D15C40T300K update,
//          10K popular-path and 10K online queries
//   steady (only when named) a D15C40T10M tree on the GPU fed six 100K
//          batches in turn: each update's time and stages, as the server sees
//   scale  D15C40T10M and D6C40T100M: build, a 100K update, 10K queries of
//          each kind (cpu-serial left out: a tuple at a time on one core,
//          these shapes would take minutes a run)
//   popular (only when named) 10K popular-path queries on D15C40T600K and
//          D15C40T10M, the gpu's ways of taking a batch side by side: made in
//          its pinned query memory (gpu: read and answered in place), a plain
//          vector (gpu-pageable: copied through the tree's pinned buffers),
//          copied to device memory around the kernels (gpu-copied); and
//          in place, walking every level (gpu-walk: Algorithm 3 as the paper
//          has it) rather than jumping to a single leaf (gpu)
//   online (only when named) 10K online-cubing queries on D15C40T600K
//   popular-sweep (only when named) figures 3 and 4's popular-path batches
//          and D6C40T100M's (the scale figure's), without the online ones
// Times are medians of --reps runs after a warm-up (11 at least for
// popular-path batches, which take well under a millisecond); the GPU's
// include the transfers the paper counted (tuples and queries up, answers
// down).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "generate/table_generators.hpp"
#include "limits.hpp"
#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "htree/htree_io.hpp"
#include "htree/pointer_htree.hpp"

namespace {

using namespace gpuolap;
using namespace gpuolap::htree;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int reps = 3;

double median_ms(const std::function<void()>& f, int runs = -1) {
  if (runs < 0) runs = reps;
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto s = Clock::now();
    f();
    t.push_back(ms_since(s));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Data {
  HTree shell;
  CodedTuples tuples;
  std::vector<std::uint32_t> cards;
};

Data make_data(const std::string& shape, std::uint64_t seed) {
  TableGeneratorOptions o;
  o.shape = shape;
  o.theta = 0;
  o.seed = seed;
  const auto tables = generate_htree(o);
  Data d;
  std::vector<std::string> order;
  for (const auto& c : tables[0].columns)
    if (c.name != "m") order.push_back(c.name);
  d.shell = tree_shell(tables[0], order, "m");
  d.tuples = code_rows(d.shell, tables[0], shape);
  d.cards = cardinalities(d.shell);
  return d;
}

// The paper's query mixes: values of a random tuple, a random number of
// dimensions instantiated — a prefix (popular path) or a set that is not.
QueryBatch make_queries(const CodedTuples& t, std::size_t n, bool popular, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const std::size_t m = t.codes.size();
  QueryBatch q;
  q.dimensions = m;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = rng() % t.size();
    std::vector<std::uint32_t> codes(m, kAny);
    if (popular) {
      const std::size_t k = 1 + rng() % m;
      for (std::size_t d = 0; d < k; ++d) codes[d] = t.codes[d][r];
    } else {
      do {
        std::fill(codes.begin(), codes.end(), kAny);
        const std::size_t k = 1 + rng() % std::min<std::size_t>(m, 4);
        for (std::size_t j = 0; j < k; ++j) {
          const std::size_t d = rng() % m;
          codes[d] = t.codes[d][r];
        }
      } while (on_popular_path(codes.data(), m));
    }
    q.codes.insert(q.codes.end(), codes.begin(), codes.end());
  }
  return q;
}

std::ofstream csv;
Limits limits;

void row(const std::string& figure, const std::string& shape, const std::string& op, const std::string& engine, double ms,
         double floor_ms, const std::string& extra = "") {
  csv << fmt::format("{},{},{},{},{:.4f},{:.4f},{}\n", figure, shape, op, engine, ms, floor_ms, extra);
  csv.flush();
  std::cout << fmt::format("{:<7} {:<14} {:<8} {:<13} {:>11.3f} ms  floor {:>8.3f} ms  {}\n", figure, shape, op, engine,
                           ms, floor_ms, extra);
}

double tree_floor_ms(std::size_t tuples, std::size_t m, std::size_t nodes) {
  const double bytes = tuples * (4.0 * m + 8) + nodes * 52.0;
  return bytes / (limits.bandwidth_gbs * 1e6);
}

std::string stage_text(const std::vector<std::pair<std::string, double>>& s) {
  std::string out;
  for (const auto& [name, ms] : s) out += fmt::format("{}{}={:.3f}", out.empty() ? "" : ";", name, ms);
  return out;
}

void bench_build(const std::string& figure, const std::string& shape, bool serial) {
  const Data d = make_data(shape, 7);
  HTree t = d.shell;
  if (serial) {
    const double ms = median_ms([&] {
      PointerHTree p(d.cards.size());
      p.insert_all(d.tuples);
    }, 1);
    row(figure, shape, "build", "cpu-serial", ms, 0);
  }
  const double par = median_ms([&] { build_levels(t, leaves_of_tuples(d.tuples)); });
  row(figure, shape, "build", "cpu-parallel", par, 0);
  GpuHTree g;
  g.set_timing(true);
  g.build(d.cards, d.tuples);  // warm-up
  const double gpu = median_ms([&] { g.build(d.cards, d.tuples); });
  row(figure, shape, "build", "gpu", gpu, tree_floor_ms(d.tuples.size(), d.cards.size(), g.node_count()),
      fmt::format("nodes={};{}", g.node_count(), stage_text(g.stages())));
}

void bench_update(const std::string& figure, const std::string& base_shape, const std::string& batch_shape, bool serial) {
  const Data base = make_data(base_shape, 7);
  Data batch = make_data(batch_shape, 8);
  const std::string label = base_shape + "+" + batch_shape.substr(batch_shape.find('T') + 1);
  HTree host = base.shell;
  build_levels(host, leaves_of_tuples(base.tuples));
  if (serial) {
    PointerHTree p = PointerHTree::from_levels(host);
    const auto s = Clock::now();
    p.insert_all(batch.tuples);
    row(figure, label, "update", "cpu-serial", ms_since(s), 0);
  }
  const double par = median_ms([&] {
    HTree t = host;
    build_levels(t, merge_leaves(leaves_of_tree(t), leaves_of_tuples(batch.tuples)));
  });
  row(figure, label, "update", "cpu-parallel", par, 0);
  GpuHTree g;
  g.set_timing(true);
  std::vector<double> times;
  std::vector<std::pair<std::string, double>> stages;
  for (int i = 0; i <= reps; ++i) {
    g.build(base.cards, base.tuples);
    const auto s = Clock::now();
    g.update(base.cards, batch.tuples);
    if (i) times.push_back(ms_since(s));
    stages = g.stages();
  }
  std::sort(times.begin(), times.end());
  row(figure, label, "update", "gpu", times[times.size() / 2],
      tree_floor_ms(batch.tuples.size(), base.cards.size(), g.node_count()),
      fmt::format("nodes={};{}", g.node_count(), stage_text(stages)));
}

void bench_queries(const std::string& figure, const std::string& shape, bool popular, bool serial, std::size_t n = 10000) {
  const Data d = make_data(shape, 7);
  HTree host = d.shell;
  build_levels(host, leaves_of_tuples(d.tuples));
  const QueryBatch q = make_queries(d.tuples, n, popular, 99);
  const std::string op = popular ? "popular" : "online";
  QueryStats st;
  if (serial) {
    const PointerHTree p = PointerHTree::from_levels(host);
    std::uint64_t visited = 0;
    const double ms = median_ms([&] {
      for (std::size_t i = 0; i < q.size(); ++i) p.query(q.query(i), &visited);
    }, 1);
    row(figure, shape, op, "cpu-serial", ms, 0);
  }
  // A 10K popular-path batch takes well under a millisecond: more runs.
  const int runs = popular ? std::max(reps, 11) : reps;
  const double par = median_ms([&] { query_levels(host, q, &st); }, runs);
  row(figure, shape, op, "cpu-parallel", par, 0);
  // The batch as the server and `htree query` make it, in the gpu engine's
  // query memory (pinned: read and answered in place), and as a plain
  // vector (copied through the tree's pinned buffers).
  const QueryBatch pinned{q.dimensions, std::pmr::vector<std::uint32_t>(q.codes.begin(), q.codes.end(),
                                                                        query_memory(Engine::Gpu))};
  struct Variant {
    std::string engine;
    OnlineKernel online;
    QueryIo io;
    const QueryBatch* batch;
    PathLookup path = PathLookup::LeafJump;
  };
  std::vector<Variant> variants;
  if (popular) {
    variants = {{"gpu", OnlineKernel::BlockPerQuery, QueryIo::Mapped, &pinned},
                {"gpu-walk", OnlineKernel::BlockPerQuery, QueryIo::Mapped, &pinned, PathLookup::Walk},
                {"gpu-pageable", OnlineKernel::BlockPerQuery, QueryIo::Mapped, &q},
                {"gpu-copied", OnlineKernel::BlockPerQuery, QueryIo::Copied, &pinned}};
  } else {
    variants = {{"gpu-block-per-query", OnlineKernel::BlockPerQuery, QueryIo::Mapped, &pinned},
                {"gpu-balanced", OnlineKernel::Balanced, QueryIo::Mapped, &pinned}};
  }
  for (const Variant& v : variants) {
    GpuKnobs knobs;
    knobs.online = v.online;
    knobs.query_io = v.io;
    knobs.path_lookup = v.path;
    knobs.block_threads = v.online == OnlineKernel::BlockPerQuery ? 32 : 128;  // 32: the paper's best for online cubing
    GpuHTree g(-1, knobs);
    g.upload(host);
    g.query(*v.batch, &st);
    // Timed without events (they add work to a 50 µs call); the stages once after.
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) {
      const auto t0 = Clock::now();
      g.query(*v.batch, &st);
      times.push_back(ms_since(t0));
    }
    std::sort(times.begin(), times.end());
    const double ms = times[times.size() / 2];
    g.set_timing(true);
    g.query(*v.batch, &st);
    const double visits_per_s = st.side_link_nodes / (ms * 1e-3);
    // A popular-path batch answered in place has the floor of its bytes
    // moved across the bus (and the launch and wait); beside it, what the
    // same would take with 2-byte codes.
    const bool floored = popular && v.io == QueryIo::Mapped && v.batch == &pinned && v.path == PathLookup::LeafJump;
    const std::size_t answer_bytes = sizeof(Aggregate);
    const double floor_ms = floored ? in_place_floor_ms(q.size(), q.dimensions * 4, answer_bytes) : 0;
    const std::string floors =
        floored ? fmt::format("floor_2byte_codes_ms={:.4f};empty_launch_ms={:.4f};flagged_launch_ms={:.4f};",
                              in_place_floor_ms(q.size(), q.dimensions * 2, answer_bytes), empty_launch_ms(),
                              flagged_launch_ms())
                : "";
    row(figure, shape, op, v.engine, ms, floor_ms,
        fmt::format("visits={};visits_per_s={:.3g};random_reads_per_s={:.3g};best_ms={:.4f};{}{}", st.side_link_nodes,
                    visits_per_s, limits.random_reads_gs * 1e9, times.front(), floors, stage_text(g.stages())));
  }
}

// The server's case: one tree kept on the GPU, fed batch after batch; each
// update's time and stages in the steady state (buffers grown already).
void bench_steady_updates(const std::string& base_shape, int batches) {
  const Data base = make_data(base_shape, 7);
  GpuHTree g;
  g.set_timing(true);
  g.build(base.cards, base.tuples);
  for (int b = 0; b < batches; ++b) {
    Data batch = make_data("D15C40T100K", 20 + b);
    const auto s = Clock::now();
    g.update(base.cards, batch.tuples);
    row("steady", base_shape + "+100K#" + std::to_string(b + 1), "update", "gpu", ms_since(s),
        tree_floor_ms(batch.tuples.size(), base.cards.size(), g.node_count()),
        fmt::format("nodes={};{}", g.node_count(), stage_text(g.stages())));
  }
}

bool wants(const std::set<std::string>& f, const std::string& name) { return f.empty() || f.count(name); }

}  // namespace

int main(int argc, char** argv) {
  std::string out = "htree.csv";
  std::set<std::string> figures;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--out" && i + 1 < argc) out = argv[++i];
    else if (a == "--reps" && i + 1 < argc) reps = std::stoi(argv[++i]);
    else if (a == "--figures" && i + 1 < argc) {
      std::stringstream s(argv[++i]);
      for (std::string f; std::getline(s, f, ',');) figures.insert(f);
    } else {
      std::cerr << "usage: gpuolap_htree_bench [--out F.csv] [--reps N] [--figures fig1,fig2,fig3-6,table2,scale,steady,popular,online,popular-sweep]\n";
      return 2;
    }
  }
  limits = measure_limits();
  const std::string device = GpuHTree().device_name();
  std::cout << fmt::format("{}: streaming read {:.0f} GB/s, dependent random 4-byte reads {:.3g}/s\n", device,
                           limits.bandwidth_gbs, limits.random_reads_gs * 1e9);
  csv.open(out);
  csv << "figure,shape,op,engine,ms,floor_ms,extra\n";
  csv << fmt::format("limits,{},bandwidth,gpu,0,0,bandwidth_gbs={:.1f};random_reads_per_s={:.4g}\n", device,
                     limits.bandwidth_gbs, limits.random_reads_gs * 1e9);
  if (wants(figures, "fig1")) {
    for (const char* t : {"100K", "200K", "400K", "600K", "800K", "1M"}) bench_build("fig1a", std::string("D15C160T") + t, true);
    for (int d : {6, 9, 12, 15, 18}) bench_build("fig1b", fmt::format("D{}C160T400K", d), true);
    for (int c : {20, 40, 80, 160, 320}) bench_build("fig1c", fmt::format("D15C{}T400K", c), true);
  }
  if (wants(figures, "fig2")) {
    for (const char* t : {"50K", "100K", "150K", "200K", "250K", "300K"})
      bench_update("fig2a", "D15C40T300K", std::string("D15C40T") + t, true);
    for (int d : {6, 9, 12, 15, 18}) bench_update("fig2b", fmt::format("D{}C40T300K", d), fmt::format("D{}C40T300K", d), true);
    for (int c : {20, 40, 80, 160, 320}) bench_update("fig2c", fmt::format("D15C{}T300K", c), fmt::format("D15C{}T300K", c), true);
  }
  if (wants(figures, "fig3-6")) {
    for (int d : {6, 9, 12, 15, 18}) {
      bench_queries("fig3", fmt::format("D{}C40T600K", d), true, true);
      bench_queries("fig5", fmt::format("D{}C40T600K", d), false, true);
    }
    for (int c : {20, 40, 80, 160, 320}) {
      bench_queries("fig4", fmt::format("D15C{}T600K", c), true, true);
      bench_queries("fig6", fmt::format("D15C{}T600K", c), false, true);
    }
  }
  if (wants(figures, "table2")) {
    bench_build("table2", "D15C40T600K", true);
    bench_update("table2", "D15C40T300K", "D15C40T300K", true);
    bench_queries("table2", "D15C40T600K", true, true);
    bench_queries("table2", "D15C40T600K", false, true);
  }
  if (figures.count("steady")) bench_steady_updates("D15C40T10M", 6);
  // Table 2's query batches and the server's tree, without cpu-serial.
  if (figures.count("popular"))
    for (const char* shape : {"D15C40T600K", "D15C40T10M"}) bench_queries("popular", shape, true, false);
  if (figures.count("online")) bench_queries("online", "D15C40T600K", false, false);
  // Figures 3 and 4's popular-path batches and the largest scaled shape's,
  // without their online halves (minutes of cpu-serial).
  if (figures.count("popular-sweep")) {
    for (int d : {6, 9, 12, 15, 18}) bench_queries("fig3", fmt::format("D{}C40T600K", d), true, true);
    for (int c : {20, 40, 80, 160, 320}) bench_queries("fig4", fmt::format("D15C{}T600K", c), true, true);
    bench_queries("scale", "D6C40T100M", true, false);
  }
  if (wants(figures, "scale")) {
    for (const char* shape : {"D15C40T10M", "D6C40T100M"}) {
      bench_build("scale", shape, false);
      bench_update("scale", shape, std::string(shape).substr(0, std::string(shape).find('T')) + "T100K", false);
      bench_queries("scale", shape, true, false);
      bench_queries("scale", shape, false, false);
    }
  }
  return 0;
}
