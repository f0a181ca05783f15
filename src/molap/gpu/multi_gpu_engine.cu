// The gpu engine over several GPUs of one host: the facts cut into slices
// of whole pages, balanced by bytes (FactTable::split), one slice resident
// on each device; a query planned and run by every device's own engine at
// once (a host thread each), over its slice; the parts merged on the host
// (molap/planning/part_merge.hpp), since the answer goes to the host anyway.
//
// Writes: each device's copy is patched with the written cells whose keys
// its slice owns (FactSlice::owns); a new cell goes to the device that owns
// its key. The slices are cut anew only when some device would upload its
// copy in full (a new base table, a measure not yet resident): a full
// upload must take a slice cut from the table it uploads.
//
// A part that fails fails the query, naming its device, and its copy is
// forgotten (uploaded in full next time); no partial answer is returned.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <iomanip>
#include <sstream>
#include <thread>

#include "gpuolap/error.hpp"
#include "molap/gpu/gpu_engine.cuh"
#include "molap/gpu/gpu_engine.hpp"
#include "molap/gpu/multi_gpu_engine.hpp"
#include "gpu/runtime/text.hpp"

namespace gpuolap::gpu {

namespace {

// Milliseconds with three decimals (text() prints numbers as a stream does).
std::string ms(double milliseconds) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << milliseconds;
  return out.str();
}

// A thread kept for one part through the engine's life. A thread made per
// query cost some 50 us more on 2 H100s (M1 at scale 1: 0.227 ms over 2
// GPUs against 0.140 on one): its creation, and its first CUDA call
// binding it to the device's context.
class PartThread {
 public:
  PartThread() : thread_([this] { loop(); }) {}
  ~PartThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  PartThread(const PartThread&) = delete;
  PartThread& operator=(const PartThread&) = delete;

  // Runs `task` on this thread (which must be idle); wait() returns once it is done.
  void start(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      task_ = std::move(task);
    }
    changed_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !task_; });
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return stop_ || task_; });
      if (stop_) return;
      lock.unlock();
      task_();  // the task catches what it throws
      lock.lock();
      task_ = nullptr;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::function<void()> task_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members it reads exist
};

class MultiGpuEngine final : public Engine {
 public:
  MultiGpuEngine(const GpuOptions& o, const std::string& name, const std::vector<int>& devices, bool always_spread)
      : name_(name), always_spread_(always_spread) {
    for (const int d : devices) parts_.push_back(std::make_unique<GpuEngine>(o, name, d));
    threads_.resize(devices.size() - 1);
    for (auto& t : threads_) t = std::make_unique<PartThread>();
    costs_ = load_kernel_costs(parts_.front()->context().props().name, &costs_source_);
  }

