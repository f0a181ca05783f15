// Benchmark of ordered aggregation on the GPU: the paper's figures 10-13
// re-measured at its 2^15 rows and at 2^20..2^30, the baselines past the
// paper (1-kernel, block-cooperative, CUB), `auto`, and cpu-parallel on the
// host's cores, each point beside the floor: every key and value read once,
// every group's key and value written once, at this GPU's streaming-read
// bandwidth measured in the same run (gpu_read_bandwidth, as `gpuolap bench`).
//
//   gpuolap_ordered_bench --out FILE.csv [--sizes 15,20,24,28] [--reps 5]
//                         [--figures arch,intent,variant,best,lineitem,cpu]
//                         [--lineitem-scale 10]
//
// The table is resident on the GPU and the groups stay there (the kernels
// are measured, not the bus); a point's time is the sum of its stages'
// CUDA-event times (kernels, memsets and the init of the groups' slots),
// the minimum and the median of --reps runs after one warm-up run.
#include <cub/cub.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "generate/table_generators.hpp"
#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_info.hpp"
#include "groupby/ordered_aggregation.hpp"

using namespace gpuolap;
using namespace gpuolap::groupby;

namespace {

__global__ void fill(std::int32_t* keys, double* values, std::size_t n, std::size_t run) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    keys[i] = static_cast<std::int32_t>(i / run);
    std::uint64_t h = i * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
    values[i] = static_cast<double>(h % 100000) / 100;
  }
}

struct Options {
  std::string out = "ordered-bench.csv";
  std::vector<int> sizes{15, 20, 24, 28};
  std::vector<std::string> figures{"arch", "intent", "variant", "best", "lineitem", "cpu"};
  int reps = 5;
  double lineitem_scale = 10;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) out.push_back(x);
  return out;
}

struct Data {
  std::string name;
  OrderedInput device;   // pointers on the GPU
  OrderedInput host;     // the same on the host (auto's estimate, cpu-parallel)
  std::size_t key_bytes = 4;
  std::size_t groups = 0;
};

class Bench {
 public:
  Bench(const Options& o, double bandwidth) : o_(o), bandwidth_(bandwidth), out_(o.out) {
    out_ << "figure,data,log2_rows,rows,groups,engine,architecture,variant,local_size,intent,ms_min,ms_median,"
            "rows_per_s,floor_ms,fraction_of_floor\n";
  }

  double floor_ms(const Data& d) const {
    const double bytes = static_cast<double>(d.device.rows) * (d.key_bytes + 8) + static_cast<double>(d.groups) * (d.key_bytes + 8);
    return bytes / bandwidth_ * 1e3;
  }

  void row(const std::string& figure, const Data& d, const std::string& engine, const std::string& arch,
           const std::string& variant, int local, int intent, std::vector<double> ms) {
    std::sort(ms.begin(), ms.end());
    const double best = ms.front(), median = ms[ms.size() / 2];
    const double floor = floor_ms(d);
    int log2 = 0;
    while ((std::size_t{1} << (log2 + 1)) <= d.device.rows) ++log2;
    out_ << figure << ',' << d.name << ',' << log2 << ',' << d.device.rows << ',' << d.groups << ',' << engine << ','
         << arch << ',' << variant << ',' << local << ',' << intent << ',' << best << ',' << median << ','
         << d.device.rows / (best / 1e3) << ',' << floor << ',' << floor / best << '\n';
    out_.flush();
    std::printf("%-8s %-14s 2^%-2d %-18s %-17s local %4d intent %4d  %9.3f ms  floor %.3f ms (%.2f)\n", figure.c_str(),
                d.name.c_str(), log2, arch.c_str(), variant.c_str(), local, intent, best, floor, floor / best);
    std::fflush(stdout);
  }

  // Times one GPU plan; a plan the input cannot take is skipped.
  void gpu(const std::string& figure, Data& d, OrderedPlan plan) {
    const auto times = time_gpu(d, plan);
    if (!times.empty())
      row(figure, d, "gpu", std::string(architecture_name(plan.architecture)),
          takes_variant(plan.architecture) ? std::string(variant_name(plan.variant)) : "-", plan.local_size,
          plan.intent, times);
  }

  // Times the plan `auto` picks (from the host copy of the keys).
  void gpu_auto(const std::string& figure, Data& d) {
    const OrderedPlan plan = choose_ordered_plan(d.host, {});
    const auto times = time_gpu(d, plan);
    if (!times.empty())
      row(figure, d, "gpu", "auto",
          std::string(architecture_name(plan.architecture)) + "/" + std::to_string(plan.local_size) + "/" +
              std::to_string(plan.intent),
          plan.local_size, plan.intent, times);
  }

