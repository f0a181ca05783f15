// The CPU forms of cube creation: the paper's sequential algorithm (fig. 1)
// and its parallel one over a partition plan of the sorted input (fig. 4;
// unsorted rows with a small finest key space are scattered into key ranges
// instead of sorted), whose coarser sets come from the lattice (each from
// its smallest computed parent).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <numeric>
#include <unordered_map>

#include "cube/cube_algorithms.hpp"

namespace gpuolap::cube {
namespace {

using groupby::AggregateState;

// The cells of one set as they fill: a dense array of states over the
// set's whole key space, or the filled keys in a hash map.
class SetAccumulator {
 public:
  SetAccumulator(const CodedTable& coded, SetMask mask, std::size_t expected_rows)
      : coded_(coded), aggregates_(coded.slots.size()), layout_(layout_of(coded, mask)),
        dense_(dense_fits(layout_.cells, expected_rows)) {
    if (dense_) {
      states_.resize(layout_.cells * aggregates_);
      for (std::size_t c = 0; c < layout_.cells; ++c) reset(c);
      seen_.assign(layout_.cells, 0);
    }
  }
  const Layout& layout() const { return layout_; }

  // The states of the cell of `key`, made (with the identities) when new.
  AggregateState* cell(std::uint64_t key) {
    std::size_t c = key;
    if (dense_) {
      seen_[c] = 1;
    } else {
      const auto [it, added] = index_.try_emplace(key, keys_.size());
      if (added) {
        keys_.push_back(key);
        states_.resize(states_.size() + aggregates_);
        reset(keys_.size() - 1);
      }
      c = it->second;
    }
    return &states_[c * aggregates_];
  }

  // The filled cells in key order.
  SetCells finish() {
    std::vector<std::uint64_t> keys;
    std::vector<AggregateState> states;
    if (dense_) {
      for (std::size_t c = 0; c < layout_.cells; ++c)
        if (seen_[c]) {
          keys.push_back(c);
          states.insert(states.end(), states_.begin() + c * aggregates_, states_.begin() + (c + 1) * aggregates_);
        }
    } else {
      std::vector<std::size_t> order(keys_.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys_[a] < keys_[b]; });
      for (std::size_t c : order) {
        keys.push_back(keys_[c]);
        states.insert(states.end(), states_.begin() + c * aggregates_, states_.begin() + (c + 1) * aggregates_);
      }
    }
    return cells_from_states(coded_, std::move(keys), states);
  }

 private:
  void reset(std::size_t c) {
    for (std::size_t a = 0; a < aggregates_; ++a) states_[c * aggregates_ + a] = groupby::identity_state(coded_.slots[a]);
  }

