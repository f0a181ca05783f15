// The placement optimizer (placement.hpp): chunk by chunk, greedy, then the
// shortest relocation sequence (BFS), then a new copy, then a conflict.
//
// Blocks of rows are independent but for the copies they share, so the
// blocks are spread over threads. A thread reads a value's copies without a
// lock (a count published with release after the copy is written); new
// copies are made under one mutex, which also keeps the budget. With one
// thread the blocks run in order and the placement is the same every run.
#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>

#include "gpuolap/error.hpp"
#include "groupby/shared_memory/placement.hpp"

namespace gpuolap::groupby {

std::string_view placement_goal_name(PlacementGoal goal) { return goal == PlacementGoal::Read ? "read" : "write"; }

PlacementGoal parse_placement_goal(std::string_view name) {
  if (name == "read") return PlacementGoal::Read;
  if (name == "write") return PlacementGoal::Write;
  throw InputError(fmt::format("unknown placement goal '{}': valid are read, write", name));
}

std::string describe(const LaunchShape& s) {
  return fmt::format("{} threads a block, {} rows a block, {}-byte words", s.block_threads, s.rows_per_block,
                     s.word_bytes);
}

bool same_chunks(const LaunchShape& a, const LaunchShape& b) {
  return a.rows_per_block == b.rows_per_block && a.word_bytes == b.word_bytes;
}

void check_shape(const LaunchShape& s) {
  if (s.block_threads < 32 || s.block_threads > 1024 || s.block_threads % 32 != 0)
    throw InputError(fmt::format("block threads must be a multiple of 32 from 32 to 1024, not {}", s.block_threads));
  if (s.rows_per_block == 0 || s.rows_per_block % static_cast<std::uint64_t>(s.block_threads) != 0)
    throw InputError(fmt::format("rows a block must be a positive multiple of the block's {} threads, not {}",
                                 s.block_threads, s.rows_per_block));
  if (s.word_bytes != 4 && s.word_bytes != 8)
    throw InputError(fmt::format("a slot's word is 4 or 8 bytes, not {}", s.word_bytes));
}

namespace {

using Clock = std::chrono::steady_clock;

// Each value's copies. Copy 0 of v is slot v; the others are appended, under
// the writer's mutex, to an array that grows by doubling (a value holds
// memory for the copies it has, not for the most it may get). A grown
// array replaces the old one, which is kept until the end: a reader that
// loaded the old pointer still reads valid copies below the count it
// loaded. Readers load the count (acquire), then the array (acquire); the
// writer publishes the array before the count.
class Copies {
 public:
  Copies(std::uint32_t values, std::uint32_t cap) : count_(values), extra_(values), capacity_(values, 0), cap_(cap) {
    for (auto& c : count_) c.store(1, std::memory_order_relaxed);
    for (auto& e : extra_) e.store(nullptr, std::memory_order_relaxed);
  }
  std::uint32_t count(std::uint32_t v) const { return count_[v].load(std::memory_order_acquire); }
  std::uint32_t slot(std::uint32_t v, std::uint32_t i) const {
    return i == 0 ? v : extra_[v].load(std::memory_order_acquire)[i - 1];
  }
  bool full(std::uint32_t v) const { return count_[v].load(std::memory_order_relaxed) >= cap_; }
  // Under the writer's mutex, and only when !full(v).
  void append(std::uint32_t v, std::uint32_t slot) {
    const std::uint32_t n = count_[v].load(std::memory_order_relaxed);
    std::uint32_t* array = extra_[v].load(std::memory_order_relaxed);
    if (n - 1 == capacity_[v]) {
      const std::uint32_t grown = std::min(cap_ - 1, std::max<std::uint32_t>(4, 2 * capacity_[v]));
      auto bigger = std::make_unique<std::uint32_t[]>(grown);
      if (array) std::copy(array, array + capacity_[v], bigger.get());
      array = bigger.get();
      arrays_.push_back(std::move(bigger));  // the old ones stay for readers that hold them
      capacity_[v] = grown;
      extra_[v].store(array, std::memory_order_release);
    }
    array[n - 1] = slot;
    count_[v].store(n + 1, std::memory_order_release);
  }

