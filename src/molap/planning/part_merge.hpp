#pragma once
// A query split over several devices (molap/gpu/multi_gpu_engine.cu) comes
// back as one part per device, each over the facts that device holds; the
// parts are merged here, on the host, into the query's answer. Plain C++,
// tested without a GPU.
#include <vector>

#include "gpuolap/area_query.hpp"
#include "gpuolap/exact_sum.hpp"

namespace gpuolap {

// One device's answer: its non-empty targets ascending with their values
// of the aggregate — for avg, the sums, with the counts beside them. The
// gpu engine's sums and averages come as exact sums (`sums`, beside the
// targets; the values then unused), so that the parts add up to the bits
// of one device's answer.
struct QueryPart {
  AreaResult result;
  std::vector<double> counts;  // avg only: each target's count
  std::vector<ExactSum> sums;  // sum and avg, when exact: each target's sum on the query's grid
};

// The parts combined per target: sums and counts add, min of the minima,
// max of the maxima, avg as the parts' sums over their counts; exact sums
// add exactly and are rounded once, on `grid`. A target filled in no part
// stays out. Consumes the parts.
AreaResult merge_parts(std::vector<QueryPart>& parts, Aggregate aggregate, const SumGrid& grid = {});

}  // namespace gpuolap
