// Benchmark of the memory-contention paper's operators on the GPU: its
// figures 3-9 re-measured on Zipf columns, the variants side by side, and
// the floor of each point (the fact columns read once, at this GPU's
// streaming-read bandwidth measured in the same run).
//
//   gpuolap_contention_bench --out FILE.csv [--figures variants,copies,cardinality,window,budget]
//                            [--log2-rows 28] [--sweep-log2-rows 26] [--reps 5] [--thetas 0,0.5,1,1.5,2]
//                            [--dump DIR]
//
// variants     Q2 (COUNT(*), SUM(x) of a double, GROUP BY a) and Q2 COUNT(*)
//              alone, and Q1 (SUM(d1.b) of a 4-byte b over f JOIN d1), every
//              variant, C = 1,024 and 8,192, at 2^log2-rows rows; the
//              placements (write: budget 4 / 1.5, window 16; read: budget
//              4 / 2) made on the host's threads, their time and statistics.
// copies       fig. 3: copies a value vs rows (2^20..2^log2-rows, prefixes
//              of one column) and theta, read and write, budget 12, window 16
// cardinality  fig. 4: copies a value and replicated values vs C (64..8,192)
// window       fig. 6/9: Q2 with the placement vs window 0/4/16/64, its
//              optimization time, at 2^sweep-log2-rows rows
// budget       fig. 8: Q2 with the placement vs budget 1..12, same rows
// values       fig. 7: Q2 with a placement that avoids value conflicts only
//              (banks ignored) beside the full one, budget 12, window 16
// threads      Q2 SUM(double) with one copy, naive replicas and the
//              placement at 256, 512 and 1,024 threads a block (the state's
//              shared memory decides how many blocks an SM holds), theta 0
//              and 2, C = 1,024 and 8,192, at 2^log2-rows rows; the other
//              figures let the operator pick (auto_block_threads)
//
// A point's time is the CUDA-event time of the clear and the kernel (the
// columns resident, the groups left on the device but for a C-entry
// download), the minimum and median of --reps runs after a warm-up run.
// --dump writes f.a (u32), f.x (f64) and d1.b (i32) of the variants'
// first column of each theta for the DuckDB peer (peers.py).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_info.hpp"
#include "groupby/shared_memory/shared_aggregation.hpp"

using namespace gpuolap;
using namespace gpuolap::groupby;

namespace {

struct Options {
  std::string out = "contention-bench.csv";
  std::vector<std::string> figures{"variants", "copies", "cardinality", "window", "budget"};
  int log2_rows = 28;
  int sweep_log2_rows = 26;
  int reps = 5;
  std::vector<double> thetas{0, 0.5, 1, 1.5, 2};
  std::string dump;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) out.push_back(x);
  return out;
}

bool wants(const Options& o, const char* figure) {
  return std::find(o.figures.begin(), o.figures.end(), figure) != o.figures.end();
}

// Zipf(theta) codes over 0..C-1 (value k with probability proportional to
// 1/(k+1)^theta), counter-based so that threads draw independently.
std::vector<std::uint32_t> zipf(std::size_t rows, std::uint32_t c, double theta, std::uint64_t seed) {
  std::vector<double> cdf(c);
  double sum = 0;
  for (std::uint32_t k = 0; k < c; ++k) cdf[k] = sum += std::pow(k + 1.0, -theta);
  for (double& p : cdf) p /= sum;
  std::vector<std::uint32_t> codes(rows);
  constexpr std::size_t kBlock = 1 << 16;
  tbb::parallel_for(std::size_t{0}, (rows + kBlock - 1) / kBlock, [&](std::size_t b) {
    std::mt19937_64 rng(seed * 1000003 + b);
    std::uniform_real_distribution<double> u(0, 1);
    for (std::size_t r = b * kBlock; r < std::min(rows, (b + 1) * kBlock); ++r)
      codes[r] = static_cast<std::uint32_t>(
          std::min<std::size_t>(c - 1, std::upper_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
  });
  return codes;
}

std::vector<double> doubles(std::size_t rows, std::uint64_t seed) {
  std::vector<double> v(rows);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows, 1 << 16), [&](const auto& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      std::uint64_t h = (i + seed) * 0x9e3779b97f4a7c15ull;
      h ^= h >> 29;
      v[i] = static_cast<double>(h % 100000) / 100;
    }
  });
  return v;
}

template <typename T>
const T* upload(DeviceBuffer<T>& buffer, const std::vector<T>& host) {
  buffer.upload(host);
  GPUOLAP_CUDA_CHECK(cudaDeviceSynchronize());
  return buffer.data();
}

struct Timing {
  double min = 0, median = 0;
};

