// The area's targets in windows of target numbers whose stores fit the
// device memory left for them: one window, unless the area is huge. A
// store that does not fit after all splits the area further.
#include <bit>

#include "molap/gpu/gpu_engine.cuh"

namespace gpuolap::gpu {

GpuEngine::Windows GpuEngine::aggregate_windows(const QueryPlan& plan, const Inputs& inputs, const Expansion& e,
                                                Aggregate aggregate, bool with_counts, bool with_sums,
                                                StageClock& clock) {
  const uint64_t targets = plan.targets;
  const StoreKind store = plan.two_phase ? e.store : plan.stage.store;
  const unsigned copies = plan.two_phase ? 1 : plan.stage.copies;
  const uint64_t entries = plan.two_phase ? e.contributions : inputs.resident.n + inputs.added.n;
  Windows w;
  w.chunks = chunks_for(store, targets, copies, plan.fields, entries);
  const size_t before_windows = clock.size();
  for (;;) {
    try {
      w.result = AreaResult{};
      w.counts.clear();
      w.sums.clear();
      w.updates = 0;
      const uint64_t window = (targets + w.chunks - 1) / w.chunks;
      for (uint64_t first = 0; first < std::max<uint64_t>(targets, 1); first += std::max<uint64_t>(window, 1)) {
        const uint64_t width = std::min(window, targets - first);
        TargetTable t;
        if (plan.two_phase) {
          t = expand_window(plan, e, first, width, clock);
        } else {
          t = aggregate_facts(plan.stage, plan.image, inputs, plan.first_fields, plan.grid, first, width, clock);
          w.updates += read_updates();
        }
        const auto compact = [&](Aggregate a) {
          return store == StoreKind::hash ? compactor_.compact_hash(t, plan.fields, a, clock)
                                          : compactor_.compact_dense(t, plan.fields, a, clock);
        };
        AreaResult part = compact(aggregate);
        // A part of a split query (avg: the sums, then the counts of the
        // same store, which fill the same targets in the same order).
        if (with_counts) {
          const AreaResult counts = compact(Aggregate::count);
          w.counts.insert(w.counts.end(), counts.values.begin(), counts.values.end());
        }
        // And the exact sums, a word at a time, to be added on the host.
        if (with_sums) {
          AreaResult words[3];
          for (int k = 0; k < 3; ++k)
            words[k] = store == StoreKind::hash ? compactor_.compact_hash(t, plan.fields, aggregate, clock, k)
                                                : compactor_.compact_dense(t, plan.fields, aggregate, clock, k);
          for (size_t i = 0; i < words[0].values.size(); ++i)
            w.sums.push_back(ExactSum::from_words(std::bit_cast<uint64_t>(words[0].values[i]),
                                                  std::bit_cast<uint64_t>(words[1].values[i]),
                                                  std::bit_cast<uint64_t>(words[2].values[i])));
        }
        if (w.result.targets.empty()) {
          w.result = std::move(part);  // the one window, or the first with targets: no copy
        } else {
          w.result.targets.insert(w.result.targets.end(), part.targets.begin(), part.targets.end());
          w.result.values.insert(w.result.values.end(), part.values.begin(), part.values.end());
        }
        if (targets == 0) break;
      }
      return w;
    } catch (const GpuOutOfMemory&) {
      if (w.chunks >= targets) throw;
      w.chunks = std::min(targets, w.chunks * 2);
      clock.truncate(before_windows);
      release_stores();
    }
  }
}

uint64_t GpuEngine::chunks_for(StoreKind kind, uint64_t targets, unsigned copies, int fields, uint64_t entries) {
  if (targets <= 1) return 1;
  const auto window_bytes = [&](uint64_t chunks) {
    return store_bytes(kind, (targets + chunks - 1) / chunks, copies, fields, entries);
  };
  uint64_t budget = options_.store_memory_mb > 0 ? static_cast<uint64_t>(options_.store_memory_mb * 1048576.0) : 0;
  if (budget == 0) {
    size_t free = 0, total = 0;
    ctx_.memory_info(free, total);
    if (window_bytes(1) > free / 10 * 8) {
      // The stores kept from earlier queries count as taken: free them first.
      release_stores();
      ctx_.memory_info(free, total);
    }
    budget = free / 10 * 8;
  }
  uint64_t chunks = 1;
  while (chunks < targets && window_bytes(chunks) > budget) chunks = std::min(targets, chunks * 2);
  return chunks;
}

void GpuEngine::release_stores() {
  first_.release();
  second_.release();
  compactor_.release();
  ctx_.release_scratch();
  fan_out_ends_ = {};
  cdp_.release();
}

}  // namespace gpuolap::gpu
