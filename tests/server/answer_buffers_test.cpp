// The memory of large answers is kept for the next one: a buffer given back
// comes out of take() empty but with its capacity; small and huge ones are
// not kept, and no more than kKept are.
#include <gtest/gtest.h>

#include <string>

#include "server/answer_buffers.hpp"

namespace gpuolap::server {
namespace {

TEST(AnswerBuffers, KeepTheMemoryOfLargeAnswersOnly) {
  AnswerBuffers buffers;
  EXPECT_EQ(buffers.take().capacity(), std::string().capacity());  // nothing kept yet

  std::string answer(3 << 20, 'x');
  const char* memory = answer.data();
  buffers.give_back(std::move(answer));
  std::string again = buffers.take();
  EXPECT_TRUE(again.empty());
  EXPECT_GE(again.capacity(), std::size_t{3} << 20);
  EXPECT_EQ(again.data(), memory) << "the same memory, its pages already there";
  EXPECT_EQ(buffers.take().capacity(), std::string().capacity()) << "a buffer is taken once";

  buffers.give_back(std::string(100, 'x'));                                // too small to matter
  buffers.give_back(std::string(AnswerBuffers::kLargest + 1, 'x'));        // too large to hold on to
  EXPECT_EQ(buffers.take().capacity(), std::string().capacity());
}

TEST(AnswerBuffers, KeepAtMostKeptTheLargestFirst) {
  AnswerBuffers buffers;
  for (std::size_t i = 0; i < AnswerBuffers::kKept + 4; ++i)
    buffers.give_back(std::string(AnswerBuffers::kSmallest * (i + 1), 'x'));
  // The largest come out first; the smallest four were let go.
  std::size_t previous = AnswerBuffers::kLargest;
  for (std::size_t i = 0; i < AnswerBuffers::kKept; ++i) {
    const std::string b = buffers.take();
    EXPECT_LE(b.capacity(), previous);
    EXPECT_GE(b.capacity(), AnswerBuffers::kSmallest * 5);
    previous = b.capacity();
  }
  EXPECT_EQ(buffers.take().capacity(), std::string().capacity());
}

}  // namespace
}  // namespace gpuolap::server
