#pragma once
// Compares an engine's answer with the oracle's (cpu-serial), by the house
// rule: the same non-empty cells; counts, mins and maxes exactly; sums and
// averages within 1e-9 relative to the sum of |contributions| of the cell.
#include <gtest/gtest.h>

#include <cmath>
#include <unordered_map>

#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/engine.hpp"

namespace gpuolap::testing {

// Sum of |w * v| over each target cell's contributions.
inline std::unordered_map<uint64_t, double> absolute_sums(const FactTable& facts, const AggregationMap& map,
                                                          size_t measure) {
  std::unordered_map<uint64_t, double> out;
  const auto keys = facts.keys();
  const auto values = facts.values(measure);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!has_value(values[i])) continue;
    map.for_each_target(keys[i], [&](uint64_t t, double w) { out[t] += std::abs(w * values[i]); });
  }
  return out;
}

inline void expect_same_answer(const AreaResult& oracle, const AreaResult& other, const AreaQuery& query,
                               const std::unordered_map<uint64_t, double>& abs_sums, const std::string& context) {
  ASSERT_EQ(oracle.targets, other.targets) << context;
  ASSERT_EQ(oracle.values.size(), other.values.size()) << context;
  for (size_t i = 0; i < oracle.values.size(); ++i) {
    const double want = oracle.values[i], got = other.values[i];
    switch (query.aggregate) {
      case Aggregate::count:
      case Aggregate::min:
      case Aggregate::max:
        EXPECT_EQ(want, got) << context << " target " << oracle.targets[i];
        break;
      case Aggregate::sum:
      case Aggregate::avg: {
        double tolerance = 1e-9 * abs_sums.at(oracle.targets[i]);
        EXPECT_NEAR(want, got, tolerance) << context << " target " << oracle.targets[i];
        break;
      }
    }
  }
}

}  // namespace gpuolap::testing
