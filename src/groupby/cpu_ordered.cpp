// The CPU forms of ordered aggregation: cpu-serial (the oracle) walks the
// rows once; cpu-parallel splits them at group borders, one range per task,
// so that every group lies in one range and the ranges' groups are simply
// concatenated (the cube-creation paper's partition plan: no merge step).
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <memory>
#include <numeric>

#include "groupby/ordered_internal.hpp"

namespace gpuolap::groupby {
namespace {

// The groups' states of every aggregate as arrays over the groups (the
// layout finish_aggregate reads; `high` only for integer sums, `count` only
// where the slot keeps one), and each group's first row. Left uninitialised:
// every slot is written once, by the range its group lies in, so the pages
// are first touched by the threads that fill them.
struct GroupArrays {
  template <class T>
  using Array = std::unique_ptr<T[]>;
  std::size_t groups;
  Array<std::uint32_t> first_rows;
  std::vector<Array<std::uint64_t>> bits, high, count;  // [aggregate][group]

  GroupArrays(const std::vector<AggregateSlot>& slots, std::size_t n)
      : groups(n), first_rows(new std::uint32_t[n]), bits(slots.size()), high(slots.size()), count(slots.size()) {
    for (std::size_t a = 0; a < slots.size(); ++a) {
      bits[a].reset(new std::uint64_t[n]);
      if (integer_sum(slots[a])) high[a].reset(new std::uint64_t[n]);
      if (slots[a].keeps_count) count[a].reset(new std::uint64_t[n]);
    }
  }
};

// The first row at or after `row` that starts a group. The rows are sorted,
// so a group's rows lie together: gallop (the group of row-1 reaches at
// least to row+2^k while row+2^k still compares equal to row-1), then
// bisect. O(log run) where a walk would cost the run (3 groups over 60 M
// rows: l_returnflag).
std::size_t next_group_start(const KeySlots& keys, std::size_t row, std::size_t rows) {
  if (row == 0 || row >= rows || keys.starts(row)) return std::min(row, rows);
  const std::size_t anchor = row - 1;  // in the group that goes on past row
  std::size_t inside = row, step = 1;  // inside: known to be in anchor's group
  std::size_t outside = rows;          // known not to be (or the end)
  while (inside + step < rows) {
    if (!keys.same(anchor, inside + step)) {
      outside = inside + step;
      break;
    }
    inside += step;
    step *= 2;
  }
  while (outside - inside > 1) {
    const std::size_t mid = inside + (outside - inside) / 2;
    if (keys.same(anchor, mid)) inside = mid;
    else outside = mid;
  }
  return outside;
}

std::size_t count_groups(const KeySlots& keys, std::size_t begin, std::size_t end) {
  std::size_t groups = begin < end ? 1 : 0;
  for (std::size_t row = begin + 1; row < end; ++row) groups += keys.starts(row) ? 1 : 0;
  return groups;
}

// Aggregates rows [begin, end), where begin starts a group and end is the
// input's end or starts one, into the arrays from group `first` on.
void aggregate_range(const KeySlots& keys, const std::vector<AggregateSlot>& slots, std::size_t begin,
                     std::size_t end, std::size_t first, GroupArrays& out) {
  AggregateState states[kMaxAggregates];
  std::size_t group = first;
  auto store = [&]() {
    for (std::size_t a = 0; a < slots.size(); ++a) {
      out.bits[a][group] = states[a].bits;
      if (out.high[a]) out.high[a][group] = states[a].high;
      if (out.count[a]) out.count[a][group] = states[a].count;
    }
  };
  for (std::size_t row = begin; row < end; ++row) {
    if (row == begin || keys.starts(row)) {
      if (row != begin) {
        store();
        ++group;
      }
      out.first_rows[group] = static_cast<std::uint32_t>(row);
      for (std::size_t a = 0; a < slots.size(); ++a) states[a] = identity_state(slots[a]);
    }
    for (std::size_t a = 0; a < slots.size(); ++a) add_row(slots[a], states[a], row);
  }
  if (begin < end) store();
}

OrderedResult finish(const OrderedInput& input, const std::vector<AggregateSlot>& slots, const GroupArrays& arrays) {
  OrderedResult result;
  result.groups = arrays.groups;
  for (const ColumnView& key : input.keys) {
    const std::size_t width = value_bytes(key.type);
    std::vector<unsigned char> values(result.groups * width);
    std::vector<std::uint8_t> nulls(key.nulls ? result.groups : 0);
    tbb::parallel_for(std::size_t{0}, result.groups, [&](std::size_t g) {
      const std::size_t row = arrays.first_rows[g];
      std::copy_n(static_cast<const unsigned char*>(key.values) + row * width, width, &values[g * width]);
      if (key.nulls) nulls[g] = key.nulls[row];
    });
    result.keys.push_back(key_result(key.type, result.groups, values.data(), key.nulls ? nulls.data() : nullptr));
  }
  for (std::size_t a = 0; a < slots.size(); ++a)
    result.aggregates.push_back(finish_aggregate(input, a, slots[a], result.groups, arrays.bits[a].get(),
                                                 arrays.high[a].get(), arrays.count[a].get()));
  return result;
}

}  // namespace

OrderedResult aggregate_serial(const OrderedInput& input) {
  check_input(input);
  const auto slots = aggregate_slots(input);
  const KeySlots keys = key_slots(input);
  GroupArrays arrays(slots, count_groups(keys, 0, input.rows));
  aggregate_range(keys, slots, 0, input.rows, 0, arrays);
  return finish(input, slots, arrays);
}

OrderedResult aggregate_parallel(const OrderedInput& input) {
  check_input(input);
  const auto slots = aggregate_slots(input);
  const KeySlots keys = key_slots(input);
  // Some ranges per thread, so that a thread finishing early takes another.
  constexpr std::size_t kMinRowsPerRange = 1 << 16;
  const std::size_t wanted = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency()) * 4;
  const std::size_t parts = std::max<std::size_t>(1, std::min(wanted, input.rows / kMinRowsPerRange));

  // Cut i sits at the first group start at or after i * rows / parts.
  std::vector<std::size_t> cuts(parts + 1, input.rows);
  cuts[0] = 0;
  tbb::parallel_for(std::size_t{1}, parts, [&](std::size_t i) {
    cuts[i] = next_group_start(keys, i * input.rows / parts, input.rows);
  });
  // Every cut is a run border; on rows that are not sorted a gallop may jump
  // past later borders, so the cuts are kept in order: the ranges stay
  // disjoint and the runs come out as cpu-serial's.
  for (std::size_t i = 1; i < parts; ++i) cuts[i] = std::max(cuts[i], cuts[i - 1]);
  // Two passes: count each range's groups, then aggregate each range into
  // its place in arrays allocated once.
  std::vector<std::size_t> first(parts + 1, 0);
  tbb::parallel_for(std::size_t{0}, parts, [&](std::size_t i) { first[i + 1] = count_groups(keys, cuts[i], cuts[i + 1]); });
  std::partial_sum(first.begin(), first.end(), first.begin());
  GroupArrays arrays(slots, first[parts]);
  tbb::parallel_for(std::size_t{0}, parts,
                    [&](std::size_t i) { aggregate_range(keys, slots, cuts[i], cuts[i + 1], first[i], arrays); });
  return finish(input, slots, arrays);
}

}  // namespace gpuolap::groupby
