#include "progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <exception>

namespace gpuolap::cli {

Progress::Progress(std::string label) : label_(std::move(label)), enabled_(::isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (!drawn_) return;
  // Unwinding from an error: the error message says what happened.
  std::fprintf(stderr, "\r%s: %s\033[K\n", label_.c_str(), std::uncaught_exceptions() ? "stopped" : "done");
}

void Progress::update(uint64_t done, uint64_t total) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total && now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  drawn_ = true;
  std::fprintf(stderr, "\r%s: %3.0f%%\033[K", label_.c_str(), 100.0 * static_cast<double>(done) / static_cast<double>(total));
  std::fflush(stderr);
}

}  // namespace gpuolap::cli