  std::string name() const override { return name_; }
  std::string limit(const FactTable& facts, const AggregationMap& map) const override {
    return gpu_engine_limit(facts, map, parts_.size());
  }
  bool time_stages(bool on) override {
    for (auto& p : parts_) p->time_stages(on);
    time_stages_ = on;
    return true;
  }
  StageTimes stages() const override { return stages_; }
  std::string last_plan() const override { return plan_; }
  bool count_target_updates(bool on) override {
    for (auto& p : parts_) p->count_target_updates(on);
    return true;
  }
  uint64_t last_target_updates() const override { return updates_; }

  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) override {
    using Clock = std::chrono::steady_clock;
    if (const std::string why_not = limit(facts, map); !why_not.empty()) throw InputError("gpu engine: " + why_not);
    const auto start = Clock::now();
    std::string why;
    const size_t wanted = spread(facts, why) ? parts_.size() : 1;
    bool keep = wanted == wanted_ && !slices_.empty();
    for (size_t i = 0; keep && i < slices_.size(); ++i) keep = parts_[i]->can_keep(facts, query.measure, slices_[i]);
    if (!keep) {
      slices_ = facts.split(wanted);
      wanted_ = wanted;
    }
    const size_t n = slices_.size();
    std::vector<QueryPart> results(n);
    std::vector<std::exception_ptr> failures(n);
    std::vector<double> part_ms(n);
    const auto run_one = [&](size_t i) {
      try {
        const auto t = Clock::now();
        results[i] = parts_[i]->run_part(facts, map, query, slices_[i], n > 1);
        part_ms[i] = std::chrono::duration<double, std::milli>(Clock::now() - t).count();
      } catch (...) {
        failures[i] = std::current_exception();
      }
    };
    // The first part runs on this thread, the others on threads of their own.
    for (size_t i = 1; i < n; ++i) threads_[i - 1]->start([&run_one, i] { run_one(i); });
    run_one(0);
    for (size_t i = 1; i < n; ++i) threads_[i - 1]->wait();
    for (size_t i = 0; i < n; ++i)
      if (failures[i]) parts_[i]->forget_facts();
    for (size_t i = 0; i < n; ++i)
      if (failures[i]) rethrow_naming(i, failures[i]);

    const auto merge_start = Clock::now();
    AreaResult answer = n == 1 ? std::move(results[0].result) : merge_parts(results, query.aggregate, map.sum_grid(facts, query.measure));
    const auto end = Clock::now();
    describe(facts, n, why, part_ms, std::chrono::duration<double, std::milli>(end - merge_start).count(),
             std::chrono::duration<double, std::milli>(end - start).count());
    return answer;
  }

 private:
  // Whether this query's facts are worth splitting: always when the user
  // named the GPUs; for `auto`, when reading the facts on one GPU takes
  // longer than the split's own cost (the threads and the merge) saves.
  bool spread(const FactTable& facts, std::string& why) const {
    const size_t n = parts_.size();
    if (always_spread_) {
      why = text("--gpus named ", n, " devices");
      return true;
    }
    // A table one GPU cannot hold: the keys and one measure, 16 bytes a fact.
    const uint64_t bytes = 16 * static_cast<uint64_t>(facts.size());
    const uint64_t memory = parts_.front()->context().props().totalGlobalMem;
    if (facts.size() >= kMaxFactsPerDevice || bytes > memory) {
      why = text("auto: one GPU cannot hold the ", facts.size(), " facts (", bytes >> 20, " MiB of keys and values; ",
                 memory >> 20, " MiB of memory, fewer than 2^32 facts)");
      return true;
    }
    const double one = static_cast<double>(facts.size()) * costs_.per_cell;
    const double saved = one * (1.0 - 1.0 / static_cast<double>(n));
    const bool worth = saved > kSpreadCost;
    why = text("auto: reading the ", facts.size(), " facts takes about ", ms(one * 1e3), " ms on one GPU; ", n,
               " GPUs would save ", ms(saved * 1e3), " ms, ", worth ? "more than" : "less than", " the split's own ",
               ms(kSpreadCost * 1e3), " ms (", costs_source_, ")");
    return worth;
  }

  [[noreturn]] void rethrow_naming(size_t i, const std::exception_ptr& failure) const {
    const DeviceContext& c = parts_[i]->context();
    const std::string where = text("GPU ", c.device(), " (", c.props().name, "), part ", i + 1, " of ", slices_.size(), ": ");
    try {
      std::rethrow_exception(failure);
    } catch (const InputError& e) {
      throw InputError(where + e.what());
    } catch (const GpuOutOfMemory& e) {
      throw GpuOutOfMemory(where + e.what());
    } catch (const GpuError& e) {
      throw GpuError(where + e.what());
    } catch (const std::exception& e) {
      throw std::runtime_error(where + e.what());
    }
  }

  void describe(const FactTable& facts, size_t n, const std::string& why, const std::vector<double>& part_ms,
                double merge_ms, double total_ms) {
    std::string plan = text(name_, " on ", n, n > 1 ? " GPUs (" : " GPU (", why, "); facts in slices of whole pages:");
    stages_.clear();
    updates_ = 0;
    for (size_t i = 0; i < n; ++i) {
      const DeviceContext& c = parts_[i]->context();
      const FactSlice& s = slices_[i];
      plan += text(" GPU ", c.device(), " cells [", s.begin, ", ", std::min(s.end, facts.size()), ")", i + 1 < n ? "," : "");
      // The parts run at once: each stage as long as its slowest part's.
      for (const auto& [stage, ms] : parts_[i]->stages()) {
        const auto same = std::find_if(stages_.begin(), stages_.end(), [&](const auto& s) { return s.first == stage; });
        if (same == stages_.end()) stages_.emplace_back(stage, ms);
        else same->second = std::max(same->second, ms);
      }
      updates_ += parts_[i]->last_target_updates();
    }
    if (time_stages_) {
      for (size_t i = 0; i < n; ++i)
        stages_.emplace_back(text("part ", i, " (GPU ", parts_[i]->context().device(), ")"), part_ms[i]);
      stages_.emplace_back("merge", merge_ms);
      stages_.emplace_back("whole query", total_ms);
    }
    plan += text("; parts merged on the host in ", ms(merge_ms), " ms.\nGPU ", parts_[0]->context().device(),
                 "'s part: ", parts_[0]->last_plan());
    plan_ = std::move(plan);
  }

  // What a split costs beside the parts themselves: handing the parts to
  // their threads and waiting for them, each part's own fixed stages (plan,
  // map, table, compact, copy back), the merge. Measured on 2 H100s
  // (bench/results/h100x2-multi-gpu-2026-11-25.md): M1 and M3 at scale 1
  // (41 M facts, 0.215 ms to read on one GPU by the model, 0.107 saved by
  // two) ran 1.33x and 1.10x faster on two; M2, whose time is its 228
  // targets per fact rather than its facts, 0.92x — the one query this
  // rule splits to its loss. Not yet fitted by `gpuolap calibrate`.
  static constexpr double kSpreadCost = 0.05e-3;

  std::string name_;
  bool always_spread_;
  std::vector<std::unique_ptr<GpuEngine>> parts_;
  std::vector<std::unique_ptr<PartThread>> threads_;  // threads_[i - 1] runs parts_[i]
  KernelCosts costs_;
  std::string costs_source_;
  std::vector<FactSlice> slices_;  // the parts' slices; slices_[i] on parts_[i]
  size_t wanted_ = 0;              // the parts the slices were cut for
  bool time_stages_ = false;
  StageTimes stages_;
  std::string plan_;
  uint64_t updates_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_multi_gpu_engine(const GpuOptions& options, const std::string& name,
                                              const std::vector<int>& devices, bool always_spread) {
  return std::make_unique<MultiGpuEngine>(options, name, devices, always_spread);
}

}  // namespace gpuolap::gpu