  const CodedTable& coded_;
  std::size_t aggregates_;
  Layout layout_;
  bool dense_;
  std::vector<AggregateState> states_;
  std::vector<std::uint8_t> seen_;
  std::unordered_map<std::uint64_t, std::size_t> index_;
  std::vector<std::uint64_t> keys_;
};

// Cells of the finest set (every grouping column) in key order, as states
// laid out cell by cell.
struct FinestCells {
  std::vector<std::uint64_t> keys;
  std::vector<AggregateState> states;
};

// Cells of consecutive key ranges, one after the other.
FinestCells concatenate(const std::vector<FinestCells>& parts) {
  FinestCells out;
  for (const FinestCells& r : parts) {
    out.keys.insert(out.keys.end(), r.keys.begin(), r.keys.end());
    out.states.insert(out.states.end(), r.states.begin(), r.states.end());
  }
  return out;
}

// The rows in key order: `order` (empty: the rows themselves) and their
// keys in that order.
struct RowOrder {
  std::vector<std::uint32_t> order;
  std::vector<std::uint64_t> keys;  // empty: coded.keys
};

// The cells of the rows at sorted positions [begin, end), one run of equal
// keys after the other.
FinestCells aggregate_runs(const CodedTable& coded, const RowOrder& rows, std::size_t begin, std::size_t end) {
  const std::size_t aggregates = coded.slots.size();
  const std::uint64_t* keys = rows.keys.empty() ? coded.keys.data() : rows.keys.data();
  FinestCells out;
  for (std::size_t i = begin; i < end; ++i) {
    const std::size_t row = rows.order.empty() ? i : rows.order[i];
    const std::uint64_t key = keys[i];
    if (out.keys.empty() || out.keys.back() != key) {
      out.keys.push_back(key);
      for (std::size_t a = 0; a < aggregates; ++a) out.states.push_back(groupby::identity_state(coded.slots[a]));
    }
    AggregateState* s = &out.states[out.states.size() - aggregates];
    for (std::size_t a = 0; a < aggregates; ++a) groupby::add_row(coded.slots[a], s[a], row);
  }
  return out;
}

// Set `mask`'s cells from the finest cells: each finest cell's states
// merged into the cell of its projected key.
SetCells derive_from_finest(const CodedTable& coded, const FinestCells& finest, SetMask mask) {
  SetAccumulator set(coded, mask, finest.keys.size());
  const Projection p = projection(coded, coded.finest, set.layout());
  const std::size_t aggregates = coded.slots.size();
  for (std::size_t c = 0; c < finest.keys.size(); ++c) {
    AggregateState* s = set.cell(p(finest.keys[c]));
    for (std::size_t a = 0; a < aggregates; ++a) groupby::merge_state(coded.slots[a], s[a], finest.states[c * aggregates + a]);
  }
  return set.finish();
}

// Set `mask`'s cells from those of a computed set that contains it
// (`parent`, of set `parent_mask`): each parent cell's states merged into
// the cell of its projected key.
SetCells derive_from_set(const CodedTable& coded, const SetCells& parent, SetMask parent_mask, SetMask mask) {
  SetAccumulator set(coded, mask, parent.keys.size());
  const Projection p = projection(coded, layout_of(coded, parent_mask), set.layout());
  const std::size_t aggregates = coded.slots.size();
  for (std::size_t c = 0; c < parent.keys.size(); ++c) {
    AggregateState* s = set.cell(p(parent.keys[c]));
    for (std::size_t a = 0; a < aggregates; ++a) {
      AggregateState cell;
      cell.bits = parent.bits[a][c];
      cell.high = parent.high[a].empty() ? 0 : parent.high[a][c];
      cell.count = parent.count[a].empty() ? 0 : parent.count[a][c];
      groupby::merge_state(coded.slots[a], s[a], cell);
    }
  }
  return set.finish();
}

// The rows in the order of their keys (and the keys so sorted), rows of
// equal keys in row order: a least-significant-digit radix sort over the
// keys' significant bits, 8 a pass, each pass counting digits per block of
// rows and scattering stably in parallel. (A comparison sort of (key, row) pairs took 247 ms for 5 M
// rows on 2 cores.)
RowOrder sorted_rows(const CodedTable& coded) {
  const std::size_t rows = coded.rows;
  std::vector<std::uint64_t> keys(coded.keys), next_keys(rows);
  std::vector<std::uint32_t> order(rows), next_order(rows);
  tbb::parallel_for(std::size_t{0}, rows, [&](std::size_t r) { order[r] = static_cast<std::uint32_t>(r); });
  const int bits = coded.finest.cells <= 1 ? 0 : std::bit_width(coded.finest.cells - 1);
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t blocks = (rows + kBlock - 1) / kBlock;
  std::vector<std::size_t> at(blocks * 256);
  for (int shift = 0; shift < bits; shift += 8) {
    std::fill(at.begin(), at.end(), 0);
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
      std::size_t* count = &at[b * 256];
      for (std::size_t r = b * kBlock; r < std::min(rows, (b + 1) * kBlock); ++r) ++count[(keys[r] >> shift) & 255];
    });
    // Digit by digit, block by block: where each block's rows of a digit go.
    for (std::size_t digit = 0, offset = 0; digit < 256; ++digit)
      for (std::size_t b = 0; b < blocks; ++b) {
        const std::size_t n = at[b * 256 + digit];
        at[b * 256 + digit] = offset;
        offset += n;
      }
    tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
      std::size_t* next = &at[b * 256];
      for (std::size_t r = b * kBlock; r < std::min(rows, (b + 1) * kBlock); ++r) {
        const std::size_t to = next[(keys[r] >> shift) & 255]++;
        next_keys[to] = keys[r];
        next_order[to] = order[r];
      }
    });
    keys.swap(next_keys);
    order.swap(next_order);
  }
  return {std::move(order), std::move(keys)};
}

