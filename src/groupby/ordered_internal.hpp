// What the CPU and GPU forms of ordered aggregation share on the host: the
// input resolved into slots, and the states of the groups finished into
// result columns. Internal to src/groupby/, and shared with the full cube
// (src/cube/), whose cells hold the same states.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "groupby/aggregate_state.hpp"
#include "groupby/group_keys.hpp"
#include "groupby/ordered_aggregation.hpp"

namespace gpuolap::groupby {

std::vector<AggregateSlot> aggregate_slots(const OrderedInput& input);
KeySlots key_slots(const OrderedInput& input);

// The result column of aggregate `a` from its groups' states laid out as
// arrays (`high` only for integer sums, `count` only where the slot keeps
// it). An integer sum outside int64 is an InputError naming the aggregate
// and the group.
ResultColumn finish_aggregate(const OrderedInput& input, std::size_t a, const AggregateSlot& slot, std::size_t groups,
                              const std::uint64_t* bits, const std::uint64_t* high, const std::uint64_t* count);
// finish_aggregate's values of `groups` groups written at rows [at, at +
// groups) of `out`, already sized: values of aggregate_type, and `nulls`
// where the slot keeps a count (and `count` is given). Returns the first
// group (counted from 0) whose integer sum leaves int64, or `groups`; the
// caller names it. The cube fills one column from many sets' cells so.
std::size_t finish_aggregate_into(const AggregateSlot& slot, std::size_t groups, const std::uint64_t* bits,
                                  const std::uint64_t* high, const std::uint64_t* count, ResultColumn& out,
                                  std::size_t at);

// A key's result column: the key of each group, gathered from `values`
// (elements of the key's type, one per group) and `nulls` (one byte per
// group, or null when the key has no NULL).
ResultColumn key_result(ValueType type, std::size_t groups, const void* values, const std::uint8_t* nulls);

// Bytes of one element of `type`.
std::size_t value_bytes(ValueType type);

}  // namespace gpuolap::groupby
