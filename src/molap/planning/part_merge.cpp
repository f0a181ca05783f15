#include "molap/planning/part_merge.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace gpuolap {

namespace {

struct Add {
  double operator()(double a, double b) const { return a + b; }  // sum, count, and avg's sums
};
struct Min {
  double operator()(double a, double b) const { return std::min(a, b); }
};
struct Max {
  double operator()(double a, double b) const { return std::max(a, b); }
};

// One pass over every part at once. The parts are few (one per device), so
// the smallest head is found by looking at each; the heads live in a local
// array (an exhausted part's head is UINT64_MAX, past every target but the
// largest possible one, which `at` tells apart). Merging the parts in
// pairwise rounds wrote every target once per round: 0.158 ms for B3's 4
// parts of 17,460 targets on the 4-H200 host; bench/multi_gpu/
// part_merge_bench.cpp times both shapes.
template <class Combine, bool kAvg, bool kExact>
AreaResult merge_heads(const std::vector<QueryPart>& parts, Combine combine, const SumGrid& grid) {
  const size_t k = parts.size();
  std::vector<const uint64_t*> targets(k);
  std::vector<const double*> values(k), counts(k);
  std::vector<const ExactSum*> sums(k);
  std::vector<size_t> at(k, 0), size(k);
  std::vector<uint64_t> head(k);
  size_t largest = 0;
  for (size_t p = 0; p < k; ++p) {
    targets[p] = parts[p].result.targets.data();
    values[p] = parts[p].result.values.data();
    sums[p] = kExact ? parts[p].sums.data() : nullptr;
    counts[p] = kAvg ? parts[p].counts.data() : nullptr;
    size[p] = parts[p].result.targets.size();
    head[p] = size[p] ? targets[p][0] : UINT64_MAX;
    largest = std::max(largest, size[p]);
  }
  // At least the largest part's targets come out, and about that many when
  // the parts hold the same targets. A fresh page costs a fault when first
  // written, so the output is not reserved larger than that.
  AreaResult out;
  out.targets.reserve(largest);
  out.values.reserve(largest);
  for (;;) {
    uint64_t target = UINT64_MAX;
    for (size_t p = 0; p < k; ++p) target = std::min(target, head[p]);
    if (target == UINT64_MAX) {
      bool left = false;
      for (size_t p = 0; p < k; ++p) left = left || at[p] < size[p];
      if (!left) break;
    }
    double value = 0, count = 0;
    ExactSum sum;
    bool first = true;
    for (size_t p = 0; p < k; ++p) {
      if (head[p] != target || at[p] == size[p]) continue;
      const size_t i = at[p]++;
      if constexpr (kExact) sum.merge(sums[p][i]);
      else value = first ? values[p][i] : combine(value, values[p][i]);
      if constexpr (kAvg) count += counts[p][i];
      first = false;
      head[p] = at[p] < size[p] ? targets[p][at[p]] : UINT64_MAX;
    }
    if constexpr (kExact) value = sum.to_double(grid);
    out.targets.push_back(target);
    out.values.push_back(kAvg ? value / count : value);
  }
  return out;
}

}  // namespace

AreaResult merge_parts(std::vector<QueryPart>& parts, Aggregate aggregate, const SumGrid& grid) {
  const bool avg = aggregate == Aggregate::avg;
  bool exact = false;
  for (const QueryPart& p : parts) exact = exact || !p.sums.empty();
  for (const QueryPart& p : parts)
    if (p.result.targets.size() != p.result.values.size() || (avg && p.counts.size() != p.result.targets.size()) ||
        (exact && p.sums.size() != p.result.targets.size()))
      throw std::logic_error("merge_parts: a part's targets, values, counts and sums differ in length");
  AreaResult out = parts.empty()                   ? AreaResult{}
                   : avg && exact                  ? merge_heads<Add, true, true>(parts, Add{}, grid)
                   : avg                           ? merge_heads<Add, true, false>(parts, Add{}, grid)
                   : aggregate == Aggregate::min   ? merge_heads<Min, false, false>(parts, Min{}, grid)
                   : aggregate == Aggregate::max   ? merge_heads<Max, false, false>(parts, Max{}, grid)
                   : exact                         ? merge_heads<Add, false, true>(parts, Add{}, grid)
                                                   : merge_heads<Add, false, false>(parts, Add{}, grid);
  parts.clear();
  return out;
}

}  // namespace gpuolap
