#include "molap/result_check.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>

#include "cpu_engines.hpp"
#include "molap/planning/part_merge.hpp"

namespace gpuolap {

AreaResult contribution_magnitudes(const FactTable& facts, const AggregationMap& map, size_t measure,
                                   size_t slice_facts) {
  slice_facts = std::max<size_t>(slice_facts, 1);
  const AggregationMap absolute_map = map.with_absolute_weights();
  const auto keys = facts.keys();
  const auto values = facts.values(measure);
  // Each slice's keys and magnitudes copied in parallel blocks (at 14.6 G
  // facts a serial copy of 55 slices did not finish in 5 minutes), summed by
  // cpu-parallel; the slices' sums then add up per target, as the parts of
  // a query over several GPUs do.
  std::vector<QueryPart> parts;
  size_t begin = 0;
  do {
    const size_t end = std::min(facts.size(), begin + slice_facts);
    std::vector<uint64_t> slice_keys(end - begin);
    std::vector<double> magnitudes(end - begin);
    tbb::parallel_for(tbb::blocked_range<size_t>(begin, end, size_t{1} << 16), [&](const tbb::blocked_range<size_t>& r) {
      for (size_t i = r.begin(); i < r.end(); ++i) {
        slice_keys[i - begin] = keys[i];
        magnitudes[i - begin] = std::abs(values[i]);
      }
    });
    const FactTable slice(map.codec(), std::move(slice_keys), {std::move(magnitudes)}, facts.page_size());
    parts.push_back({CpuParallelEngine().run(slice, absolute_map, AreaQuery{0, Aggregate::sum, {}}), {}});
    // A few parts at a time (the merge looks at every part's head per
    // target): 55 slices of a wide area kept whole would hold 55 answers.
    if (parts.size() == 8) parts.push_back({merge_parts(parts, Aggregate::sum), {}});
    begin = end;
  } while (begin < facts.size());
  return parts.size() == 1 ? std::move(parts.front().result) : merge_parts(parts, Aggregate::sum);
}

std::string compare_results(const AreaResult& oracle, const AreaResult& other, Aggregate aggregate,
                            const AreaResult& magnitudes) {
  if (oracle.targets.size() != other.targets.size())
    return fmt::format("{} non-empty cells, the oracle has {}", other.targets.size(), oracle.targets.size());
  const bool exact = aggregate == Aggregate::count || aggregate == Aggregate::min || aggregate == Aggregate::max;
  for (size_t i = 0; i < oracle.targets.size(); ++i) {
    if (oracle.targets[i] != other.targets[i])
      return fmt::format("cell {} is target {}, the oracle's is {}", i, other.targets[i], oracle.targets[i]);
    const double want = oracle.values[i], got = other.values[i];
    double tolerance = 0.0;
    if (!exact) {
      auto it = std::lower_bound(magnitudes.targets.begin(), magnitudes.targets.end(), oracle.targets[i]);
      if (it != magnitudes.targets.end() && *it == oracle.targets[i])
        tolerance = 1e-9 * magnitudes.values[static_cast<size_t>(it - magnitudes.targets.begin())];
    }
    if (!(std::abs(want - got) <= tolerance))
      return fmt::format("target {}: {:.17g}, the oracle says {:.17g} (tolerance {:.3g})", oracle.targets[i], got,
                         want, tolerance);
  }
  return "";
}

}  // namespace gpuolap