 private:
  std::vector<std::atomic<std::uint32_t>> count_;
  std::vector<std::atomic<std::uint32_t*>> extra_;
  std::vector<std::uint32_t> capacity_;  // the writer's
  std::vector<std::unique_ptr<std::uint32_t[]>> arrays_;
  std::uint32_t cap_;
};

// The slot array being laid out: B banks, base rows for copies 0, and per
// bank the extra rows used. Changed only under `mutex`.
struct Layout {
  std::mutex mutex;
  std::uint32_t banks = 32;
  std::uint64_t base_rows = 0;
  std::uint64_t max_slots = 0;  // the budget; 0: none
  std::vector<std::uint64_t> extra_rows;  // per bank
  std::uint64_t rows = 0;                 // base_rows + max(extra_rows)
  std::vector<std::uint32_t> slot_value;
  std::atomic<std::uint64_t> slots{0};  // rows * banks, readable without the mutex
  // Every bank has used the budget's rows: no copy can be made any more,
  // which threads read without taking the mutex (once the budget is spent,
  // every chunk that cannot be placed would otherwise queue on it).
  std::atomic<bool> full{false};
  std::uint32_t banks_full = 0;
};

// One thread's state across the blocks it places.
struct Scratch {
  std::vector<std::uint64_t> stamp;   // slot -> the last chunk (this thread's count) that used it
  std::vector<std::uint32_t> cursor;  // value -> the copy to try first (least recently used)
  std::uint64_t chunk = 0;            // this thread's chunks so far
  std::uint64_t refusals = 0;         // copies the budget refused
};

constexpr int kMaxItems = kChunkRows;

class ChunkPlacer {
 public:
  ChunkPlacer(const PlacementOptions& o, Copies& copies, Layout& layout, std::uint32_t cardinality)
      : o_(o), copies_(copies), layout_(layout), banks_(layout.banks), cardinality_(cardinality) {}

  // Places the rows [begin, end) of one block.
  void place_block(const std::uint32_t* codes, std::uint32_t* out, std::uint64_t begin, std::uint64_t end,
                   Scratch& s) {
    if (s.cursor.empty()) s.cursor.assign(cardinality_, 0);
    const std::uint64_t block_first = s.chunk + 1;
    for (std::uint64_t r = begin; r < end; r += kChunkRows) {
      ++s.chunk;
      floor_ = o_.window > 0 ? std::max(block_first, s.chunk > static_cast<std::uint64_t>(o_.window)
                                                         ? s.chunk - o_.window
                                                         : std::uint64_t{1})
                             : s.chunk;
      place_chunk(codes + r, out + r, static_cast<int>(std::min<std::uint64_t>(kChunkRows, end - r)), s);
    }
  }

 private:
  struct Item {
    std::uint32_t value;
    int bank;           // -1: not placed
    std::uint32_t slot;
    std::uint32_t copy;  // index of the copy among the value's
  };

  void place_chunk(const std::uint32_t* codes, std::uint32_t* out, int lanes, Scratch& s) {
    s_ = &s;
    used_count_ = 0;
    const int per_phase = static_cast<int>(banks_);
    for (int first = 0; first < lanes; first += per_phase) {
      const int last = std::min(lanes, first + per_phase);
      place_phase(codes, out, first, last);
    }
    for (int lane = 0; lane < lanes; ++lane) {
      s.stamp[out[lane]] = s.chunk;
    }
  }

  // Calls visit(copy, slot) on v's copies, least recently used first (from
  // v's cursor, round the list), until it returns true; whether one did.
  template <typename Visit>
  bool each_copy(std::uint32_t v, Visit&& visit) {
    const std::uint32_t n = copies_.count(v);
    std::uint32_t c = s_->cursor[v] % n;
    for (std::uint32_t k = 0; k < n; ++k, c = c + 1 == n ? 0 : c + 1)
      if (visit(c, copies_.slot(v, c))) return true;
    return false;
  }

