#pragma once
// Progress of long work (loading, generating, merging) on a terminal:
// a percentage redrawn in place on stderr, at most a few times a second.
// Silent when stderr is not a terminal, so logs and pipes stay clean.
#include <chrono>
#include <string>

#include "gpuolap/progress.hpp"

namespace gpuolap::cli {

class Progress {
 public:
  explicit Progress(std::string label);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void update(uint64_t done, uint64_t total);
  // A callback for the library's long operations.
  ProgressFn callback() {
    return [this](uint64_t done, uint64_t total) { update(done, total); };
  }

 private:
  std::string label_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace gpuolap::cli