template <typename F>
Timing time_runs(int reps, F&& run) {
  run();  // warm-up
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    const auto stages = run();
    double t = 0;
    for (const auto& [name, v] : stages)
      if (name != "download" && name != "upload") t += v;
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  return {ms.front(), ms[ms.size() / 2]};
}

class Csv {
 public:
  explicit Csv(const std::string& path) : out_(path) {
    out_ << "figure,query,theta,cardinality,rows,variant,budget,window,goal,slots,copies_per_value,max_copies,"
            "replicated_values,opt_s,before_banks,before_read_rounds,before_write_rounds,after_banks,"
            "after_read_rounds,after_write_rounds,after_conflicted_chunks,ms_min,ms_median,floor_ms,plan\n";
  }
  void row(const std::string& figure, const std::string& query, double theta, std::uint32_t c, std::size_t rows,
           const std::string& variant, const Placement* p, Timing t, double floor_ms, const std::string& plan) {
    std::ostringstream line;
    line.precision(6);
    line << figure << ',' << query << ',' << theta << ',' << c << ',' << rows << ',' << variant << ',';
    if (p) {
      const PlacementStats& s = p->stats;
      line << p->budget << ',' << p->window << ',' << placement_goal_name(p->goal) << ',' << s.slots << ','
           << s.copies_per_value << ',' << s.max_copies << ',' << s.replicated_values << ',' << s.seconds << ','
           << s.before.distinct_banks << ',' << s.before.read_rounds << ',' << s.before.write_rounds << ','
           << s.after.distinct_banks << ',' << s.after.read_rounds << ',' << s.after.write_rounds << ','
           << (p->goal == PlacementGoal::Write ? s.after.write_conflicted_chunks : s.after.read_conflicted_chunks);
    } else {
      line << ",,,,,,,,,,,,,,";
    }
    line << ',' << t.min << ',' << t.median << ',' << floor_ms << ",\"" << plan << "\"\n";
    out_ << line.str();
    out_.flush();
    std::fputs(line.str().c_str(), stdout);
    std::fflush(stdout);
  }

 private:
  std::ofstream out_;
};

struct Bench {
  Options o;
  double bandwidth;
  Csv csv;
  LaunchShape shape{0, std::size_t{1} << 18, 8};  // threads 0: the operator picks them
  DeviceBuffer<std::uint32_t> d_codes, d_placed;
  DeviceBuffer<double> d_x;

  double floor_ms(std::size_t bytes) const { return bytes / bandwidth * 1e3; }

  Placement place(const std::vector<std::uint32_t>& codes, std::uint32_t c, PlacementGoal goal, double budget,
                  int window, int word_bytes, bool banks = true) {
    PlacementOptions po;
    po.banks = banks;
    po.goal = goal;
    po.shape = shape;
    po.shape.block_threads = 512;  // recorded only: threads do not change the chunks
    po.shape.word_bytes = word_bytes;
    po.budget = budget;
    po.window = window;
    return optimize_placement(codes, c, po);
  }

  Timing q2(const std::vector<std::uint32_t>& codes, std::uint32_t c, const double* x, SharedVariant v,
            const Placement* p, std::string& plan) {
    GroupedInput in;
    in.rows = codes.size();
    in.groups = c;
    in.codes = v == SharedVariant::Placement ? d_placed.data() : d_codes.data();
    in.values = x;
    in.placement = p;
    SharedGpuOptions go;
    go.variant = v;
    go.shape = shape;
    go.input_on_device = true;
    go.timing = true;
    return time_runs(o.reps, [&] {
      GroupedResult r = grouped_gpu(in, go);
      plan = r.plan;
      return r.stage_ms;
    });
  }

  Timing q1(std::size_t rows, const std::vector<std::int32_t>& b, SharedVariant v, const Placement* p,
            std::string& plan) {
    JoinInput in;
    in.rows = rows;
    in.keys = v == SharedVariant::Placement ? d_placed.data() : d_codes.data();
    in.dim_rows = static_cast<std::uint32_t>(b.size());
    in.value_type = SharedValueType::Int32;
    in.dim_values = b.data();
    in.placement = p;
    SharedGpuOptions go;
    go.variant = v;
    go.shape = shape;
    go.input_on_device = true;
    go.timing = true;
    return time_runs(o.reps, [&] {
      JoinResult r = join_gpu(in, go);
      plan = r.plan;
      return r.stage_ms;
    });
  }

