#include <tbb/blocked_range.h>
#include <tbb/cache_aligned_allocator.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <type_traits>
#include <unordered_map>

#include "cpu_engines.hpp"
#include "molap/planning/map_images.hpp"
#include "molap/planning/target_classes.hpp"

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

// A fact's cell weight in a one-target query: the product, in dimension
// order, of each walked dimension's weight of the fact's base (0 for a base
// without the target). With no walked dimension, 1. Each dimension's
// table, shift and mask are kept side by side, one load a dimension.
class CellWeights {
 public:
  // base_weight[i]: walked dimension dims[i]'s weight per base (kept by
  // the caller while this is used).
  CellWeights(const KeyCodec& codec, const std::vector<size_t>& dims,
              const std::vector<std::vector<double>>& base_weight) {
    for (size_t i = 0; i < dims.size(); ++i) {
      walk_.push_back({base_weight[i].data(), codec.shift(dims[i]), codec.mask(dims[i])});
      for (const double w : base_weight[i])
        if (w != 0.0 && (!std::isfinite(w) || (std::bit_cast<uint64_t>(w) & ((uint64_t{1} << 52) - 1)) != 0 ||
                         (std::bit_cast<uint64_t>(w) >> 52 & 0x7ff) == 0))
          powers_of_two_ = false;
    }
  }
  bool walks() const { return !walk_.empty(); }
  // Every weight 0 or a power of two, so that a value times a cell's
  // weight is exact (CarrySave::add_product adds no error term).
  bool powers_of_two() const { return powers_of_two_; }
  double operator()(uint64_t key) const {
    double w = 1.0;
    for (const Dimension& d : walk_) w *= d.weight[(key >> d.shift) & d.mask];
    return w;
  }

 private:
  struct Dimension {
    const double* weight;  // per base
    int shift;
    uint64_t mask;
  };
  std::vector<Dimension> walk_;
  bool powers_of_two_ = true;
};

// values[begin, end) times their cells' weights (no keys read where
// `weights` walks no dimension; every weight a power of two or 0) added to
// `sum` in carry-save form, and counted (NaN, or a weight of 0: not
// added, not counted). Four terms at a time in vector registers (GCC's and
// Clang's vector extensions): the products and CarrySave::add's double
// additions and integer additions, lane by lane, are the same operations
// as the scalar form's, so the limbs are the same integers. Compiled twice,
// for AVX2 (one 256-bit register a vector) and for the baseline (on
// x86-64, SSE2 pairs), and chosen at run time: on the 2-core VM (one core, 2 M
// values, M1's case) the scalar form with four CarrySave sums took
// 4.7-9.6 ms built for the baseline (the build's own flags), the vector
// form built for AVX2 0.9-2.0 ms, with the VM's other core busy.
using Doubles4 = double __attribute__((vector_size(32)));
using Ints4 = long long __attribute__((vector_size(32)));

[[gnu::always_inline]] inline void add_terms_in_vectors(const double* values, const uint64_t* keys, size_t begin,
                                                        size_t end, const CellWeights& weights, const SumGrid& grid,
                                                        CarrySave& sum, uint64_t& count) {
  const double g = grid.scale, c0 = grid.limb_round[0], c1 = grid.limb_round[1], c2 = grid.limb_round[2];
  const Doubles4 scale = {g, g, g, g}, round0 = {c0, c0, c0, c0}, round1 = {c1, c1, c1, c1},
                 round2 = {c2, c2, c2, c2};
  const Ints4 base0 = __builtin_bit_cast(Ints4, round0), base1 = __builtin_bit_cast(Ints4, round1),
              base2 = __builtin_bit_cast(Ints4, round2);
  const bool weighted = weights.walks();
  Ints4 l0 = {}, l1 = {}, l2 = {}, present = {};
  size_t i = begin;
  for (; i + 4 <= end; i += 4) {
    Doubles4 v;
    std::memcpy(&v, values + i, sizeof v);
    Ints4 has = v == v;  // all ones where v is not NaN
    if (weighted) {
      const Doubles4 w = {weights(keys[i]), weights(keys[i + 1]), weights(keys[i + 2]), weights(keys[i + 3])};
      has &= w != 0.0;
      v *= w;
    }
    present -= has;
    const Doubles4 y = __builtin_bit_cast(Doubles4, __builtin_bit_cast(Ints4, v) & has) * scale;  // else +0.0
    // CarrySave::add, four lanes at once.
    const Doubles4 t2 = y + round2;
    const Doubles4 r1 = y - (t2 - round2);
    const Doubles4 t1 = r1 + round1;
    const Doubles4 r0 = r1 - (t1 - round1);
    const Doubles4 t0 = r0 + round0;
    l2 += __builtin_bit_cast(Ints4, t2) - base2;
    l1 += __builtin_bit_cast(Ints4, t1) - base1;
    l0 += __builtin_bit_cast(Ints4, t0) - base0;
  }
  CarrySave lanes = CarrySave::from_limbs(l0[0] + l0[1] + l0[2] + l0[3], l1[0] + l1[1] + l1[2] + l1[3],
                                          l2[0] + l2[1] + l2[2] + l2[3]);
  uint64_t counted = static_cast<uint64_t>(present[0] + present[1] + present[2] + present[3]);
  for (; i != end; ++i) {
    const double w = weighted ? weights(keys[i]) : 1.0;
    if (!has_value(values[i]) || w == 0.0) continue;
    lanes.add_product(values[i], w, grid);
    ++counted;
  }
  sum.merge(lanes);
  count += counted;
}

