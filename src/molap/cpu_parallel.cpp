#include <tbb/blocked_range.h>
#include <tbb/cache_aligned_allocator.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <unordered_map>

#include "cpu_engines.hpp"

namespace gpuolap {

namespace {

// Whether a page may hold a relevant cell: every dimension must have a
// relevant base id within the page's [min, max] range.
bool page_may_be_relevant(const FactTable& facts, const AggregationMap& map, size_t page) {
  for (size_t d = 0; d < map.dimension_count(); ++d)
    if (!map.dimension(d).any_relevant(facts.page_min(page, d), facts.page_max(page, d))) return false;
  return true;
}

// Runs `accumulate(local, begin, end)` over the relevant pages, one
// thread-local accumulator per worker.
template <typename Local, typename Make, typename Accumulate>
tbb::enumerable_thread_specific<Local> accumulate_pages(const FactTable& facts, const AggregationMap& map,
                                                        Make make, Accumulate accumulate) {
  tbb::enumerable_thread_specific<Local> locals(make);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, facts.page_count()), [&](const auto& pages) {
    Local& local = locals.local();
    for (size_t p = pages.begin(); p != pages.end(); ++p)
      if (page_may_be_relevant(facts, map, p)) accumulate(local, facts.page_begin(p), facts.page_end(p));
  });
  return locals;
}

AreaResult run_dense(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) {
  // Cache-aligned, so small arrays of different threads never share a line.
  using Local = std::vector<CellAccumulator, tbb::cache_aligned_allocator<CellAccumulator>>;
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  const size_t n_targets = map.target_count();
  auto locals = accumulate_pages<Local>(
      facts, map, [&] { return Local(n_targets); },
      [&](Local& acc, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          const double v = values[i];
          if (!has_value(v)) continue;
          map.for_each_target(keys[i], [&](uint64_t t, double w) { acc[t].add(w * v); });
        }
      });
  // Combine thread-local arrays, in parallel over targets.
  Local total(n_targets);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, n_targets), [&](const auto& r) {
    for (const Local& local : locals)
      for (size_t t = r.begin(); t != r.end(); ++t) total[t].merge(local[t]);
  });
  std::vector<std::pair<uint64_t, CellAccumulator>> cells;
  for (size_t t = 0; t < n_targets; ++t)
    if (total[t].count > 0) cells.emplace_back(t, total[t]);
  return finish_cells(cells, query.aggregate);
}

AreaResult run_hashed(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) {
  using Local = std::unordered_map<uint64_t, CellAccumulator>;
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  auto locals = accumulate_pages<Local>(
      facts, map, [] { return Local(); },
      [&](Local& acc, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          const double v = values[i];
          if (!has_value(v)) continue;
          map.for_each_target(keys[i], [&](uint64_t t, double w) { acc[t].add(w * v); });
        }
      });
  Local total;
  for (Local& local : locals) {
    if (total.empty()) {
      total.swap(local);
      continue;
    }
    for (const auto& [t, acc] : local) total[t].merge(acc);
  }
  std::vector<std::pair<uint64_t, CellAccumulator>> cells(total.begin(), total.end());
  tbb::parallel_sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return finish_cells(cells, query.aggregate);
}

}  // namespace

AreaResult CpuParallelEngine::run(const FactTable& facts, const AggregationMap& map,
                                  const AreaQuery& query) {
  if (map.target_count() <= kDenseTargetLimit) return run_dense(facts, map, query);
  return run_hashed(facts, map, query);
}

}  // namespace gpuolap