  // The stage-time sums of --reps runs after a warm-up; empty when the plan
  // cannot take the input (said on stdout).
  std::vector<double> time_gpu(Data& d, const OrderedPlan& plan) {
    OrderedGpuOptions opt;
    opt.input_on_device = true;
    opt.download = false;
    opt.timing = true;
    std::vector<double> ms;
    try {
      for (int r = 0; r <= o_.reps; ++r) {
        const OrderedResult res = aggregate_gpu(d.device, plan, opt);
        d.groups = res.groups;
        double t = 0;
        for (const auto& [name, stage_ms] : res.stage_ms) t += stage_ms;
        if (r) ms.push_back(t);
      }
    } catch (const std::exception& e) {
      std::printf("skip %s %s: %s\n", std::string(architecture_name(plan.architecture)).c_str(), d.name.c_str(), e.what());
      return {};
    }
    return ms;
  }

  void cpu(const std::string& figure, Data& d) {
    std::vector<double> ms;
    for (int r = 0; r <= std::min(o_.reps, 3); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const OrderedResult res = aggregate_parallel(d.host);
      const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      d.groups = res.groups;
      if (r) ms.push_back(t);
    }
    row(figure, d, "cpu-parallel", "cpu-parallel", "-", 0, 0, ms);
  }

 private:
  const Options& o_;
  double bandwidth_;
  std::ofstream out_;
};

// Synthetic data: sorted int32 keys in runs of `run` rows, double values,
// SUM(value) per group (the issue's target: floor = keys and values read,
// one key and value written per group).
struct Synthetic {
  DeviceBuffer<std::int32_t> keys;
  DeviceBuffer<double> values;
  std::vector<std::int32_t> host_keys;
  std::vector<double> host_values;

  Data make(std::string name, std::size_t n, std::size_t run) {
    keys.reserve(n);
    values.reserve(n);
    fill<<<4096, 256>>>(keys.data(), values.data(), n, run);
    GPUOLAP_CUDA_CHECK(cudaDeviceSynchronize());
    host_keys = keys.download(n);
    host_values = values.download(n);
    Data d;
    d.name = std::move(name);
    d.groups = (n + run - 1) / run;
    d.device.rows = n;
    d.device.keys = {{ValueType::Int32, keys.data(), nullptr, "k"}};
    d.device.values = {{ValueType::Double, values.data(), nullptr, "v"}};
    d.device.aggregates = {{AggregateKind::Sum, 0}};
    d.host = d.device;
    d.host.keys[0].values = host_keys.data();
    d.host.values[0].values = host_values.data();
    return d;
  }
};

void synthetic_figures(Bench& bench, const Options& o) {
  auto has = [&](const char* f) { return std::find(o.figures.begin(), o.figures.end(), f) != o.figures.end(); };
  Synthetic s;
  for (int log2 : o.sizes) {
    const std::size_t n = std::size_t{1} << log2;
    for (const auto& [name, run] : std::vector<std::pair<std::string, std::size_t>>{{"unique", 1}, {"runs-16", 16}, {"runs-1024", 1024}}) {
      Data d = s.make(name, n, run);
      const bool paper_data = run != 1024;  // the paper's unique and reduce data
      if (has("arch") && paper_data && log2 <= 28)
        for (Architecture a : {Architecture::FiveKernel, Architecture::ThreeKernel, Architecture::TwoKernel, Architecture::OneKernel})
          for (int l = 0; l <= 10; ++l) bench.gpu("arch", d, {a, Variant::DirectAtomics, 1 << l, 128, ""});
      if (has("intent") && paper_data && log2 <= 28)
        for (int i = 0; i <= 12; ++i) bench.gpu("intent", d, {Architecture::TwoKernel, Variant::ChunkedAtomics, 8, 1 << i, ""});
      if (has("variant") && log2 <= 28)
        for (Variant v : all_variants()) bench.gpu("variant", d, {Architecture::TwoKernel, v, 8, 128, ""});
      if (has("best")) {
        for (Variant v : all_variants()) bench.gpu("best", d, {Architecture::OneKernel, v, 256, 8, ""});
        bench.gpu("best", d, {Architecture::TwoKernel, Variant::PrivateVariable, 8, 128, ""});  // the paper's winner
        bench.gpu("best", d, {Architecture::TwoKernel, Variant::PrivateVariable, 256, 8, ""});
        for (int local : {128, 256, 512})
          for (int intent : {4, 8, 16, 32}) bench.gpu("best", d, {Architecture::BlockCooperative, Variant::PrivateVariable, local, intent, ""});
        bench.gpu("best", d, {Architecture::CubReduceByKey, Variant::PrivateVariable, 256, 8, ""});
        bench.gpu_auto("best", d);
      }
      if (has("cpu") && log2 >= 20 && log2 <= 28) bench.cpu("cpu", d);
    }
  }
}