#if defined(__x86_64__)
[[gnu::target("avx2")]] void add_terms_avx2(const double* values, const uint64_t* keys, size_t begin, size_t end,
                                            const CellWeights& weights, const SumGrid& grid, CarrySave& sum,
                                            uint64_t& count) {
  add_terms_in_vectors(values, keys, begin, end, weights, grid, sum, count);
}
#endif

void add_terms_baseline(const double* values, const uint64_t* keys, size_t begin, size_t end,
                        const CellWeights& weights, const SumGrid& grid, CarrySave& sum, uint64_t& count) {
  add_terms_in_vectors(values, keys, begin, end, weights, grid, sum, count);
}

void add_terms(const double* values, const uint64_t* keys, size_t begin, size_t end, const CellWeights& weights,
               const SumGrid& grid, CarrySave& sum, uint64_t& count) {
#if defined(__x86_64__)
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2) return add_terms_avx2(values, keys, begin, end, weights, grid, sum, count);
#endif
  add_terms_baseline(values, keys, begin, end, weights, grid, sum, count);
}

// One target (B1, M1): its aggregate is a reduction over the relevant
// pages' values, each times its cell's weight — the product of the walked
// dimensions' one weight, 1 where every dimension is a total (the keys then
// unread) — with only the fields the aggregate needs. Four sums side by side
// break the chain of dependent adds; being exact, they have the same bits
// however the pages are split among the threads.
AreaResult run_one_target(const FactTable& facts, const AggregationMap& map, const AreaQuery& query,
                          const SumGrid& grid) {
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  const bool extremes = query.aggregate == Aggregate::min || query.aggregate == Aggregate::max;
  // Each walked dimension's weight per base, 0 for a base without the
  // target (one element per list: a base has at most one entry; a map's
  // weights are never 0). A cell's weight: their product in dimension order.
  const std::vector<size_t>& dims = map.walked();
  std::vector<std::vector<double>> base_weight;
  for (const size_t d : dims) {
    const DimensionMap& m = map.dimension(d);
    std::vector<double>& w = base_weight.emplace_back(m.offsets.size() - 1, 0.0);
    for (uint32_t b = 0; b + 1 < m.offsets.size(); ++b)
      if (m.relevant(b)) w[b] = m.weights[m.offsets[b]];
  }
  const CellWeights weight_of(map.codec(), dims, base_weight);
  const auto reduce_cells = [&](size_t begin, size_t end, CellAccumulator& acc) {
    if (extremes) {  // min or max: no sum to add
      for (size_t i = begin; i != end; ++i) {
        const double w = !dims.empty() ? weight_of(keys[i]) : 1.0;
        if (w == 0.0 || !has_value(values[i])) continue;
        const double c = w * values[i];
        acc.min = std::min(acc.min, c);
        acc.max = std::max(acc.max, c);
        ++acc.count;
      }
      return;
    }
    // Four independent lanes, so additions of successive facts overlap; in
    // carry-save form where the grid has it (a few double additions a term
    // instead of a shift into 192 bits with carries), read as one exact sum
    // at the end of the range.
    const auto lanes = [&]<typename Sum>(Sum) {
      Sum sums[4];
      uint64_t counts[4] = {0, 0, 0, 0};
      const auto add = [&](Sum& sum, uint64_t& count, size_t i) {
        const double v = values[i];
        if (!has_value(v)) return;
        if (dims.empty()) {
          sum.add(v, grid);
        } else {
          const double w = weight_of(keys[i]);
          if (w == 0.0) return;
          sum.add_product(v, w, grid);
        }
        ++count;
      };
      size_t i = begin;
      for (; i + 4 <= end; i += 4)
        for (size_t lane = 0; lane < 4; ++lane) add(sums[lane], counts[lane], i + lane);
      for (; i != end; ++i) add(sums[0], counts[0], i);
      for (size_t lane = 1; lane < 4; ++lane) {
        sums[0].merge(sums[lane]);
        counts[0] += counts[lane];
      }
      if constexpr (std::is_same_v<Sum, CarrySave>) acc.sum.merge(sums[0].exact(grid));
      else acc.sum.merge(sums[0]);
      acc.count += counts[0];
    };
    if (grid.limb_bits && weight_of.powers_of_two()) {
      CarrySave sum;
      add_terms(values.data(), keys.data(), begin, end, weight_of, grid, sum, acc.count);
      acc.sum.merge(sum.exact(grid));
    } else if (grid.limb_bits) {
      lanes(CarrySave{});
    } else {
      lanes(ExactSum{});
    }
  };
  CellAccumulator total = tbb::parallel_reduce(
      tbb::blocked_range<size_t>(0, facts.page_count(), 4), CellAccumulator{},
      [&](const tbb::blocked_range<size_t>& pages, CellAccumulator acc) {
        for (size_t p = pages.begin(); p != pages.end(); ++p)
          if (page_may_be_relevant(facts, map, p)) reduce_cells(facts.page_begin(p), facts.page_end(p), acc);
        return acc;
      },
      [](CellAccumulator a, const CellAccumulator& b) {
        a.merge(b);
        return a;
      });
  std::vector<std::pair<uint64_t, CellAccumulator>> cells;
  if (total.count > 0) cells.emplace_back(0, total);
  return finish_cells(cells, query.aggregate, grid);
}

