#pragma once
// Test-side wrapper of compare_results(): a failure names the context.
#include <gtest/gtest.h>

#include "molap/result_check.hpp"

namespace gpuolap::testing {

inline void expect_same_answer(const AreaResult& oracle, const AreaResult& other, const AreaQuery& query,
                               const FactTable& facts, const AggregationMap& map, const std::string& context) {
  EXPECT_EQ(compare_results(oracle, other, query.aggregate, contribution_magnitudes(facts, map, query.measure)), "")
      << context;
}

}  // namespace gpuolap::testing
