// The generators' parallel key sort against std::sort, with its cut-off
// lowered so that 3 M keys take the bucketed path, on inputs that load its
// buckets unevenly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "generate/fact_sampler.hpp"

namespace gpuolap::generate_detail {
namespace {

void expect_sorted_like_std(std::vector<uint64_t> keys) {
  std::vector<uint64_t> want = keys;
  std::sort(want.begin(), want.end());
  parallel_sort_keys(keys, size_t{1} << 20);
  EXPECT_EQ(keys, want);
}

constexpr size_t kKeys = 3'000'017;  // past the cut, and no multiple of the chunks

TEST(ParallelSortKeys, RandomKeysOverTheWholeRange) {
  std::vector<uint64_t> keys(kKeys);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = mix(1, i);
  keys[7] = 0;
  keys[8] = ~uint64_t{0};
  expect_sorted_like_std(keys);
}

TEST(ParallelSortKeys, SortedRunsAsTheStrataLeaveThem) {
  std::vector<uint64_t> keys(kKeys);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = mix(2, i) >> 20;
  for (size_t run = 0; run < keys.size(); run += 10'000)
    std::sort(keys.begin() + run, keys.begin() + std::min(keys.size(), run + 10'000));
  expect_sorted_like_std(keys);
}

TEST(ParallelSortKeys, MostKeysInOneBucketAndRepeatedKeys) {
  std::vector<uint64_t> keys(kKeys);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i % 100 == 0 ? mix(3, i) : 1'000 + mix(3, i) % 50;
  expect_sorted_like_std(keys);
}

TEST(ParallelSortKeys, AFewKeysFarFromTheRest) {
  std::vector<uint64_t> keys(kKeys);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i % 100 == 0 ? mix(4, i) : mix(4, i) >> 24;
  expect_sorted_like_std(keys);
}

TEST(ParallelSortKeys, BelowTheCutOff) {
  std::vector<uint64_t> keys(1000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = mix(5, i);
  std::vector<uint64_t> want = keys;
  std::sort(want.begin(), want.end());
  parallel_sort_keys(keys);
  EXPECT_EQ(keys, want);
}

TEST(ParallelSortKeys, EveryKeyEqual) { expect_sorted_like_std(std::vector<uint64_t>(kKeys, 42)); }

TEST(ParallelSortKeys, SmallInputs) {
  expect_sorted_like_std({});
  expect_sorted_like_std({3, 1, 2});
}

}  // namespace
}  // namespace gpuolap::generate_detail