// The finest cells of unsorted rows whose finest key space fits a dense
// array: the rows scattered, stably, with their keys and measure values,
// into ranges of 2^14 keys (one counting pass and one scatter, where a radix
// sort makes three of each), then each range's rows accumulated by one task
// through a dense array of the range's keys, small enough to stay in cache,
// and its filled cells listed in key order. The ranges are the partition
// plan's, cut at intersection borders, without sorting the rows inside
// them; the values travel with the keys so that the accumulation reads them
// in order (read through row numbers, a cache miss a row, it took 590 ms of
// 25 M rows on 2 cores).
FinestCells finest_by_key_ranges(const CodedTable& coded) {
  constexpr int kRangeBits = 14;
  constexpr std::size_t kWidth = std::size_t{1} << kRangeBits;
  const std::size_t rows = coded.rows, aggregates = coded.slots.size();
  const std::size_t ranges = static_cast<std::size_t>((coded.finest.cells + kWidth - 1) >> kRangeBits);
  // At most 256 blocks of rows, so that the counters stay few.
  const std::size_t block = std::max<std::size_t>(std::size_t{1} << 16, (rows + 255) / 256);
  const std::size_t blocks = (rows + block - 1) / block;
  std::vector<std::size_t> at(blocks * ranges, 0);
  const std::uint64_t* keys = coded.keys.data();
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::size_t* count = &at[b * ranges];
    for (std::size_t r = b * block; r < std::min(rows, (b + 1) * block); ++r) ++count[keys[r] >> kRangeBits];
  });
  std::vector<std::size_t> begin(ranges + 1, 0);
  for (std::size_t range = 0, offset = 0; range < ranges; ++range) {
    begin[range] = offset;
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::size_t n = at[b * ranges + range];
      at[b * ranges + range] = offset;
      offset += n;
    }
    begin[range + 1] = offset;
  }
  // The scattered keys and measure columns, left uninitialized (zeroing
  // them first took as long as the scatter), and slots over the columns.
  const auto& measures = coded.measures.values;
  struct Scattered {
    std::size_t width = 8;
    const std::uint8_t* from = nullptr;
    const std::uint8_t* from_nulls = nullptr;
    std::unique_ptr<std::uint8_t[]> values, nulls;
  };
  std::vector<Scattered> columns(measures.size());
  for (std::size_t v = 0; v < measures.size(); ++v) {
    Scattered& c = columns[v];
    c.width = measures[v].type == groupby::ValueType::Int32 ? 4 : 8;
    c.from = static_cast<const std::uint8_t*>(measures[v].values);
    c.from_nulls = measures[v].nulls;
    c.values = std::make_unique_for_overwrite<std::uint8_t[]>(rows * c.width);
    if (c.from_nulls) c.nulls = std::make_unique_for_overwrite<std::uint8_t[]>(rows);
  }
  auto range_keys = std::make_unique_for_overwrite<std::uint64_t[]>(rows);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::size_t* next = &at[b * ranges];
    for (std::size_t r = b * block; r < std::min(rows, (b + 1) * block); ++r) {
      const std::size_t to = next[keys[r] >> kRangeBits]++;
      range_keys[to] = keys[r];
      for (Scattered& c : columns) {
        if (c.width == 8) std::memcpy(c.values.get() + to * 8, c.from + r * 8, 8);
        else std::memcpy(c.values.get() + to * 4, c.from + r * 4, 4);
        if (c.from_nulls) c.nulls[to] = c.from_nulls[r];
      }
    }
  });
  std::vector<groupby::AggregateSlot> slots = coded.slots;
  for (std::size_t a = 0; a < aggregates; ++a) {
    const int v = coded.measures.aggregates[a].value;
    if (v < 0) continue;  // COUNT(*)
    slots[a].values = columns[v].values.get();
    slots[a].nulls = columns[v].nulls.get();
  }

  std::vector<FinestCells> cells(ranges);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, ranges, 1), [&](const tbb::blocked_range<std::size_t>& rs) {
    std::vector<AggregateState> states(kWidth * aggregates);
    std::vector<std::uint8_t> seen(kWidth);
    for (std::size_t range = rs.begin(); range < rs.end(); ++range) {
      if (begin[range] == begin[range + 1]) continue;
      for (std::size_t c = 0; c < kWidth; ++c)
        for (std::size_t a = 0; a < aggregates; ++a) states[c * aggregates + a] = groupby::identity_state(slots[a]);
      std::fill(seen.begin(), seen.end(), 0);
      const std::uint64_t base = std::uint64_t{range} << kRangeBits;
      for (std::size_t i = begin[range]; i < begin[range + 1]; ++i) {
        const std::size_t c = range_keys[i] - base;
        seen[c] = 1;
        for (std::size_t a = 0; a < aggregates; ++a) groupby::add_row(slots[a], states[c * aggregates + a], i);
      }
      FinestCells& out = cells[range];
      for (std::size_t c = 0; c < kWidth; ++c)
        if (seen[c]) {
          out.keys.push_back(base + c);
          out.states.insert(out.states.end(), states.begin() + c * aggregates, states.begin() + (c + 1) * aggregates);
        }
    }
  });
  return concatenate(cells);
}