  // Runs one query's variants; a variant whose state does not fit is a row
  // with its refusal as the plan.
  template <typename Run>
  void variants(const char* query, double theta, std::uint32_t c, std::size_t rows, const Placement& p,
                double floor, const std::vector<SharedVariant>& list, Run&& run) {
    for (SharedVariant v : list) {
      std::string plan;
      Timing t;
      try {
        if (v == SharedVariant::Placement) upload(d_placed, p.column);
        t = run(v, plan);
      } catch (const std::exception& e) {
        plan = std::string("refused: ") + e.what();
      }
      csv.row("variants", query, theta, c, rows, std::string(shared_variant_name(v)),
              v == SharedVariant::Placement ? &p : nullptr, t, floor, plan);
    }
  }
};

void variants_figure(Bench& b) {
  const std::size_t rows = std::size_t{1} << b.o.log2_rows;
  const auto x = doubles(rows, 17);
  const double* dx = upload(b.d_x, x);
  for (std::uint32_t c : {1024u, 8192u}) {
    std::vector<std::int32_t> dim(c);
    for (std::uint32_t k = 0; k < c; ++k) dim[k] = static_cast<std::int32_t>((k * 2654435761u) % 1000);
    for (double theta : b.o.thetas) {
      const auto codes = zipf(rows, c, theta, 1000 + c + static_cast<std::uint64_t>(theta * 10));
      upload(b.d_codes, codes);
      if (!b.o.dump.empty() && c == 1024) {
        const std::string stem = b.o.dump + "/theta" + std::to_string(static_cast<int>(theta * 10));
        std::ofstream(stem + ".a.u32", std::ios::binary).write(reinterpret_cast<const char*>(codes.data()), 4 * rows);
        std::ofstream(b.o.dump + "/x.f64", std::ios::binary).write(reinterpret_cast<const char*>(x.data()), 8 * rows);
        std::ofstream(b.o.dump + "/b.i32", std::ios::binary).write(reinterpret_cast<const char*>(dim.data()), 4 * c);
      }
      const Placement w = b.place(codes, c, PlacementGoal::Write, c <= 1024 ? 4 : 1.5, 16, 8);
      const Placement w4 = b.place(codes, c, PlacementGoal::Write, c <= 1024 ? 4 : 4, 16, 4);
      const auto& all = all_shared_variants();
      b.variants("q2-sum-double", theta, c, rows, w, b.floor_ms(12 * rows + 16 * c), all,
                 [&](SharedVariant v, std::string& plan) { return b.q2(codes, c, dx, v, &w, plan); });
      b.variants("q2-count", theta, c, rows, w4, b.floor_ms(4 * rows + 8 * c), all,
                 [&](SharedVariant v, std::string& plan) { return b.q2(codes, c, nullptr, v, &w4, plan); });
      const Placement r = b.place(codes, c, PlacementGoal::Read, c <= 1024 ? 4 : 2, 0, 4);
      std::vector<SharedVariant> join_list;
      for (SharedVariant v : all)
        if (join_has_variant(v)) join_list.push_back(v);
      b.variants("q1-join-sum", theta, c, rows, r, b.floor_ms(4 * rows), join_list,
                 [&](SharedVariant v, std::string& plan) { return b.q1(rows, dim, v, &r, plan); });
    }
  }
}

// Placements only (no GPU): copies a value against rows, theta, C.
void copies_figures(Bench& b) {
  const std::size_t rows = std::size_t{1} << b.o.log2_rows;
  if (wants(b.o, "copies")) {
    for (double theta : b.o.thetas) {
      const auto codes = zipf(rows, 1024, theta, 2000 + static_cast<std::uint64_t>(theta * 10));
      for (int k = 20; k <= b.o.log2_rows; k += 2) {
        const std::vector<std::uint32_t> prefix(codes.begin(), codes.begin() + (std::size_t{1} << k));
        for (PlacementGoal goal : {PlacementGoal::Read, PlacementGoal::Write}) {
          const Placement p = b.place(prefix, 1024, goal, 12, 16, goal == PlacementGoal::Write ? 8 : 4);
          b.csv.row("copies", "placement", theta, 1024, prefix.size(), "placement", &p, {}, 0, "");
        }
      }
    }
  }
  if (wants(b.o, "cardinality")) {
    const std::size_t n = std::size_t{1} << std::min(24, b.o.log2_rows);
    for (double theta : {0.0, 1.0})
      for (std::uint32_t c : {64u, 256u, 1024u, 4096u, 8192u}) {
        const auto codes = zipf(n, c, theta, 3000 + c);
        for (int window : {0, 16}) {
          const Placement p = b.place(codes, c, PlacementGoal::Write, 12, window, 8);
          b.csv.row("cardinality", "placement", theta, c, n, "placement", &p, {}, 0, "");
        }
      }
  }
}

