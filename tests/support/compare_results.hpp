#pragma once
// Test-side wrapper of compare_results(): every engine's answer must be the
// oracle's to the bit (sums are exact: gpuolap/exact_sum.hpp); a failure
// names the context.
#include <gtest/gtest.h>

#include <string>

#include "molap/result_check.hpp"

namespace gpuolap::testing {

inline void expect_same_bits(const AreaResult& oracle, const AreaResult& other, const std::string& context) {
  EXPECT_EQ(compare_results(oracle, other), "") << context;
}

}  // namespace gpuolap::testing
