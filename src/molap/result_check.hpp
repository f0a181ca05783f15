#pragma once
// Comparing engines' answers, by the house rule: the same non-empty cells;
// counts, mins and maxes exactly; sums and averages within 1e-9 of the sum of
// |contributions| of the cell. The CPU engines' sums are exact (exact_sum.hpp)
// and equal to the bit (their tests say so); the gpu engine still adds
// doubles in an order of its own atomics.
#include <string>

#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/engine.hpp"

namespace gpuolap {

// The sum of |w * v| over each non-empty target's contributions. The facts
// go through cpu-parallel `slice_facts` at a time, so that the copy of their
// magnitudes stays small beside a cube of hundreds of GB.
AreaResult contribution_magnitudes(const FactTable& facts, const AggregationMap& map, size_t measure,
                                   size_t slice_facts = size_t{1} << 28);

// "" when `other` agrees with `oracle`, else the first difference in words.
std::string compare_results(const AreaResult& oracle, const AreaResult& other, Aggregate aggregate,
                            const AreaResult& magnitudes);

}  // namespace gpuolap
