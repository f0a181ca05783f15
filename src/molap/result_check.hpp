#pragma once
// Comparing engines' answers, by the house rule: the same non-empty cells,
// each value the same bits. Every engine adds its sums exactly
// (gpuolap/exact_sum.hpp), so no tolerance is needed or given.
#include <string>

#include "gpuolap/engine.hpp"

namespace gpuolap {

// "" when `other` equals `oracle` to the bit, else the first difference in words.
std::string compare_results(const AreaResult& oracle, const AreaResult& other);

}  // namespace gpuolap
