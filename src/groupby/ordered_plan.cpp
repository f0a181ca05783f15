// The GPU form's plan: what `auto` picks, and the checks of a plan asked for.
#include <fmt/format.h>

#include <algorithm>

#include "gpuolap/error.hpp"
#include "groupby/ordered_internal.hpp"

namespace gpuolap::groupby {

double estimate_run_length(const OrderedInput& input, std::size_t samples) {
  if (input.rows < 2) return static_cast<double>(input.rows);
  const KeySlots keys = key_slots(input);
  samples = std::min(samples, input.rows - 1);
  std::size_t changes = 0;
  for (std::size_t j = 0; j < samples; ++j) {
    const std::size_t row = 1 + j * (input.rows - 1) / samples;
    if (!keys.same(row - 1, row)) ++changes;
  }
  if (changes == 0) return static_cast<double>(input.rows);
  return static_cast<double>(samples) / static_cast<double>(changes);
}

OrderedPlan choose_ordered_plan(const OrderedInput& input, const OrderedGpuOptions& options) {
  OrderedPlan plan;
  const double run = estimate_run_length(input);
  plan.why = fmt::format("{} rows, runs of about {:.1f} rows", input.rows, run);
  plan.variant = options.variant.value_or(Variant::PrivateVariable);
  if (options.architecture) {
    plan.architecture = *options.architecture;
  } else {
    // Measured on an H200 (bench/results/h200-ordered-aggregation-2026-11-26.md,
    // 2^20..2^30 rows, unique keys, runs of 16 and 1024, lineitem columns):
    // CUB's reduce-by-key was the fastest everywhere it applies, 2.3-2.9x
    // ahead of this operator's own kernels from 2^24 rows up; where it does
    // not apply (several or nullable keys, NULL values, integer sums), the
    // block-cooperative kernel at 256 threads x 32 rows was the fastest of
    // the rest (1.2-2.4x ahead of the 1-kernel with a private variable on
    // synthetic runs, 20x on lineitem's columns of 2 and 3 groups).
    OrderedPlan cub = plan;
    cub.local_size = 256;
    cub.intent = 8;
    cub.architecture = Architecture::CubReduceByKey;
    bool cub_applies = !options.variant;
    if (cub_applies) {
      try {
        check_plan(input, cub);
      } catch (const InputError&) {
        cub_applies = false;
      }
    }
    // Knobs the block-cooperative kernel cannot take (a variant, an intent
    // past 32 or not a multiple of 4, a local size past 512 or not whole
    // warps) send the choice to the 1-kernel, which takes every knob.
    const bool knobs_fit = !options.variant && (!options.intent || (*options.intent <= 32 && *options.intent % 4 == 0)) &&
                           (!options.local_size || (*options.local_size <= 512 && *options.local_size % 32 == 0));
    plan.architecture = cub_applies ? Architecture::CubReduceByKey
                        : knobs_fit ? Architecture::BlockCooperative
                                    : Architecture::OneKernel;
    plan.why += cub_applies ? ": cub-reduce-by-key, the fastest measured"
                : knobs_fit ? ": block-cooperative, the fastest measured of the rest (cub-reduce-by-key takes one "
                              "integer key without NULLs, value columns without NULLs and no integer sums)"
                            : ": 1-kernel, which takes the knobs given (block-cooperative does not)";
  }
  const bool cooperative = plan.architecture == Architecture::BlockCooperative;
  plan.local_size = options.local_size.value_or(256);
  plan.intent = options.intent.value_or(cooperative ? 32 : 8);
  if (options.variant && !takes_variant(plan.architecture))
    throw InputError(fmt::format("architecture {} takes no variant (the variants belong to 5-kernel, 3-kernel, "
                                 "2-kernel and 1-kernel)", architecture_name(plan.architecture)));
  check_plan(input, plan);
  return plan;
}

void check_plan(const OrderedInput& input, const OrderedPlan& plan) {
  if (plan.local_size < 1 || plan.local_size > 1024)
    throw InputError(fmt::format("local size {} is outside 1..1024 (threads per block)", plan.local_size));
  if (plan.intent < 1 || plan.intent > 4096)
    throw InputError(fmt::format("intent {} is outside 1..4096 (rows per thread)", plan.intent));
  if (plan.architecture == Architecture::BlockCooperative && (plan.local_size % 32 != 0 || plan.local_size > 512))
    throw InputError(fmt::format("block-cooperative takes a local size of 32, 64, ..., 512 (whole warps; at most 512 "
                                 "leaves each thread the registers it needs), not {}", plan.local_size));
  if (plan.architecture == Architecture::BlockCooperative && (plan.intent > 32 || plan.intent % 4 != 0))
    throw InputError(fmt::format("block-cooperative takes an intent of 4, 8, ..., 32 (rows per thread, 4 at a time), "
                                 "not {}", plan.intent));
  const bool cub = plan.architecture == Architecture::CubReduceByKey || plan.architecture == Architecture::CubRunLength;
  // CUDA launches at most 2^31 - 1 blocks; the paper's kernels launch one
  // thread per row (map, direct atomics) or per chunk, the one-pass kernels
  // one block per tile of local size x intent rows.
  constexpr std::size_t kMostBlocks = (std::size_t{1} << 31) - 1;
  const std::size_t per_block = plan.architecture == Architecture::OneKernel || plan.architecture == Architecture::BlockCooperative
                                    ? static_cast<std::size_t>(plan.local_size) * plan.intent
                                    : static_cast<std::size_t>(plan.local_size);
  if (!cub && (input.rows + per_block - 1) / per_block > kMostBlocks)
    throw InputError(fmt::format("{} rows at local size {} would launch more than 2^31 - 1 blocks: take a larger "
                                 "local size", input.rows, plan.local_size));
  if (!cub) return;
  const auto name = architecture_name(plan.architecture);
  if (input.keys.size() != 1 || input.keys[0].nulls || input.keys[0].type == ValueType::Double)
    throw InputError(fmt::format("{} takes one integer grouping key without NULLs", name));
  for (const Aggregate& a : input.aggregates) {
    if (plan.architecture == Architecture::CubRunLength && a.kind != AggregateKind::CountStar)
      throw InputError(fmt::format("{} computes count(*) only, not {}", name, aggregate_label(input, a)));
    if (a.kind == AggregateKind::CountStar) continue;
    const ColumnView& v = input.values[a.value];
    if (v.nulls) throw InputError(fmt::format("{} takes value columns without NULLs ('{}' has some)", name, v.name));
    if ((a.kind == AggregateKind::Sum || a.kind == AggregateKind::Avg) && v.type != ValueType::Double)
      throw InputError(fmt::format("{} sums doubles only ({} sums integers exactly: use another architecture)", name,
                                   aggregate_label(input, a)));
  }
}

}  // namespace gpuolap::groupby
