#pragma once
// Test-side wrapper of compare_results(): a failure names the context.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>

#include "molap/result_check.hpp"

namespace gpuolap::testing {

inline void expect_same_answer(const AreaResult& oracle, const AreaResult& other, const AreaQuery& query,
                               const FactTable& facts, const AggregationMap& map, const std::string& context) {
  EXPECT_EQ(compare_results(oracle, other, query.aggregate, contribution_magnitudes(facts, map, query.measure)), "")
      << context;
}

// The CPU engines add sums exactly (exact_sum.hpp): their answers must be
// the oracle's to the bit, not within a tolerance.
inline void expect_same_bits(const AreaResult& oracle, const AreaResult& other, const std::string& context) {
  ASSERT_EQ(other.targets, oracle.targets) << context;
  ASSERT_EQ(other.values.size(), oracle.values.size()) << context;
  for (size_t i = 0; i < oracle.values.size(); ++i)
    ASSERT_EQ(std::bit_cast<uint64_t>(other.values[i]), std::bit_cast<uint64_t>(oracle.values[i]))
        << context << ": target " << oracle.targets[i] << " is " << other.values[i] << ", the oracle's "
        << oracle.values[i];
}

}  // namespace gpuolap::testing