// Cache-aligned, so small arrays of different threads never share a line.
template <typename Cell>
using CellArray = std::vector<Cell, tbb::cache_aligned_allocator<Cell>>;
using Cells = CellArray<CellAccumulator>;

// `accumulate(cells, begin, end)` over the relevant pages into an array
// of `size` cells, one array per thread, merged in the order the threads
// come (the sums are exact, so the order changes no bit).
template <typename Cell = CellAccumulator, typename Accumulate>
CellArray<Cell> accumulate_cells(const FactTable& facts, const AggregationMap& map, size_t size,
                                 Accumulate accumulate) {
  auto locals = accumulate_pages<CellArray<Cell>>(facts, map, [&] { return CellArray<Cell>(size); }, accumulate);
  // Combine thread-local arrays, in parallel over cells.
  CellArray<Cell> total(size);
  tbb::parallel_for(tbb::blocked_range<size_t>(0, size), [&](const auto& r) {
    for (const CellArray<Cell>& local : locals)
      for (size_t t = r.begin(); t != r.end(); ++t) total[t].merge(local[t]);
  });
  return total;
}

AreaResult run_dense(const FactTable& facts, const AggregationMap& map, const AreaQuery& query,
                     const SumGrid& grid) {
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  const size_t n_targets = map.target_count();
  const Cells total = accumulate_cells(facts, map, n_targets, [&](Cells& acc, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const double v = values[i];
      if (!has_value(v)) continue;
      map.for_each_target(keys[i], [&](uint64_t t, double w) { acc[t].add(v, w, grid); });
    }
  });
  std::vector<std::pair<uint64_t, CellAccumulator>> cells;
  for (size_t t = 0; t < n_targets; ++t)
    if (total[t].count > 0) cells.emplace_back(t, total[t]);
  return finish_cells(cells, query.aggregate, grid);
}

