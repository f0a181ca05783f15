#pragma once
// Stage times of one operation on one stream, with CUDA events: a stage is
// bracketed by two events, and its time is read once the stream has passed
// them. Events cost driver calls, so a clock that is not `on` records
// nothing, and the events are kept in a pool across operations.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/runtime/cuda_check.cuh"

namespace gpuolap::gpu {

// Named stage times, in milliseconds, in the order the stages ran.
using StageTimeList = std::vector<std::pair<std::string, double>>;

// CUDA events kept for the stage clocks of every operation: creating and
// destroying two per stage took host time from each query (some 20 of them).
class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  // Event i, created on first use.
  cudaEvent_t at(size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e;
      GPUOLAP_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    return events_[i];
  }

 private:
  std::vector<cudaEvent_t> events_;
};

// Times the stages of one operation on one stream (the pool serves one
// operation at a time); when not `on`, it records nothing.
class StageClock {
 public:
  StageClock(cudaStream_t s, EventPool& pool, bool on) : stream_(s), pool_(pool), on_(on) {}
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;
  void start(const char* name) {
    if (!on_) return;
    const cudaEvent_t a = pool_.at(2 * marks_.size());
    const cudaEvent_t b = pool_.at(2 * marks_.size() + 1);
    GPUOLAP_CUDA_CHECK(cudaEventRecord(a, stream_));
    marks_.push_back({name, a, b});
  }
  void stop() {
    if (on_) GPUOLAP_CUDA_CHECK(cudaEventRecord(std::get<2>(marks_.back()), stream_));
  }
  size_t size() const { return marks_.size(); }
  // Forgets the stages after the first n (an attempt that is retried).
  void truncate(size_t n) { marks_.resize(std::min(n, marks_.size())); }
  // Stage times, waiting for the stream to pass each stage's end; a stage
  // run more than once (per chunk) is summed.
  StageTimeList read() {
    StageTimeList out;
    for (auto& [name, start, stop] : marks_) {
      float ms = 0;
      GPUOLAP_CUDA_CHECK(cudaEventSynchronize(stop));
      GPUOLAP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      auto same = std::find_if(out.begin(), out.end(), [&](const auto& stage) { return stage.first == name; });
      if (same != out.end()) same->second += ms;
      else out.emplace_back(name, ms);
    }
    return out;
  }

 private:
  cudaStream_t stream_;
  EventPool& pool_;
  bool on_;
  std::vector<std::tuple<std::string, cudaEvent_t, cudaEvent_t>> marks_;
};

}  // namespace gpuolap::gpu
