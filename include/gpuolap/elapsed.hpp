#pragma once
// Time since a point of the steady clock, as the commands, the API and the
// Python module report their steps: in seconds or in milliseconds.
#include <chrono>

namespace gpuolap {

using SteadyClock = std::chrono::steady_clock;

inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

inline double ms_since(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
}

}  // namespace gpuolap
