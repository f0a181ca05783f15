#pragma once
// Memory for large answers, kept from one answer to the next. A multi-
// megabyte answer built in a fresh std::string is memory glibc hands a
// worker thread from a heap of its own arena and unmaps again when the
// answer is freed, so every large answer faulted all of its pages in anew:
// 697 page faults for B3's 2.4 MB answer on the H100 machine's host, where
// writing it took 4 ms. Built in a buffer given back after the last answer
// was sent, its pages are already there (50 faults, 2.6 ms).
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

namespace gpuolap::server {

class AnswerBuffers {
 public:
  // The buffers every connection of the process shares.
  static AnswerBuffers& shared();

  // An empty string, with the capacity of one given back when there is one.
  std::string take();
  // Keeps `buffer`'s memory for a later take(), when it is large enough to
  // matter (64 KB or more) and no larger than 64 MB; at most 8 are kept.
  void give_back(std::string&& buffer);

  static constexpr std::size_t kSmallest = std::size_t{64} << 10;
  static constexpr std::size_t kLargest = std::size_t{64} << 20;
  static constexpr std::size_t kKept = 8;

 private:
  std::mutex mutex_;
  std::vector<std::string> kept_;
};

}  // namespace gpuolap::server
