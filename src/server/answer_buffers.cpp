#include "answer_buffers.hpp"

#include <algorithm>
#include <utility>

namespace gpuolap::server {

AnswerBuffers& AnswerBuffers::shared() {
  static AnswerBuffers buffers;
  return buffers;
}

std::string AnswerBuffers::take() {
  std::lock_guard lock(mutex_);
  if (kept_.empty()) return {};
  // The largest kept, so that one large answer after small ones finds room.
  const auto largest = std::max_element(kept_.begin(), kept_.end(),
                                        [](const std::string& a, const std::string& b) { return a.capacity() < b.capacity(); });
  std::string buffer = std::move(*largest);
  kept_.erase(largest);
  buffer.clear();
  return buffer;
}

void AnswerBuffers::give_back(std::string&& buffer) {
  if (buffer.capacity() < kSmallest || buffer.capacity() > kLargest) return;
  std::lock_guard lock(mutex_);
  if (kept_.size() < kKept) {
    kept_.push_back(std::move(buffer));
    return;
  }
  // Full: keep the larger of this one and the smallest kept.
  const auto smallest = std::min_element(kept_.begin(), kept_.end(),
                                         [](const std::string& a, const std::string& b) { return a.capacity() < b.capacity(); });
  if (smallest->capacity() < buffer.capacity()) *smallest = std::move(buffer);
}

}  // namespace gpuolap::server
