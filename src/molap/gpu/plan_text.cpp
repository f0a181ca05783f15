#include "molap/gpu/plan_text.hpp"

#include "gpu/runtime/text.hpp"

namespace gpuolap::gpu {

namespace {

std::string kernel_words(const PlanFacts& p) {
  const std::string map_place =
      text(p.view_dims, " dimensions walked, map in ", p.constant_map ? "constant" : "global", " memory");
  switch (p.kernel) {
    case KernelKind::source:
      return p.preagg == Preagg::run ? text("thread-run kernel (", p.lean_dims, " dimensions walked, map in ",
                                            p.map_in_shared ? "shared" : "global", " memory)")
                                     : text(p.lean ? "lean kernel (" : "kernel (", map_place, ")");
    case KernelKind::work_list: return text("work-list kernel (", map_place, ")");
    case KernelKind::cdp:
    case KernelKind::hybrid: break;
  }
  return text(p.kernel == KernelKind::cdp ? "CDP kernel (" : "hybrid CDP kernel (", map_place, "; ", p.child_kernels,
              " child grids of ", p.child_blocks, " blocks, ", knob_name(p.child_grid), " child grid",
              p.kernel == KernelKind::hybrid ? text(", ", p.direct_pages, " pages written by the parent, ",
                                                    p.handed_pages, " handed to children")
                                             : std::string(),
              p.sync_every > 0 ? text(", synchronised every ", p.sync_every, " pages (", p.rounds, " rounds)")
                               : std::string(", no synchronisation"),
              "; D ", p.ends_bytes / 1e6, " MB, pending-launch limit ", p.pending_limit, " (",
              p.pending_pool_bytes < 0 ? std::string("not measured") : text(p.pending_pool_bytes / 1e6, " MB"),
              " of device memory taken by the runtime since it was set))");
}

std::string copies_words(const PlanFacts& p) {
  if (p.copies_given) return {};
  if (p.store == StoreKind::shared) return " (replicas: up to one per warp within 48 KB)";
  return text(" (model: slot budget ", p.slot_budget, " over ", p.store_targets, " targets)");
}

}  // namespace

std::string describe_plan(const PlanFacts& p) {
  const std::string chose =
      p.kernel_auto && p.auto_plan.empty()
          ? text("auto chose kernel source (", p.two_phase ? "two-phase" : "one target per fact",
                 ": about one update per fact); ")
          : p.auto_plan;
  const std::string expand_plan =
      p.two_phase ? text("two-phase: ", p.class_tuples, " class tuples, expanded to ", p.contributions,
                         " contributions into a ", knob_name(p.final_store), " store of the area; ")
                  : std::string();
  const bool resident = std::string(p.update_kind) == "resident";
  return text(p.host.said(), chose, "facts ", p.update_kind,
              resident ? std::string() : text(" (", p.update_cells, " cells)"), ", ", p.resident_cells,
              " resident + ", p.added_cells, " added cells in ", p.device_bytes / 1e6, " MB of device memory; ",
              expand_plan, kernel_words(p), ", store ", knob_name(p.store), ", copies ", p.copies, copies_words(p),
              ", preagg ", knob_name(p.preagg), ", prefilter ", p.compact ? "compact" : "fused",
              p.pages_skipped > 0 ? text(" (", p.pages_skipped, " of ", p.page_count, " pages skipped)")
                                  : std::string(),
              ", grid ", p.grid, " x ", p.block, " threads",
              p.sum_limb_bits > 0    ? text(", exact sums in carry-save limbs of ", p.sum_limb_bits, " bits")
              : p.sum_limb_bits == 0 ? std::string(", exact sums in 192-bit words")
                                     : std::string(),
              p.compact ? text(", ", p.relevant, " relevant cells") : std::string(),
              p.chunks > 1 ? text(", the area in ", p.chunks, " chunks of ", (p.targets + p.chunks - 1) / p.chunks,
                                  " targets")
                           : std::string());
}

}  // namespace gpuolap::gpu