  bool feasible(std::uint32_t slot, bool respect_window) {
    if (slot >= s_->stamp.size()) s_->stamp.resize(std::max<std::size_t>(slot + 1, s_->stamp.size() * 2), 0);
    if (o_.goal == PlacementGoal::Read) return true;
    if (respect_window && s_->stamp[slot] >= floor_) return false;
    for (int i = 0; i < used_count_; ++i)
      if (used_[i] == slot) return false;  // the other half-warp's slot: a value conflict
    return true;
  }

  void assign(int item, int bank, std::uint32_t slot, std::uint32_t copy) {
    items_[item].bank = bank;
    items_[item].slot = slot;
    items_[item].copy = copy;
    owner_[bank] = item;
  }

  // Value conflicts only (PlacementOptions::banks false): each row takes
  // its value's least recently used copy that no other row of the chunk or
  // of the window uses, a new copy in the emptiest bank where none is free,
  // past the budget one outside the chunk only, last any.
  void place_values_only(const std::uint32_t* codes, std::uint32_t* out, int first, int last) {
    for (int lane = first; lane < last; ++lane) {
      const std::uint32_t v = codes[lane];
      // The copies this row searches: those it sees now (another thread's
      // newer ones have not been through feasible(), which sizes the stamps).
      const std::uint32_t n = copies_.count(v);
      std::uint32_t chosen = 0;
      auto free_copy = [&](bool respect_window) {
        return each_copy(v, [&](std::uint32_t c, std::uint32_t slot) { return feasible(slot, respect_window) && (chosen = c, true); });
      };
      bool found = free_copy(true);
      if (!found) {
        owner_.fill(-1);  // every bank may take the new copy
        items_[0] = Item{v, -1, 0, 0};
        found = new_copy(0);
        if (found) chosen = items_[0].copy;
      }
      if (!found && o_.window > 0) found = free_copy(false);
      if (!found) chosen = s_->cursor[v] % n;  // a conflict, past the budget
      out[lane] = copies_.slot(v, chosen);
      s_->cursor[v] = chosen + 1;
      used_[used_count_++] = out[lane];
    }
  }

  void place_phase(const std::uint32_t* codes, std::uint32_t* out, int first, int last) {
    if (!o_.banks && o_.goal == PlacementGoal::Write) return place_values_only(codes, out, first, last);
    // Items: every lane for writes; each distinct value once for reads (its
    // other lanes read the same slot, a broadcast).
    n_items_ = 0;
    std::array<int, kMaxItems> item_of_lane{};
    for (int lane = first; lane < last; ++lane) {
      const std::uint32_t v = codes[lane];
      int item = -1;
      if (o_.goal == PlacementGoal::Read)
        for (int i = 0; i < n_items_; ++i)
          if (items_[i].value == v) item = i;
      if (item < 0) {
        item = n_items_++;
        items_[item] = Item{v, -1, 0, 0};
      }
      item_of_lane[lane - first] = item;
    }
    owner_.fill(-1);
    // Greedy: each item's first free, feasible copy, least recently used first.
    for (int i = 0; i < n_items_; ++i)
      each_copy(items_[i].value, [&](std::uint32_t c, std::uint32_t slot) {
        const int bank = static_cast<int>(slot % banks_);
        if (owner_[bank] >= 0 || !feasible(slot, true)) return false;
        assign(i, bank, slot, c);
        return true;
      });
    int failed[kMaxItems];
    int n_failed = 0;
    for (int i = 0; i < n_items_; ++i) {
      if (items_[i].bank >= 0) continue;
      if (relocate(i, true) || new_copy(i)) continue;
      if (o_.goal == PlacementGoal::Write && o_.window > 0 && relocate(i, false)) continue;
      failed[n_failed++] = i;
    }
    // Past the budget: the copy whose bank is least loaded, accepting the
    // conflict (its rows take more than one round).
    std::array<int, 32> load{};
    for (int i = 0; i < n_items_; ++i)
      if (items_[i].bank >= 0) load[items_[i].bank] = 1;
    for (int f = 0; f < n_failed; ++f) {
      Item& it = items_[failed[f]];
      const std::uint32_t n = copies_.count(it.value);
      std::uint32_t best = 0;
      int best_load = 1 << 30;
      for (std::uint32_t c = 0; c < n; ++c) {
        const std::uint32_t slot = copies_.slot(it.value, c);
        const int l = load[slot % banks_] * 2 + (feasible(slot, false) ? 0 : 1);
        if (l < best_load) best_load = l, best = c;
      }
      it.copy = best;
      it.slot = copies_.slot(it.value, best);
      ++load[it.slot % banks_];
    }
    for (int lane = first; lane < last; ++lane) {
      const Item& it = items_[item_of_lane[lane - first]];
      out[lane] = it.slot;
      s_->cursor[it.value] = it.copy + 1;
    }
    if (o_.goal == PlacementGoal::Write)
      for (int i = 0; i < n_items_; ++i) used_[used_count_++] = items_[i].slot;
  }

