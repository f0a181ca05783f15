#pragma once
// The plan stage's host steps in microseconds, for the plan text: where a
// query's planning goes on the machine it runs on. Steps are recorded, and
// put in words only when the plan is read.
#include <chrono>
#include <string>
#include <utility>

namespace gpuolap::gpu {

class HostSteps {
 public:
  void step(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - last_).count();
    if (count_ < kMost) steps_[count_++] = {name, us};
    last_ = now;
  }
  // "host us: classes 12, map image 3, ...; " (empty when nothing was recorded).
  std::string said() const {
    std::string out;
    for (int i = 0; i < count_; ++i)
      out += (i ? ", " : "host us: ") + std::string(steps_[i].first) + " " + std::to_string(steps_[i].second);
    return out.empty() ? out : out + "; ";
  }
  // The next step starts now (the time since the last one was not planning).
  void resume() { last_ = std::chrono::steady_clock::now(); }

 private:
  static constexpr int kMost = 8;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::pair<const char*, long long> steps_[kMost];
  int count_ = 0;
};

}  // namespace gpuolap::gpu