// The paper's partition plan (defParallelPlan): the rows sorted by
// intersection (a table stored so needs no sort), cut into one range per
// thread, each cut moved to the next intersection border so that no two
// threads share an intersection, then each range's runs.
FinestCells finest_by_partition_plan(const CodedTable& coded, int concurrency, HostStages& clock) {
  RowOrder order;
  if (!coded.sorted) {
    clock.start("sort (radix)");
    order = sorted_rows(coded);
  }
  auto key_at = [&](std::size_t i) { return order.keys.empty() ? coded.keys[i] : order.keys[i]; };
  clock.start("finest cells (partition plan)");
  const std::size_t parts = static_cast<std::size_t>(std::max(1, concurrency));
  std::vector<std::size_t> cuts{0};
  for (std::size_t t = 1; t < parts; ++t) {
    std::size_t c = std::max(cuts.back(), coded.rows * t / parts);
    while (c > 0 && c < coded.rows && key_at(c) == key_at(c - 1)) ++c;
    cuts.push_back(c);
  }
  cuts.push_back(coded.rows);
  std::vector<FinestCells> ranges(parts);
  tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t t) { ranges[t] = aggregate_runs(coded, order, cuts[t], cuts[t + 1]); });
  return concatenate(ranges);
}

}  // namespace

std::vector<SetCells> build_cpu_sequential(const CodedTable& coded, const CubeSpec& spec, StageTimes& stages, bool timing) {
  HostStages clock(stages, timing);
  clock.start("aggregate (one thread)");
  std::vector<SetAccumulator> sets;
  std::vector<Projection> projections;
  for (SetMask mask : spec.sets) {
    sets.emplace_back(coded, mask, coded.rows);
    projections.push_back(projection(coded, coded.finest, sets.back().layout()));
  }
  const std::size_t aggregates = coded.slots.size();
  for (std::size_t row = 0; row < coded.rows; ++row)
    for (std::size_t s = 0; s < sets.size(); ++s) {
      AggregateState* st = sets[s].cell(projections[s](coded.keys[row]));
      for (std::size_t a = 0; a < aggregates; ++a) groupby::add_row(coded.slots[a], st[a], row);
    }
  clock.start("cells in key order");
  std::vector<SetCells> out;
  for (SetAccumulator& set : sets) out.push_back(set.finish());
  return out;
}

std::vector<SetCells> build_cpu_partitioned(const CodedTable& coded, const CubeSpec& spec, int threads,
                                            StageTimes& stages, bool timing) {
  HostStages clock(stages, timing);
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  std::vector<SetCells> out(spec.sets.size());
  arena.execute([&] {
    FinestCells finest;
    if (!coded.sorted && dense_fits(coded.finest.cells, coded.rows)) {
      clock.start("finest cells (rows by key range, dense)");
      finest = finest_by_key_ranges(coded);
    } else {
      finest = finest_by_partition_plan(coded, arena.max_concurrency(), clock);
    }

    // Each requested set from the computed set with the fewest cells that
    // contains it (the lattice): the finest cells, or a set made before it.
    // Sets go by falling column count, those of one count at once, a task
    // each. (From the finest cells alone, the 11 coarser sets of the
    // sales-flat cube read 11 x 1.42 M cells; from their parents, fewer
    // than a third of that.)
    clock.start("sets from their smallest computed parents");
    struct Computed {
      SetMask mask;
      const SetCells* cells;  // null: the finest cells
      std::size_t size;
    };
    std::vector<Computed> computed{{coded.finest.mask, nullptr, finest.keys.size()}};
    std::vector<std::size_t> by_columns(spec.sets.size());
    std::iota(by_columns.begin(), by_columns.end(), 0);
    std::stable_sort(by_columns.begin(), by_columns.end(), [&](std::size_t a, std::size_t b) {
      return std::popcount(spec.sets[a]) > std::popcount(spec.sets[b]);
    });
    for (std::size_t begin = 0; begin < by_columns.size();) {
      std::size_t end = begin;
      while (end < by_columns.size() && std::popcount(spec.sets[by_columns[end]]) == std::popcount(spec.sets[by_columns[begin]])) ++end;
      tbb::parallel_for(begin, end, [&](std::size_t k) {
        const std::size_t s = by_columns[k];
        const SetMask mask = spec.sets[s];
        const Computed* parent = nullptr;
        for (const Computed& c : computed)
          if ((c.mask & mask) == mask && (!parent || c.size < parent->size)) parent = &c;
        if (parent->mask == mask) out[s] = cells_from_states(coded, finest.keys, finest.states);
        else if (!parent->cells) out[s] = derive_from_finest(coded, finest, mask);
        else out[s] = derive_from_set(coded, *parent->cells, parent->mask, mask);
      });
      for (std::size_t k = begin; k < end; ++k) computed.push_back({spec.sets[by_columns[k]], &out[by_columns[k]], out[by_columns[k]].keys.size()});
      begin = end;
    }
  });
  return out;
}

}  // namespace gpuolap::cube