  // The shortest sequence of moves (BFS over banks) that frees a bank for
  // item `start`: each step moves the bank's item to another of its copies.
  bool relocate(int start, bool respect_window) {
    std::uint32_t visited = 0;
    std::array<int, 32> via_item{};
    std::array<std::uint32_t, 32> via_slot{}, via_copy{};
    int queue[kMaxItems];
    std::uint64_t queued = std::uint64_t{1} << start;
    int head = 0, tail = 0;
    queue[tail++] = start;
    while (head < tail) {
      const int u = queue[head++];
      int free_bank = -1;
      each_copy(items_[u].value, [&](std::uint32_t c, std::uint32_t slot) {
        const int bank = static_cast<int>(slot % banks_);
        if ((visited >> bank) & 1u || bank == items_[u].bank || !feasible(slot, respect_window)) return false;
        visited |= 1u << bank;
        via_item[bank] = u;
        via_slot[bank] = slot;
        via_copy[bank] = c;
        if (owner_[bank] < 0) {
          free_bank = bank;
          return true;
        }
        const int w = owner_[bank];
        if (!((queued >> w) & 1u)) {
          queued |= std::uint64_t{1} << w;
          queue[tail++] = w;
        }
        return false;
      });
      if (free_bank < 0) continue;
      // Walk back: each item on the path takes the bank it was reached
      // through; the one that started has no bank to give up.
      for (int b = free_bank;;) {
        const int item = via_item[b];
        const int old = items_[item].bank;
        assign(item, b, via_slot[b], via_copy[b]);
        if (old < 0) break;
        b = old;
      }
      return true;
    }
    return false;
  }

