#include "molap/planning/part_merge.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace gpuolap {

namespace {

double combine(double a, double b, Aggregate aggregate) {
  switch (aggregate) {
    case Aggregate::min: return std::min(a, b);
    case Aggregate::max: return std::max(a, b);
    default: return a + b;  // sum, count, and avg's sums
  }
}

// Two parts merged in one linear pass over their ascending targets (a heap
// over all parts took 0.135 ms for M3's two parts of 14,000 targets).
QueryPart merge_two(const QueryPart& a, const QueryPart& b, Aggregate aggregate) {
  const bool avg = aggregate == Aggregate::avg;
  const auto& ta = a.result.targets;
  const auto& tb = b.result.targets;
  QueryPart out;
  out.result.targets.reserve(ta.size() + tb.size());
  out.result.values.reserve(ta.size() + tb.size());
  if (avg) out.counts.reserve(ta.size() + tb.size());
  size_t i = 0, j = 0;
  while (i < ta.size() || j < tb.size()) {
    const bool from_a = j == tb.size() || (i < ta.size() && ta[i] <= tb[j]);
    const bool both = i < ta.size() && j < tb.size() && ta[i] == tb[j];
    if (both) {
      out.result.targets.push_back(ta[i]);
      out.result.values.push_back(combine(a.result.values[i], b.result.values[j], aggregate));
      if (avg) out.counts.push_back(a.counts[i] + b.counts[j]);
      ++i, ++j;
    } else if (from_a) {
      out.result.targets.push_back(ta[i]);
      out.result.values.push_back(a.result.values[i]);
      if (avg) out.counts.push_back(a.counts[i]);
      ++i;
    } else {
      out.result.targets.push_back(tb[j]);
      out.result.values.push_back(b.result.values[j]);
      if (avg) out.counts.push_back(b.counts[j]);
      ++j;
    }
  }
  return out;
}

}  // namespace

AreaResult merge_parts(std::vector<QueryPart>& parts, Aggregate aggregate) {
  const bool avg = aggregate == Aggregate::avg;
  for (const QueryPart& p : parts)
    if (p.result.targets.size() != p.result.values.size() || (avg && p.counts.size() != p.result.targets.size()))
      throw std::logic_error("merge_parts: a part's targets, values and counts differ in length");
  if (parts.empty()) return {};
  // Pairwise, in rounds: the parts are few (one per device).
  while (parts.size() > 1) {
    std::vector<QueryPart> next;
    for (size_t k = 0; k + 1 < parts.size(); k += 2) next.push_back(merge_two(parts[k], parts[k + 1], aggregate));
    if (parts.size() % 2) next.push_back(std::move(parts.back()));
    parts = std::move(next);
  }
  AreaResult out = std::move(parts.front().result);
  if (avg)
    for (size_t t = 0; t < out.values.size(); ++t) out.values[t] /= parts.front().counts[t];
  return out;
}

}  // namespace gpuolap
