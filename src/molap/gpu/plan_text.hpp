#pragma once
// The gpu engine's plan in words (last_plan(), `query --timing`): what a
// query's run chose and did, recorded as plain values when it ends and put
// in words only when the plan is read (formatting took some 10-20 us of
// every query's host time).
#include <cstdint>
#include <string>

#include "gpuolap/gpu_options.hpp"
#include "molap/gpu/host_steps.hpp"

namespace gpuolap::gpu {

struct PlanFacts {
  HostSteps host;
  std::string auto_plan;  // what auto chose for the kernel and why ("" when not weighed)
  bool kernel_auto = false;
  bool two_phase = false;
  // The facts on the device.
  const char* update_kind = "resident";  // uploaded, patched, resident
  uint64_t update_cells = 0;
  uint64_t resident_cells = 0, added_cells = 0, device_bytes = 0;
  // The kernel over the facts.
  KernelKind kernel = KernelKind::source;
  int view_dims = 0, lean_dims = 0;
  bool lean = false, constant_map = false, map_in_shared = false;
  StoreKind store = StoreKind::hash;
  unsigned copies = 1;
  // Why it has its copies: given by --phf, or the model's slot budget over
  // the store's targets (a shared store: replicas up to one per warp).
  bool copies_given = false;
  uint64_t slot_budget = 0, store_targets = 0;
  Preagg preagg = Preagg::none;
  int grid = 0, block = 0;
  // The exact sums' form: -1 no sums, 0 the 192-bit words, else carry-save
  // limbs of this many bits.
  int sum_limb_bits = -1;
  // CDP and hybrid.
  unsigned long long child_kernels = 0, child_blocks = 0, direct_pages = 0, handed_pages = 0;
  ChildGrid child_grid = ChildGrid::dynamic;
  int sync_every = 0;
  uint64_t rounds = 0, ends_bytes = 0;
  uint64_t pending_limit = 0;
  int64_t pending_pool_bytes = -1;  // -1: not measured
  // Two-phase.
  uint64_t class_tuples = 0, contributions = 0;
  StoreKind final_store = StoreKind::dense;
  // Prefilter and windows.
  bool compact = false;
  uint64_t pages_skipped = 0, page_count = 0, relevant = 0;
  uint64_t chunks = 1, targets = 0;
};

std::string describe_plan(const PlanFacts& p);

}  // namespace gpuolap::gpu