  // A new copy of the item's value in an empty bank of this phase: the one
  // with the fewest copies so far (the array stays a rectangle), ties taken
  // from a position that rotates with the chunk.
  bool new_copy(int item) {
    const std::uint32_t v = items_[item].value;
    if (layout_.full.load(std::memory_order_relaxed) || copies_.full(v)) {
      ++s_->refusals;
      return false;
    }
    std::lock_guard lock(layout_.mutex);
    if (copies_.full(v)) {  // another thread may have filled it meanwhile
      ++s_->refusals;
      return false;
    }
    int best = -1;
    for (std::uint32_t k = 0; k < banks_; ++k) {
      const int b = static_cast<int>((s_->chunk + k) % banks_);
      if (owner_[b] >= 0) continue;
      if (best < 0 || layout_.extra_rows[b] < layout_.extra_rows[best]) best = b;
    }
    if (best < 0) return false;
    const std::uint64_t row = layout_.base_rows + layout_.extra_rows[best];
    const std::uint64_t slot = row * banks_ + static_cast<std::uint64_t>(best);
    if ((layout_.max_slots != 0 && (row + 1) * banks_ > layout_.max_slots) || slot >= kNoValue) {
      ++s_->refusals;
      return false;
    }
    ++layout_.extra_rows[best];
    if (layout_.max_slots != 0 && (row + 2) * banks_ > layout_.max_slots && ++layout_.banks_full == banks_)
      layout_.full.store(true, std::memory_order_relaxed);
    const std::uint64_t rows = std::max(layout_.rows, row + 1);
    layout_.rows = rows;
    if (layout_.slot_value.size() < rows * banks_) layout_.slot_value.resize(rows * banks_, kNoValue);
    layout_.slot_value[slot] = v;
    layout_.slots.store(rows * banks_, std::memory_order_release);
    const std::uint32_t c = copies_.count(v);
    copies_.append(v, static_cast<std::uint32_t>(slot));
    feasible(static_cast<std::uint32_t>(slot), false);  // grows the stamps
    assign(item, best, static_cast<std::uint32_t>(slot), c);
    return true;
  }

  const PlacementOptions& o_;
  Copies& copies_;
  Layout& layout_;
  std::uint32_t banks_;
  std::uint32_t cardinality_;
  Scratch* s_ = nullptr;
  std::uint64_t floor_ = 0;  // a write avoids slots stamped at or after this chunk
  std::array<Item, kMaxItems> items_{};
  int n_items_ = 0;
  std::array<int, 32> owner_{};          // bank -> item, -1: empty
  std::array<std::uint32_t, kChunkRows> used_{};  // slots the chunk's earlier half-warp wrote
  int used_count_ = 0;
};

}  // namespace

Placement optimize_placement(const std::vector<std::uint32_t>& codes, std::uint32_t cardinality,
                             const PlacementOptions& o) {
  check_shape(o.shape);
  if (cardinality < 1 || cardinality > (1u << 24))
    throw InputError(fmt::format("the column's cardinality must be from 1 to 2^24, not {}", cardinality));
  if (!(o.budget == 0 || (o.budget >= 1 && o.budget <= 1e6)))
    throw InputError(fmt::format("the budget is copies per value on average, at least 1 (0: unbounded), not {}",
                                 o.budget));
  if (o.window < 0 || o.window > 1024) throw InputError(fmt::format("the window must be from 0 to 1,024 chunks, not {}", o.window));
  for (std::size_t r = 0; r < codes.size(); ++r)
    if (codes[r] >= cardinality)
      throw InputError(fmt::format("row {}: value {} is not a code below the cardinality {}", r + 1, codes[r], cardinality));

  const auto started = Clock::now();
  Placement p;
  p.goal = o.goal;
  p.shape = o.shape;
  p.budget = o.budget;
  p.window = o.goal == PlacementGoal::Write ? o.window : 0;
  p.cardinality = cardinality;
  PlacementOptions opts = o;
  opts.window = p.window;

  Layout layout;
  layout.banks = static_cast<std::uint32_t>(p.banks());
  layout.base_rows = (cardinality + layout.banks - 1) / layout.banks;
  layout.rows = layout.base_rows;
  layout.extra_rows.assign(layout.banks, 0);
  layout.max_slots = o.budget == 0 ? 0 : static_cast<std::uint64_t>(std::floor(o.budget * cardinality));
  layout.slot_value.assign(layout.rows * layout.banks, kNoValue);
  for (std::uint32_t v = 0; v < cardinality; ++v) layout.slot_value[v] = v;
  layout.slots = layout.rows * layout.banks;
  layout.full = layout.max_slots != 0 && (layout.base_rows + 1) * layout.banks > layout.max_slots;
  // Copies a value can use: reads need at most one per bank; a write's new
  // copy goes to a bank where every copy of the value is taken (by the
  // window or the other half-warp), at most 2 x window + 2 of them.
  const std::uint32_t cap =
      o.goal == PlacementGoal::Read ? layout.banks : static_cast<std::uint32_t>(32 * (p.window + 2) + 32);
  Copies copies(cardinality, cap);

  p.column.assign(codes.size(), 0);
  const std::uint64_t rows = codes.size();
  const std::uint64_t per_block = o.shape.rows_per_block;
  const std::uint64_t blocks = (rows + per_block - 1) / per_block;
  const int threads = o.threads > 0 ? o.threads : tbb::this_task_arena::max_concurrency();
  tbb::enumerable_thread_specific<Scratch> scratch;
  tbb::task_arena arena(threads);
  arena.execute([&] {
    auto place = [&](std::uint64_t b) {
      ChunkPlacer placer(opts, copies, layout, cardinality);
      Scratch& s = scratch.local();
      if (s.stamp.size() < layout.slots.load(std::memory_order_acquire))
        s.stamp.resize(layout.slots.load(std::memory_order_acquire), 0);
      placer.place_block(codes.data(), p.column.data(), b * per_block, std::min(rows, (b + 1) * per_block), s);
    };
    if (threads == 1) {
      for (std::uint64_t b = 0; b < blocks; ++b) place(b);
    } else {
      tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, blocks, 1), [&](const auto& range) {
        for (std::uint64_t b = range.begin(); b < range.end(); ++b) place(b);
      });
    }
  });
  p.slot_value = std::move(layout.slot_value);
  p.slot_value.resize(layout.rows * layout.banks, kNoValue);
  p.stats.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  p.stats.threads = threads;
  for (const Scratch& s : scratch) p.stats.budget_refusals += s.refusals;
  p.stats.slots = p.slot_value.size();
  for (std::uint32_t v = 0; v < cardinality; ++v) {
    const std::uint32_t n = copies.count(v);
    p.stats.replicated_values += n - 1;
    p.stats.max_copies = std::max(p.stats.max_copies, n);
  }
  p.stats.copies_per_value = static_cast<double>(cardinality + p.stats.replicated_values) / cardinality;
  std::vector<std::uint32_t> original(codes);
  p.stats.before = chunk_stats(original, o.shape, p.window);
  p.stats.after = chunk_stats(p.column, o.shape, p.window);
  p.stats.chunks = (rows + kChunkRows - 1) / kChunkRows;
  return p;
}

