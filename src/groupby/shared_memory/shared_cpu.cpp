// The shared-memory operators' names and checks, and their CPU form
// (cpu-serial: row after row, the oracle of the GPU variants).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include "gpuolap/error.hpp"
#include "groupby/aggregate_state.hpp"  // order_bits: MIN/MAX as unsigned words
#include "groupby/shared_memory/shared_aggregation.hpp"

namespace gpuolap::groupby {
namespace {

constexpr std::array<std::pair<SharedVariant, std::string_view>, 7> kNames{{
    {SharedVariant::GlobalAtomics, "global-atomics"},
    {SharedVariant::OneCopy, "shared"},
    {SharedVariant::NaiveReplicas, "naive-replicas"},
    {SharedVariant::Placement, "placement"},
    {SharedVariant::WarpAggregation, "warp-aggregation"},
    {SharedVariant::SortReduce, "sort-reduce"},
    {SharedVariant::TargetStore, "target-store"},
}};

void check_placement_use(const Placement* p, std::uint32_t values, PlacementGoal goal, std::size_t rows) {
  if (!p) throw InputError("the placement variant needs a placement (gpuolap optimize)");
  if (p->goal != goal)
    throw InputError(fmt::format("the placement was made for {}s; this operator {}s its slots",
                                 placement_goal_name(p->goal), placement_goal_name(goal)));
  // A read placement may cover fewer values than the dimension has rows
  // (the keys' largest + 1); a write placement's values are the groups.
  if (goal == PlacementGoal::Write ? p->cardinality != values : p->cardinality > values)
    throw InputError(fmt::format("the placement is over {} values, the query over {}", p->cardinality, values));
  if (p->column.size() != rows)
    throw InputError(fmt::format("the placement has {} rows, the table {}", p->column.size(), rows));
}

}  // namespace

std::string_view shared_variant_name(SharedVariant v) {
  for (const auto& [value, name] : kNames)
    if (value == v) return name;
  return "?";
}

SharedVariant parse_shared_variant(std::string_view name) {
  std::string valid;
  for (const auto& [value, n] : kNames) {
    if (n == name) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(n);
  }
  throw InputError(fmt::format("unknown variant '{}': valid are {}", name, valid));
}

const std::vector<SharedVariant>& all_shared_variants() {
  static const std::vector<SharedVariant> all = [] {
    std::vector<SharedVariant> v;
    for (const auto& [value, name] : kNames) v.push_back(value);
    return v;
  }();
  return all;
}

bool join_has_variant(SharedVariant v) {
  return v == SharedVariant::GlobalAtomics || v == SharedVariant::OneCopy || v == SharedVariant::NaiveReplicas ||
         v == SharedVariant::Placement;
}

int grouped_word_bytes(const GroupedInput& in) { return in.values ? 8 : 4; }
int join_word_bytes(const JoinInput& in) { return in.value_type == SharedValueType::Double ? 8 : 4; }

void check_grouped_input(const GroupedInput& in, SharedVariant variant) {
  if (in.groups < 1 || in.groups > (1u << 24))
    throw InputError(fmt::format("the grouping column's cardinality must be from 1 to 2^24, not {}", in.groups));
  if (in.rows > 0 && !in.codes) throw InputError("the grouping column is missing");
  if (in.rows >= (std::size_t{1} << 32)) throw InputError(fmt::format("at most 2^32 - 1 rows, not {}", in.rows));
  if (in.min_max && !in.values) throw InputError("MIN and MAX need a value column");
  if (variant == SharedVariant::Placement) check_placement_use(in.placement, in.groups, PlacementGoal::Write, in.rows);
  if (variant == SharedVariant::TargetStore && in.values && in.value_type != SharedValueType::Double)
    throw InputError("the target store (the MOLAP engine's) sums doubles; an integer column's sum is exact in the "
                     "other variants");
  if (variant == SharedVariant::TargetStore && in.min_max)
    throw InputError("the target store (the MOLAP engine's) orders a NaN by its bits, not above every number as SQL "
                     "does; MIN and MAX run in the other variants");
}

void check_join_input(const JoinInput& in, SharedVariant variant) {
  if (!join_has_variant(variant))
    throw InputError(fmt::format("the foreign-key join has no variant '{}': it has global-atomics (reads from "
                                 "global memory), shared, naive-replicas, placement",
                                 shared_variant_name(variant)));
  if (in.dim_rows < 1 || in.dim_rows > (1u << 24))
    throw InputError(fmt::format("the dimension must have from 1 to 2^24 rows, not {}", in.dim_rows));
  if (!in.dim_values) throw InputError("the dimension's value column is missing");
  if (in.rows > 0 && !in.keys) throw InputError("the foreign-key column is missing");
  if (in.rows >= (std::size_t{1} << 32)) throw InputError(fmt::format("at most 2^32 - 1 rows, not {}", in.rows));
  if (variant == SharedVariant::Placement) check_placement_use(in.placement, in.dim_rows, PlacementGoal::Read, in.rows);
}

int auto_block_threads(std::size_t shared_bytes, std::size_t sm_shared_bytes) {
  return shared_bytes * 4 > sm_shared_bytes ? 1024 : 512;
}

SharedVariant choose_shared_variant(const GroupedInput& in, bool has_placement, std::string& why) {
  if (!in.values) {
    why = "COUNT alone updates shared memory with native 32-bit atomics, at the same speed at any skew";
    if (has_placement) why += " (the placement's copies would only take shared memory)";
    return SharedVariant::OneCopy;
  }
  if (has_placement) {
    why = "the column has a placement for writes (gpuolap optimize)";
    return SharedVariant::Placement;
  }
  // Lanes whose code an earlier lane of their chunk also has, over up to
  // 1,024 chunks spread over the rows.
  const std::size_t chunks = in.rows / kChunkRows;
  const std::size_t samples = std::min<std::size_t>(chunks, 1024);
  std::size_t repeated = 0;
  for (std::size_t k = 0; k < samples; ++k) {
    const std::uint32_t* c = in.codes + (k * chunks / samples) * kChunkRows;
    for (int l = 1; l < kChunkRows; ++l)
      for (int m = 0; m < l; ++m)
        if (c[m] == c[l]) {
          ++repeated;
          break;
        }
  }
  const double share = samples ? static_cast<double>(repeated) / (samples * kChunkRows) : 0;
  if (share < 0.05) {
    why = fmt::format("{:.1f}% of a warp's rows repeat a code of the warp: few value conflicts for one copy", 100 * share);
    return SharedVariant::OneCopy;
  }
  why = fmt::format("{:.1f}% of a warp's rows repeat a code of the warp: the warp combines them first (no "
                    "placement: gpuolap optimize makes one)", 100 * share);
  return SharedVariant::WarpAggregation;
}

GroupedResult grouped_cpu(const GroupedInput& in) {
  check_grouped_input(in, SharedVariant::OneCopy);
  GroupedResult r;
  r.value_type = in.value_type;
  r.plan = "cpu-serial";
  const std::size_t c = in.groups;
  r.count.assign(c, 0);
  const bool ints = in.value_type == SharedValueType::Int32;
  if (in.values) {
    if (ints) r.sum_ints.assign(c, 0);
    else r.sum_doubles.assign(c, 0.0);
  }
  std::vector<std::uint64_t> lo, hi;
  if (in.min_max) {
    lo.assign(c, ~std::uint64_t{0});
    hi.assign(c, 0);
  }
  for (std::size_t row = 0; row < in.rows; ++row) {
    const std::uint32_t g = in.codes[row];
    if (g >= c) throw InputError(fmt::format("row {}: code {} is not below the cardinality {}", row + 1, g, c));
    ++r.count[g];
    if (!in.values) continue;
    std::uint64_t key;
    if (ints) {
      const std::int32_t x = static_cast<const std::int32_t*>(in.values)[row];
      r.sum_ints[g] += x;
      key = order_bits(std::int64_t{x});
    } else {
      const double x = static_cast<const double*>(in.values)[row];
      r.sum_doubles[g] += x;
      key = order_bits(x);
    }
    if (in.min_max) {
      lo[g] = std::min(lo[g], key);
      hi[g] = std::max(hi[g], key);
    }
  }
  if (in.min_max) {
    if (ints) {
      r.min_ints.resize(c);
      r.max_ints.resize(c);
      for (std::size_t g = 0; g < c; ++g) r.min_ints[g] = int_of_order_bits(lo[g]), r.max_ints[g] = int_of_order_bits(hi[g]);
    } else {
      r.min_doubles.resize(c);
      r.max_doubles.resize(c);
      for (std::size_t g = 0; g < c; ++g)
        r.min_doubles[g] = double_of_order_bits(lo[g]), r.max_doubles[g] = double_of_order_bits(hi[g]);
    }
  }
  return r;
}

JoinResult join_cpu(const JoinInput& in) {
  check_join_input(in, SharedVariant::OneCopy);
  JoinResult r;
  r.value_type = in.value_type;
  r.plan = "cpu-serial";
  for (std::size_t row = 0; row < in.rows; ++row) {
    const std::uint32_t k = in.keys[row];
    if (k >= in.dim_rows) continue;
    ++r.matched;
    if (in.value_type == SharedValueType::Int32) r.sum_int += static_cast<const std::int32_t*>(in.dim_values)[k];
    else r.sum_double += static_cast<const double*>(in.dim_values)[k];
  }
  return r;
}

}  // namespace gpuolap::groupby