// TPC-H lineitem's columns of the paper's fig. 13, each sorted (on the GPU,
// CUB radix sort) with l_extendedprice beside it: SUM(l_extendedprice)
// GROUP BY the column.
void lineitem_figure(Bench& bench, const Options& o) {
  TableGeneratorOptions g;
  g.scale = o.lineitem_scale;
  const auto t0 = std::chrono::steady_clock::now();
  const table::Table li = generate_lineitem(g).front();
  std::printf("lineitem SF %g: %zu rows, generated in %.1f s\n", o.lineitem_scale, li.row_count(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const std::size_t n = li.row_count();
  const table::Column* price = li.find("l_extendedprice");
  DeviceBuffer<double> v_in(n), v_sorted(n);
  v_in.upload(price->doubles);
  for (const char* column : {"l_returnflag", "l_linestatus", "l_shipdate", "l_partkey", "l_suppkey", "l_orderkey"}) {
    const table::Column* c = li.find(column);
    if (!c) continue;
    const bool wide = c->type == table::ColumnType::Int64;
    DeviceBuffer<std::uint8_t> k_in(n * (wide ? 8 : 4)), k_sorted(n * (wide ? 8 : 4));
    std::size_t bytes = 0;
    auto sort = [&](auto* in, auto* out) {
      GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, in, out, v_in.data(), v_sorted.data(), n));
      DeviceBuffer<std::uint8_t> temp(bytes);
      GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, in, out, v_in.data(), v_sorted.data(), n));
      GPUOLAP_CUDA_CHECK(cudaDeviceSynchronize());
    };
    if (wide) {
      k_in.upload(reinterpret_cast<const std::uint8_t*>(c->int64s.data()), n * 8);
      sort(reinterpret_cast<std::int64_t*>(k_in.data()), reinterpret_cast<std::int64_t*>(k_sorted.data()));
    } else {
      k_in.upload(reinterpret_cast<const std::uint8_t*>(c->int32s.data()), n * 4);
      sort(reinterpret_cast<std::int32_t*>(k_in.data()), reinterpret_cast<std::int32_t*>(k_sorted.data()));
    }
    std::vector<std::uint8_t> host_keys = k_sorted.download(n * (wide ? 8 : 4));
    std::vector<double> host_values = v_sorted.download(n);
    Data d;
    d.name = column;
    d.key_bytes = wide ? 8 : 4;
    d.device.rows = n;
    d.device.keys = {{wide ? ValueType::Int64 : ValueType::Int32, k_sorted.data(), nullptr, column}};
    d.device.values = {{ValueType::Double, v_sorted.data(), nullptr, "l_extendedprice"}};
    d.device.aggregates = {{AggregateKind::Sum, 0}};
    d.host = d.device;
    d.host.keys[0].values = host_keys.data();
    d.host.values[0].values = host_values.data();
    for (Variant v : all_variants()) bench.gpu("lineitem", d, {Architecture::TwoKernel, v, 8, 128, ""});
    for (Variant v : all_variants()) bench.gpu("lineitem", d, {Architecture::OneKernel, v, 256, 8, ""});
    for (int intent : {4, 8, 16, 32}) bench.gpu("lineitem", d, {Architecture::BlockCooperative, Variant::PrivateVariable, 256, intent, ""});
    bench.gpu("lineitem", d, {Architecture::CubReduceByKey, Variant::PrivateVariable, 256, 8, ""});
    bench.gpu_auto("lineitem", d);
    bench.cpu("lineitem", d);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--out") o.out = v;
    else if (k == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split(v)) o.sizes.push_back(std::stoi(s));
    } else if (k == "--figures") o.figures = split(v);
    else if (k == "--reps") o.reps = std::stoi(v);
    else if (k == "--lineitem-scale") o.lineitem_scale = std::stod(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (o.reps < 1) {
    std::fprintf(stderr, "--reps takes 1 or more (runs timed after the warm-up)\n");
    return 2;
  }
  const double bandwidth = gpu_read_bandwidth();
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("%s: streaming read %.0f GB/s\n", p.name, bandwidth / 1e9);
  Bench bench(o, bandwidth);
  synthetic_figures(bench, o);
  if (std::find(o.figures.begin(), o.figures.end(), "lineitem") != o.figures.end()) lineitem_figure(bench, o);
  return 0;
}