AreaResult run_hashed(const FactTable& facts, const AggregationMap& map, const AreaQuery& query,
                      const SumGrid& grid) {
  using Local = std::unordered_map<uint64_t, CellAccumulator>;
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  auto locals = accumulate_pages<Local>(
      facts, map, [] { return Local(); },
      [&](Local& acc, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          const double v = values[i];
          if (!has_value(v)) continue;
          map.for_each_target(keys[i], [&](uint64_t t, double w) { acc[t].add(v, w, grid); });
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
  return finish_cells(cells, query.aggregate, grid);
}

// A class tuple's smallest and largest value, kept only for MIN and MAX.
template <bool Kept>
struct TupleExtremes {
  void add(double) {}
  void merge(const TupleExtremes&) {}
};
template <>
struct TupleExtremes<true> {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  void add(double value) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  void merge(const TupleExtremes& o) {
    if (o.min < min) min = o.min;
    if (o.max > max) max = o.max;
  }
};

// A class tuple's raw values in phase 1 of two-phase aggregation: the sum
// in carry-save form where the grid has it (a value costs a few double
// additions, not a shift into 192 bits with carries), else an ExactSum;
// the count; the extremes where the query asks for them (Extremes). A
// SUM's cell is then 32 bytes, not 48: M3's 28 K cells a thread fit the
// caches better (M3 over machines 0.05 on the 2-core VM: aggregate 15.0-
// 30.2 ms, median 19.1, with them; 13.0-22.6, median 15.8, without; runs
// interleaved).
template <typename Sum, bool Extremes>
struct TupleCell {
  Sum sum;
  uint64_t count = 0;
  [[no_unique_address]] TupleExtremes<Extremes> extremes;

  void add(double value, const SumGrid& g) {
    sum.add(value, g);
    extremes.add(value);
    ++count;
  }
  void merge(const TupleCell& o) {
    sum.merge(o.sum);
    extremes.merge(o.extremes);
    count += o.count;
  }
  ExactSum exact(const SumGrid& g) const {
    if constexpr (std::is_same_v<Sum, CarrySave>) return sum.exact(g);
    else return sum;
  }
};

// Two-phase aggregation, as the gpu engine does it
// (molap/planning/target_classes.hpp): phase 1 makes one update per fact,
// into its tuple of base classes (thread-local dense arrays); phase 2
// expands each filled tuple to its targets with one weight per (tuple,
// target) — w·Σv, the count, w·min or w·max (swapped for a negative w).
// Walking every target of every fact cost B2 17.9 updates per fact.
template <typename Sum, bool Extremes>
AreaResult run_two_phase(const FactTable& facts, const AggregationMap& map, const AreaQuery& query,
                         const gpu::TargetClasses& classes, const SumGrid& grid) {
  // A class tuple's raw values, before any weight: `raw` below.
  const auto keys = facts.keys();
  const auto values = facts.values(query.measure);
  const size_t k = map.dimension_count();
  const KeyCodec& codec = map.codec();
  // Only dimensions with more than one class, or bases of no class, are
  // read: one class over every base puts each fact in class 0 (M2 reads 2
  // of its 6 dimensions).
  std::vector<size_t> read;
  for (size_t d = 0; d < k; ++d) {
    const gpu::DimensionClasses& c = classes.dims[d];
    if (c.count() != 1 || std::find(c.class_of_base.begin(), c.class_of_base.end(), gpu::kNoClass) != c.class_of_base.end())
      read.push_back(d);
  }
  // Per read dimension, each base's part of a class tuple's number: its
  // class times the dimension's stride, or kNoTuple where the base has no
  // class (its facts reach no target). A fact's tuple is the sum of its
  // bases' parts, none if any part has kNoTuple's bit; one load per
  // dimension where the walk through the classes' vectors took several
  // dependent ones (M3 over machines 0.05 on the 2-core VM: phase 1 about
  // 16.5 ms before, 11.5-12.4 after, in pairs of runs).
  constexpr uint64_t kNoTuple = uint64_t{1} << 63;  // class tuples are below 2^22
  struct ReadDimension {
    const uint64_t* part;  // per base
    int shift;
    uint64_t mask;
  };
  std::vector<std::vector<uint64_t>> parts(read.size());
  std::vector<ReadDimension> readers;
  for (size_t r = 0; r < read.size(); ++r) {
    const size_t d = read[r];
    for (const uint32_t c : classes.dims[d].class_of_base)
      parts[r].push_back(c == gpu::kNoClass ? kNoTuple : uint64_t{c} * classes.strides[d]);
    readers.push_back({parts[r].data(), codec.shift(d), codec.mask(d)});
  }
  using Cell = TupleCell<Sum, Extremes>;
  using Raw = CellArray<Cell>;
  const Raw raw =
      accumulate_cells<Cell>(facts, map, classes.cells, [&](Raw& acc, size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
          const double v = values[i];
          if (!has_value(v)) continue;
          const uint64_t key = keys[i];
          uint64_t tuple = 0, any = 0;
          for (const ReadDimension& r : readers) {
            const uint64_t part = r.part[(key >> r.shift) & r.mask];
            tuple += part;
            any |= part;
          }
          if (!(any & kNoTuple)) acc[tuple].add(v, grid);
        }
      });
  // Phase 2, on this thread: the tuples are few (at most 2^22), and their
  // (tuple, target) pairs far fewer than the facts' contributions.
  const bool dense = map.target_count() <= CpuParallelEngine::kDenseTargetLimit;
  std::vector<CellAccumulator> dense_cells(dense ? map.target_count() : 0);
  std::unordered_map<uint64_t, CellAccumulator> sparse_cells;
  std::vector<std::span<const uint32_t>> positions(k);
  std::vector<std::span<const double>> weights(k);
  std::vector<size_t> at(k);
  for (uint64_t tuple = 0; tuple < classes.cells; ++tuple) {
    const Cell& cell = raw[tuple];
    if (cell.count == 0) continue;
    const ExactSum sum = cell.exact(grid);
    for (size_t d = 0; d < k; ++d) {
      const uint32_t c = static_cast<uint32_t>(tuple / classes.strides[d] % classes.dims[d].count());
      const uint32_t base = classes.dims[d].representative[c];
      positions[d] = map.dimension(d).positions_of(base);
      weights[d] = map.dimension(d).weights_of(base);
      at[d] = 0;
    }
    // Odometer over the tuple's targets, last dimension fastest, weights
    // multiplied in dimension order as for_each_target does.
    for (;;) {
      uint64_t target = 0;
      double w = 1.0;
      for (size_t d = 0; d < k; ++d) {
        target += uint64_t{positions[d][at[d]]} * map.stride(d);
        w *= weights[d][at[d]];
      }
      CellAccumulator& acc = dense ? dense_cells[target] : sparse_cells[target];
      acc.sum.add_scaled(sum, w, grid);
      acc.count += cell.count;
      if constexpr (Extremes) {
        const double low = w > 0 ? w * cell.extremes.min : w * cell.extremes.max;
        const double high = w > 0 ? w * cell.extremes.max : w * cell.extremes.min;
        acc.min = std::min(acc.min, low);
        acc.max = std::max(acc.max, high);
      }
      size_t d = k;
      while (d > 0 && ++at[d - 1] == positions[d - 1].size()) at[--d] = 0;
      if (d == 0) break;
    }
  }
  std::vector<std::pair<uint64_t, CellAccumulator>> cells;
  if (dense) {
    for (uint64_t t = 0; t < dense_cells.size(); ++t)
      if (dense_cells[t].count > 0) cells.emplace_back(t, dense_cells[t]);
  } else {
    cells.assign(sparse_cells.begin(), sparse_cells.end());
    tbb::parallel_sort(cells.begin(), cells.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  return finish_cells(cells, query.aggregate, grid);
}

}  // namespace

AreaResult CpuParallelEngine::run(const FactTable& facts, const AggregationMap& map,
                                  const AreaQuery& query) {
  const SumGrid grid = map.sum_grid(facts, query.measure);
  // Two phases where the gpu engine would take them: the direct map gives
  // some base more than one target, and the class tuples are few beside
  // the facts (a quarter of them, at most 2^22). Not where the sums' grid
  // rounds the terms: a tuple's sum would be rounded apart from its facts'.
  if (!gpu::direct_map_is_lean(map) && grid.exact) {
    const uint64_t max_cells = std::min<uint64_t>(uint64_t{1} << 22, std::max<uint64_t>(1024, facts.size() / 4));
    const gpu::TargetClasses classes = gpu::target_classes(map, max_cells);
    if (classes.cells > 0) {
      plan_ = "two-phase: " + std::to_string(classes.cells) + " class tuples, then expanded to the targets";
      const bool extremes = query.aggregate == Aggregate::min || query.aggregate == Aggregate::max;
      if (extremes)
        return grid.limb_bits ? run_two_phase<CarrySave, true>(facts, map, query, classes, grid)
                              : run_two_phase<ExactSum, true>(facts, map, query, classes, grid);
      return grid.limb_bits ? run_two_phase<CarrySave, false>(facts, map, query, classes, grid)
                            : run_two_phase<ExactSum, false>(facts, map, query, classes, grid);
    }
  }
  if (map.target_count() == 1) {
    plan_ = !map.walked().empty() ? "one target: a reduction over the values times their cells' weights"
                                    : "every dimension a weight-1 total: one reduction over the values";
    return run_one_target(facts, map, query, grid);
  }
  plan_ = map.target_count() <= kDenseTargetLimit ? "direct, a dense array of the targets per thread"
                                                  : "direct, a hash map of the targets per thread";
  if (map.target_count() <= kDenseTargetLimit) return run_dense(facts, map, query, grid);
  return run_hashed(facts, map, query, grid);
}

}  // namespace gpuolap