ChunkStats chunk_stats(const std::vector<std::uint32_t>& column, const LaunchShape& shape, int window) {
  check_shape(shape);
  const std::uint32_t banks = static_cast<std::uint32_t>(128 / shape.word_bytes);
  const std::uint64_t rows = column.size();
  const std::uint64_t per_block = shape.rows_per_block;
  const std::uint64_t blocks = (rows + per_block - 1) / per_block;
  std::uint32_t max_slot = 0;
  for (std::uint32_t s : column) max_slot = std::max(max_slot, s);
  struct Sums {
    double banks = 0, read = 0, write = 0;
    std::uint64_t read_conflicted = 0, write_conflicted = 0, window = 0;
    std::vector<std::uint64_t> stamp;
    std::uint64_t chunk = 0;
  };
  tbb::enumerable_thread_specific<Sums> sums;
  tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, blocks, 1), [&](const auto& range) {
    Sums& t = sums.local();
    if (t.stamp.empty()) t.stamp.assign(std::uint64_t{max_slot} + 1, 0);
    for (std::uint64_t b = range.begin(); b < range.end(); ++b) {
      const std::uint64_t first_chunk = t.chunk + 1;
      const std::uint64_t end = std::min(rows, (b + 1) * per_block);
      for (std::uint64_t r = b * per_block; r < end; r += kChunkRows) {
        ++t.chunk;
        const std::uint64_t floor =
            window > 0 ? std::max(first_chunk, t.chunk > static_cast<std::uint64_t>(window) ? t.chunk - window : 1)
                       : t.chunk;
        const int lanes = static_cast<int>(std::min<std::uint64_t>(kChunkRows, end - r));
        std::uint32_t touched = 0;
        int rounds_read = 0, rounds_write = 0, wavefronts = 0;
        for (int first = 0; first < lanes; first += static_cast<int>(banks)) {
          ++wavefronts;
          const int last = std::min<int>(lanes, first + static_cast<int>(banks));
          std::array<int, 32> lanes_in{}, distinct_in{};
          for (int l = first; l < last; ++l) {
            const std::uint32_t s = column[r + l];
            const std::uint32_t bank = s % banks;
            touched |= 1u << bank;
            ++lanes_in[bank];
            bool seen = false;
            for (int k = first; k < l && !seen; ++k) seen = column[r + k] == s;
            if (!seen) ++distinct_in[bank];
          }
          rounds_read += *std::max_element(distinct_in.begin(), distinct_in.end());
          rounds_write += *std::max_element(lanes_in.begin(), lanes_in.end());
        }
        // A slot written by both half-warps of an 8-byte chunk is a value
        // conflict the per-wavefront count does not see.
        if (banks == 16 && lanes > 16)
          for (int l = 16; l < lanes; ++l)
            for (int k = 0; k < 16; ++k)
              if (column[r + l] == column[r + k]) {
                ++rounds_write;
                k = 16;
                l = lanes;
              }
        t.banks += std::popcount(touched);
        t.read += rounds_read;
        t.write += rounds_write;
        if (rounds_read > wavefronts) ++t.read_conflicted;
        if (rounds_write > wavefronts) ++t.write_conflicted;
        for (int l = 0; l < lanes; ++l) {
          const std::uint32_t s = column[r + l];
          if (window > 0 && t.stamp[s] >= floor && t.stamp[s] < t.chunk) ++t.window;
        }
        for (int l = 0; l < lanes; ++l) t.stamp[column[r + l]] = t.chunk;
      }
    }
  });
  ChunkStats out;
  std::uint64_t chunks = 0;
  for (std::uint64_t b = 0; b < blocks; ++b)
    chunks += (std::min(rows, (b + 1) * per_block) - b * per_block + kChunkRows - 1) / kChunkRows;
  for (const Sums& t : sums) {
    out.distinct_banks += t.banks;
    out.read_rounds += t.read;
    out.write_rounds += t.write;
    out.read_conflicted_chunks += t.read_conflicted;
    out.write_conflicted_chunks += t.write_conflicted;
    out.window_conflicts += t.window;
  }
  if (chunks > 0) {
    out.distinct_banks /= chunks;
    out.read_rounds /= chunks;
    out.write_rounds /= chunks;
  }
  return out;
}

void check_placement(const Placement& p, const std::vector<std::uint32_t>& codes) {
  check_shape(p.shape);
  if (p.column.size() != codes.size())
    throw InputError(fmt::format("the placement has {} rows, the column {}", p.column.size(), codes.size()));
  const std::uint64_t banks = static_cast<std::uint64_t>(p.banks());
  if (p.slot_value.size() % banks != 0 || p.slot_value.size() < p.cardinality)
    throw InputError(fmt::format("the placement's {} slots are not whole rows of {} banks over {} values",
                                 p.slot_value.size(), banks, p.cardinality));
  for (std::uint64_t s = 0; s < p.slot_value.size(); ++s) {
    const std::uint32_t v = p.slot_value[s];
    if (s < p.cardinality ? v != s : (v != kNoValue && v >= p.cardinality))
      throw InputError(fmt::format("slot {} holds value {}, which it may not", s, v));
  }
  for (std::size_t r = 0; r < codes.size(); ++r) {
    const std::uint32_t s = p.column[r];
    if (s >= p.slot_value.size() || p.slot_value[s] != codes[r])
      throw InputError(fmt::format("row {} names slot {}, not a copy of its value {}", r + 1, s, codes[r]));
  }
}

}  // namespace gpuolap::groupby
