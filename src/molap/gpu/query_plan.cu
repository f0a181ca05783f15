// The plan stage, on the host: one phase or two, the kernel's map, the
// kernel (auto: the cost model where it matters), the launch shape, and the
// pages the thread-run kernel reads.
#include <algorithm>

#include "gpuolap/error.hpp"
#include "molap/gpu/gpu_engine.cuh"
#include "molap/planning/relevant_pages.hpp"
#include "gpu/runtime/text.hpp"

namespace gpuolap::gpu {

namespace {

int fields_of(Aggregate a) {
  switch (a) {
    case Aggregate::sum:
    case Aggregate::count:
    case Aggregate::avg: return kExactFields;
    case Aggregate::min: return kMinFields;
    case Aggregate::max: return kMaxFields;
  }
  return kExactFields;
}

}  // namespace

QueryPlan GpuEngine::plan_query(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) {
  QueryPlan plan;
  HostSteps& host = plan.host;
  plan.fields = fields_of(query.aggregate);
  plan.targets = map.target_count();
  plan.grid = map.sum_grid(facts, query.measure);
  if ((plan.fields & kExact) && plan.grid.top > 1024)
    throw InputError(text("gpu engine: the measure's values times the area's weights may pass the largest double ",
                          "(2^1024), which the exact sums on the device do not hold; the CPU engines answer it"));
  // A class tuple's sum, weighed after, equals its facts' contributions only
  // on an exact grid (a rounded grid rounds each contribution on its own).
  const bool sums_allow_two_phase = plan.grid.exact || !(plan.fields & kExact);
  // Two-phase when the facts fall into few class tuples: far fewer updates
  // than one per (fact, target). A map that already gives one target per
  // base to the lean kernel gains nothing from it (measured on B1 and M1:
  // 2.14 and 0.36 ms in one phase against 2.42 and 0.46 in two).
  const bool direct_is_lean = direct_map_is_lean(map);
  // auto: source, unless the model says otherwise below.
  KernelKind kernel = options_.kernel.value_or(KernelKind::source);
  // The pair kernels (work list, CDP, hybrid) answer uneven fan-out of the
  // direct map; two-phase aggregation's phase 1 has one target per cell.
  if (kernel != KernelKind::source && options_.two_phase == TwoPhase::on)
    throw InputError(text("gpu engine: kernel ", knob_name(kernel), " aggregates in one phase; --two-phase on ",
                          "needs --kernel source"));
  const uint64_t max_cells = std::min<uint64_t>(uint64_t{1} << 22, std::max<uint64_t>(1024, facts.size() / 4));
  if (options_.two_phase == TwoPhase::on && !sums_allow_two_phase)
    throw InputError("gpu engine: two-phase aggregation needs the exact sums' grid, and this measure's values span "
                     "more bits than it holds; --two-phase off (or auto) aggregates in one phase");
  if (kernel == KernelKind::source && sums_allow_two_phase &&
      (options_.two_phase == TwoPhase::on || (!options_.two_phase && !direct_is_lean)))
    plan.classes = target_classes(map, max_cells);
  host.step("classes");
  plan.two_phase = plan.classes.cells > 0;
  if (options_.two_phase == TwoPhase::on && !plan.two_phase)
    throw InputError(text("gpu engine: two-phase aggregation needs at most ", max_cells,
                          " class tuples; this area has more"));
  plan.image = plan.two_phase ? class_map_image(map, plan.classes) : direct_map_image(map);
  host.step("map image");
  // `auto`: two-phase aggregation and thread runs make about one update per
  // fact; the pair kernels make one per contribution, so they are weighed
  // only where neither applies, by the cost model on a sample of the facts.
  if (!options_.kernel && !plan.two_phase && !direct_is_lean)
    kernel = weigh_kernels(facts, map, query.measure, plan.auto_plan);
  host.step("kernel choice");
  // The thesis kept the map in constant memory. On Hopper that serialises
  // the lanes' different addresses (M3 ran 10x slower than with global
  // memory through L1), so it is used only when asked for.
  plan.constant_map = options_.map_memory == MapMemory::constant;
  if (plan.constant_map && plan.image.image.bytes.size() > kConstantMapBytes)
    throw InputError(text("gpu engine: the aggregation map takes ", plan.image.image.bytes.size(),
                          " bytes, more than the ", kConstantMapBytes, " of constant memory"));
  plan.first_targets = plan.two_phase ? plan.classes.cells : plan.targets;
  plan.first_fields = plan.two_phase && (plan.fields & (kMin | kMax)) ? kMinMaxFields : plan.fields;
  plan.stage = choose_stage(kernel, plan.first_targets, plan.first_fields, plan.two_phase, plan.image);
  host.step("launch shape");
  plan.compact = options_.prefilter == Prefilter::compact;
  list_pages(map, plan);
  host.step("page list");
  return plan;
}

KernelKind GpuEngine::weigh_kernels(const FactTable& facts, const AggregationMap& map, size_t measure,
                                    std::string& why) const {
  const FanOutStats stats = sample_fan_out(facts, map, measure);
  std::vector<KernelPrediction> predicted = predict_kernels(stats, costs_);
  // Only kernels the other knobs allow: CDP children cannot use a shared
  // store and need a compiled parent block size; runs are the source
  // kernel's.
  std::erase_if(predicted, [&](const KernelPrediction& p) {
    if (options_.preagg == Preagg::run) return p.kernel != KernelKind::source;
    return uses_cdp(p.kernel) &&
           (options_.variant == StoreKind::shared || (options_.block > 0 && !cdp_block_supported(options_.block)));
  });
  const KernelKind kernel = predicted.front().kernel;
  std::string list;
  for (const KernelPrediction& p : predicted)
    list += text(list.empty() ? "" : ", ", knob_name(p.kernel), " ", p.seconds * 1e3);
  why = text("auto chose kernel ", knob_name(kernel), " (predicted aggregate ms: ", list, "; ",
             stats.pairs / std::max(1.0, stats.relevant), " targets per relevant fact, warp efficiency ",
             stats.pairs / std::max(1.0, 32 * stats.warp_steps), "; ", costs_source_, "); ");
  return kernel;
}

void GpuEngine::list_pages(const AggregationMap& map, QueryPlan& plan) {
  // The thread-run kernel skips the resident pages without a relevant cell
  // itself (fused prefilter): the list of pages it reads travels with its
  // map. A sample of the pages says first whether any can be skipped.
  constexpr size_t kPageSampleStep = 32;
  if (plan.stage.preagg != Preagg::run || plan.compact || cube_.page_size() % kLeanRunStep != 0 ||
      !worth_listing_pages(map, cube_, kPageSampleStep))
    return;
  const std::vector<uint8_t> pages = relevant_pages(map, cube_);
  if (std::find(pages.begin(), pages.end(), 0) == pages.end()) return;
  for (uint32_t p = 0; p < pages.size(); ++p)
    if (pages[p]) plan.page_list.push_back(p);
  plan.page_list_at = plan.image.lean_image.append(plan.page_list);
}

}  // namespace gpuolap::gpu
