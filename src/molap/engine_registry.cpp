#include <fmt/format.h>

#include <thread>

#include "cpu_engines.hpp"
#include "gpu/runtime/device_info.hpp"
#include "molap/gpu/gpu_engine.hpp"
#include "gpuolap/error.hpp"
#include "molap/planning/kernel_model.hpp"

namespace gpuolap {

namespace {
// Below this many facts, spreading work over threads costs more than it saves.
constexpr size_t kParallelMinFacts = 200000;
// `auto` on a machine with a GPU: the gpu engine, unless a query is outside
// what it handles, or the query so small that the CPU answers before the
// GPU has paid its fixed cost (cpu_answers_first, with the costs `gpuolap
// calibrate` measured); then cpu-parallel, saying why in the plan.
class GpuFirstEngine final : public Engine {
 public:
  GpuFirstEngine(std::unique_ptr<Engine> gpu, const std::string& gpu_name) : gpu_(std::move(gpu)) {
    costs_ = load_kernel_costs(gpu_name, &costs_source_);
  }
  std::string name() const override { return used_gpu_ ? gpu_->name() : cpu_.name(); }
  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) override {
    const std::string limit = gpu_->limit(facts, map);
    used_gpu_ = limit.empty() && !cpu_answers_first(map, facts.size(), costs_);
    fallback_ = !limit.empty() ? "cpu-parallel, because " + limit
                : !used_gpu_ ? fmt::format("cpu-parallel, because its about {:.0f} contributions (at least one per "
                                           "fact) take less than the GPU's fixed {:.3f} ms ({})",
                                           cpu_looks(map, facts.size()),
                                           costs_.gpu_fixed * 1e3, costs_source_)
                             : "";
    return used_gpu_ ? gpu_->run(facts, map, query) : cpu_.run(facts, map, query);
  }
  // Stages are the gpu engine's: none when the last query ran on the CPU.
  bool time_stages(bool on) override { return gpu_->time_stages(on) && used_gpu_; }
  StageTimes stages() const override { return used_gpu_ ? gpu_->stages() : StageTimes{}; }
  std::string last_plan() const override { return used_gpu_ ? gpu_->last_plan() : fallback_; }
  bool count_target_updates(bool on) override { return gpu_->count_target_updates(on); }
  uint64_t last_target_updates() const override { return used_gpu_ ? gpu_->last_target_updates() : 0; }

 private:
  std::unique_ptr<Engine> gpu_;
  CpuParallelEngine cpu_;
  KernelCosts costs_;
  std::string costs_source_;
  bool used_gpu_ = true;
  std::string fallback_;
};

}  // namespace

const std::vector<std::string>& engine_names() {
  static const std::vector<std::string> names{"auto", "cpu-serial", "cpu-parallel", "gpu", "gpu-cdp"};
  return names;
}

EngineChoice make_engine(const std::string& name, size_t fact_count, const GpuOptions& gpu_options) {
  if (name == "cpu-serial") return {std::make_unique<CpuSerialEngine>(), ""};
  if (name == "cpu-parallel") return {std::make_unique<CpuParallelEngine>(), ""};
  if (name == "gpu" || name == "gpu-cdp") {
    const GpuStatus gpu = gpu_status();
    if (!gpu.cuda_build || gpu.device_count == 0)
      throw InputError(fmt::format("engine '{}' is not available: {}", name, gpu.problem));
    return {make_gpu_engine(gpu_options, name), ""};
  }
  if (name == "auto") {
    const GpuStatus gpu = gpu_status();
    if (gpu.cuda_build && gpu.device_count > 0)
      return {std::make_unique<GpuFirstEngine>(make_gpu_engine(gpu_options, "gpu", -1, true), gpu.device_name),
              gpu.device_count == 1 ? fmt::format("GPU {} found", gpu.device_name)
                                    : fmt::format("{} GPUs found ({} first)", gpu.device_count, gpu.device_name)};
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    if (cores > 1 && fact_count >= kParallelMinFacts)
      return {std::make_unique<CpuParallelEngine>(),
              fmt::format("{} facts on {} cores; {}", fact_count, cores, gpu.problem)};
    return {std::make_unique<CpuSerialEngine>(),
            fmt::format("{} facts on {} core(s) is too little work to share; {}", fact_count, cores, gpu.problem)};
  }
  std::string known;
  for (const auto& n : engine_names()) known += (known.empty() ? "" : ", ") + n;
  throw InputError(fmt::format("unknown engine '{}' (expected one of {})", name, known));
}

}  // namespace gpuolap
