// The launch of the kernel over the facts: its store, copies per target,
// pre-aggregation, block and grid.
#include <algorithm>

#include "gpuolap/error.hpp"
#include "molap/gpu/gpu_engine.cuh"
#include "gpu/runtime/text.hpp"

namespace gpuolap::gpu {

StagePlan GpuEngine::choose_stage(KernelKind kernel, uint64_t targets, int fields, bool dense_only,
                                  const MapImage& map) const {
  if (options_.block > 0 || options_.grid > 0 || kernel != KernelKind::source)
    return plan_for(kernel, options_.block > 0 ? options_.block : 256, targets, fields, dense_only, map);
  // A block's shared store and packed map serve all its threads: when they
  // leave room for few blocks per multiprocessor, larger blocks keep more
  // threads resident (B3's 7,680 class tuples: 2 blocks of 256 threads).
  StagePlan best = plan_for(kernel, 256, targets, fields, dense_only, map);
  for (int block : {512, 1024}) {
    if (best.resident * best.block >= 1024) break;
    const StagePlan p = plan_for(kernel, block, targets, fields, dense_only, map);
    if (p.store == best.store && p.resident * p.block > best.resident * best.block) best = p;
  }
  return best;
}

StoreKind GpuEngine::choose_store(StagePlan& p, KernelKind kernel, int block, uint64_t targets, int fields,
                                  bool dense_only, bool allow_shared) const {
  // Copies of each target (the thesis' parallel hash functions): the cost
  // model's slot budget of each global store over the area (kernel_model.hpp),
  // so few hot targets spread over many slots and large areas get one.
  const uint64_t area = std::max<uint64_t>(targets, 1);
  p.copies = options_.phf > 0 ? static_cast<unsigned>(options_.phf) : model_copies(costs_, StoreKind::hash, area);
  const unsigned dense_copies = options_.phf > 0 ? p.copies : model_copies(costs_, StoreKind::dense, area);
  const size_t shared_limit = ctx_.props().sharedMemPerBlockOptin - 1024;
  const uint64_t replica_bytes = shared_store_bytes(fields, area);
  // CDP children are grids of their own: they cannot share a parent block's
  // shared store.
  const bool shared_fits = allow_shared && replica_bytes <= shared_limit && !uses_cdp(kernel);
  if (options_.variant == StoreKind::shared && uses_cdp(kernel))
    throw InputError(text("gpu engine: kernel ", knob_name(kernel), " writes from child grids, which cannot use a ",
                          "block's shared store; use --variant hash or dense"));
  // Replicas per block: one per warp while they take at most 48 KB (more
  // shared memory per block would cost resident blocks), or --phf.
  const uint64_t warps = static_cast<uint64_t>(block) / 32;
  const unsigned replicas = static_cast<unsigned>(std::clamp<uint64_t>(
      options_.phf > 0 ? std::min<uint64_t>(options_.phf, shared_limit / std::max<uint64_t>(replica_bytes, 1))
                       : (48 * 1024) / std::max<uint64_t>(replica_bytes, 1),
      1, warps));
  const bool dense_fits = targets * dense_copies <= kMaxDenseSlots;
  if (options_.variant == StoreKind::shared || (!options_.variant && shared_fits)) {
    if (!shared_fits)
      throw InputError(text("gpu engine: variant shared needs ", shared_store_bytes(fields, targets),
                            " bytes of shared memory per block for ", targets, " targets; this GPU allows ",
                            shared_limit));
    p.copies = replicas;
    return StoreKind::shared;
  }
  if (options_.variant == StoreKind::dense || (!options_.variant && dense_fits) || dense_only) {
    if (!dense_fits)
      throw InputError(text("gpu engine: variant dense needs ", targets * dense_copies, " slots for ", targets,
                            " targets x ", dense_copies, " copies; at most ", kMaxDenseSlots));
    p.copies = dense_copies;
    return StoreKind::dense;
  }
  return StoreKind::hash;
}

Preagg GpuEngine::choose_preagg(KernelKind kernel, uint64_t targets, const MapImage& map) const {
  const bool lean = map.is_lean();
  const bool constant_map = options_.map_memory == MapMemory::constant;
  Preagg preagg;
  // Thread runs need a lean map. Otherwise lane 0 pre-aggregation was the
  // fastest or within noise of it on every thesis query with up to 28 K
  // targets (H200, scale 1); past that, none. CDP children get the thesis'
  // strided shuffle (§4.3.4); the work list's neighbouring pairs mostly
  // hold different targets of one cell.
  if (!options_.preagg && kernel == KernelKind::source)
    preagg = lean && map.narrow && !constant_map ? Preagg::run : targets <= 65536 ? Preagg::lane0 : Preagg::none;
  else if (!options_.preagg)
    preagg = uses_cdp(kernel) ? Preagg::stride : Preagg::none;
  else
    preagg = *options_.preagg;
  if (preagg != Preagg::run) return preagg;
  if (kernel != KernelKind::source)
    throw InputError(text("gpu engine: --preagg run is the source kernel's; kernel ", knob_name(kernel),
                          " takes none, lane0, stride or match"));
  if (!lean)
    throw InputError(text("gpu engine: --preagg run needs a map with at most one target per base in at most ",
                          kFewDims, " restricted dimensions; this one has ", map.view.dims,
                          map.view.single ? "" : " and bases with several targets"));
  if (!map.narrow) throw InputError("gpu engine: --preagg run needs an area of fewer than 2^32 - 1 targets");
  if (constant_map)
    throw InputError(
        "gpu engine: --preagg run reads its own packed map from shared or global memory, not constant memory");
  return preagg;
}

StagePlan GpuEngine::plan_for(KernelKind kernel, int block, uint64_t targets, int fields, bool dense_only,
                              const MapImage& map, bool allow_shared) const {
  StagePlan p{};
  p.kernel = kernel;
  p.store = choose_store(p, kernel, block, targets, fields, dense_only, allow_shared);
  p.preagg = choose_preagg(kernel, targets, map);
  p.block = block;
  const uint64_t area = std::max<uint64_t>(targets, 1);
  const size_t shared_limit = ctx_.props().sharedMemPerBlockOptin - 1024;
  p.shared_bytes = p.store == StoreKind::shared ? shared_store_bytes(fields, area * p.copies) : 0;
  if (p.preagg == Preagg::run) {
    const size_t store_bytes = (p.shared_bytes + 15) & ~size_t{15};
    const size_t positions_bytes = size_t{map.lean.entries} * sizeof(uint32_t);
    p.map_in_shared = positions_bytes <= kLeanSharedBytes && store_bytes + positions_bytes <= shared_limit;
    if (p.map_in_shared) p.shared_bytes = store_bytes + positions_bytes;
  }
  const int multiprocessors = ctx_.multiprocessors();
  if (uses_cdp(kernel)) {
    // The thesis ran two parent blocks per multiprocessor (30 on a K40c),
    // which leaves room for children to run beside their parents.
    if (!cdp_block_supported(block))
      throw InputError(text("gpu engine: kernel ", knob_name(kernel), " takes --block 128, 256, 512 or 1024, not ",
                            block));
    p.resident = 2;
    p.grid = options_.grid > 0 ? options_.grid : 2 * multiprocessors;
    return p;
  }
  // A shared store that fits a block's limit may still leave no room for
  // the kernel's own shared memory or registers: auto then takes another.
  const bool retry_without_shared = p.store == StoreKind::shared && !options_.variant;
  if (kernel == KernelKind::work_list) {
    p.resident =
        work_list_blocks_per_sm(p.store, p.preagg, fields, map.view.dims <= kFewDims, p.block, p.shared_bytes);
    if (p.resident == 0 && retry_without_shared) return plan_for(kernel, block, targets, fields, dense_only, map, false);
    if (p.resident == 0)
      throw InputError(text("gpu engine: blocks of ", block, " threads do not fit on a multiprocessor with the ",
                            "work-list kernel and this store; choose a smaller --block"));
    p.grid = options_.grid > 0 ? options_.grid : p.resident * multiprocessors;
    return p;
  }
  p.resident = p.preagg == Preagg::run
                   ? lean_run_blocks_per_sm(p.store, fields, map.lean.dims, p.block, p.shared_bytes)
                   : resident_blocks_per_sm(p.store, p.preagg, fields, map.is_lean(), map.view.dims <= kFewDims,
                                            p.block, p.shared_bytes);
  if (p.resident == 0 && retry_without_shared) return plan_for(kernel, block, targets, fields, dense_only, map, false);
  if (p.resident == 0 && options_.block > 0)
    throw InputError(text("gpu engine: blocks of ", block, " threads do not fit on a multiprocessor with this kernel ",
                          "and store (registers or shared memory); choose a smaller --block"));
  p.grid = options_.grid > 0 ? options_.grid : std::max(1, p.resident) * multiprocessors;
  return p;
}

}  // namespace gpuolap::gpu