// Q2 (COUNT, SUM(double)) with the placement against window and budget.
void sweep_figures(Bench& b) {
  const std::size_t rows = std::size_t{1} << b.o.sweep_log2_rows;
  const auto x = doubles(rows, 19);
  const double* dx = upload(b.d_x, x);
  const double floor = b.floor_ms(12 * rows + 16 * 1024);
  for (double theta : b.o.thetas) {
    const auto codes = zipf(rows, 1024, theta, 4000 + static_cast<std::uint64_t>(theta * 10));
    upload(b.d_codes, codes);
    std::string plan;
    const Timing one = b.q2(codes, 1024, dx, SharedVariant::OneCopy, nullptr, plan);
    b.csv.row("sweep-baseline", "q2-sum-double", theta, 1024, rows, "shared", nullptr, one, floor, plan);
    auto point = [&](const char* figure, double budget, int window) {
      const Placement p = b.place(codes, 1024, PlacementGoal::Write, budget, window, 8);
      upload(b.d_placed, p.column);
      std::string plan;
      const Timing t = b.q2(codes, 1024, dx, SharedVariant::Placement, &p, plan);
      b.csv.row(figure, "q2-sum-double", theta, 1024, rows, "placement", &p, t, floor, plan);
    };
    if (wants(b.o, "window"))
      for (int window : {0, 4, 16, 64}) point("window", 12, window);
    if (wants(b.o, "values")) {
      point("values-and-banks", 12, 16);
      const Placement p = b.place(codes, 1024, PlacementGoal::Write, 12, 16, 8, false);
      upload(b.d_placed, p.column);
      std::string plan;
      const Timing t = b.q2(codes, 1024, dx, SharedVariant::Placement, &p, plan);
      b.csv.row("values-only", "q2-sum-double", theta, 1024, rows, "placement", &p, t, floor, plan);
    }
    if (wants(b.o, "budget"))
      for (double budget : {1.0, 2.0, 4.0, 8.0, 12.0}) point("budget", budget, 16);
  }
}

void threads_figure(Bench& b) {
  const std::size_t rows = std::size_t{1} << b.o.log2_rows;
  const auto x = doubles(rows, 17);
  const double* dx = upload(b.d_x, x);
  for (std::uint32_t c : {1024u, 8192u})
    for (double theta : {0.0, 2.0}) {
      const auto codes = zipf(rows, c, theta, 1000 + c + static_cast<std::uint64_t>(theta * 10));
      upload(b.d_codes, codes);
      const Placement w = b.place(codes, c, PlacementGoal::Write, c <= 1024 ? 4 : 1.5, 16, 8);
      upload(b.d_placed, w.column);
      for (int threads : {256, 512, 1024}) {
        b.shape.block_threads = threads;
        for (SharedVariant v : {SharedVariant::OneCopy, SharedVariant::NaiveReplicas, SharedVariant::Placement}) {
          std::string plan;
          Timing t;
          try {
            t = b.q2(codes, c, dx, v, &w, plan);
          } catch (const std::exception& e) {
            plan = std::string("refused: ") + e.what();
          }
          b.csv.row("threads", "q2-sum-double", theta, c, rows, std::string(shared_variant_name(v)),
                    v == SharedVariant::Placement ? &w : nullptr, t, b.floor_ms(12 * rows + 16 * c), plan);
        }
      }
      b.shape.block_threads = 0;
    }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--out") o.out = value();
    else if (a == "--figures") o.figures = split(value());
    else if (a == "--log2-rows") o.log2_rows = std::stoi(value());
    else if (a == "--sweep-log2-rows") o.sweep_log2_rows = std::stoi(value());
    else if (a == "--reps") o.reps = std::stoi(value());
    else if (a == "--dump") o.dump = value();
    else if (a == "--thetas") {
      o.thetas.clear();
      for (const auto& t : split(value())) o.thetas.push_back(std::stod(t));
    } else {
      std::fprintf(stderr, "unknown option %s (see the file's head)\n", a.c_str());
      return 2;
    }
  }
  if (o.reps < 1 || o.log2_rows < 10 || o.log2_rows > 31 || o.sweep_log2_rows < 10 || o.sweep_log2_rows > 31) {
    std::fprintf(stderr, "--reps >= 1; --log2-rows and --sweep-log2-rows from 10 to 31\n");
    return 2;
  }
  const double bandwidth = gpu_read_bandwidth();
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("# %s: streaming read %.0f GB/s\n", p.name, bandwidth / 1e9);
  Bench bench{o, bandwidth, Csv(o.out)};
  if (wants(o, "variants")) variants_figure(bench);
  if (wants(o, "threads")) threads_figure(bench);
  if (wants(o, "window") || wants(o, "budget") || wants(o, "values")) sweep_figures(bench);
  if (wants(o, "copies") || wants(o, "cardinality")) copies_figures(bench);
  return 0;
}
