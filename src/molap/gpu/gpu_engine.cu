// The gpu engine: an area query's stages in order (gpu_engine.cuh lists
// them and the files that hold them), the engine's knobs checked, and the
// limits of what it answers.
#include <cstdlib>

#include "gpuolap/error.hpp"
#include "molap/gpu/gpu_engine.cuh"
#include "molap/gpu/gpu_engine.hpp"
#include "molap/gpu/multi_gpu_engine.hpp"
#include "gpu/runtime/text.hpp"

namespace gpuolap {

namespace gpu {

GpuEngine::GpuEngine(const GpuOptions& o, std::string name, int device)
    : options_(o), name_(std::move(name)), ctx_(device), compactor_(ctx_) {
  GPUOLAP_CUDA_CHECK(cudaEventCreateWithFlags(&expand_sent_, cudaEventDisableTiming));
  costs_ = load_kernel_costs(ctx_.props().name, &costs_source_);
}

namespace {
// Why no gpu engine answers this query, whatever the facts, or "".
std::string query_limit(const AggregationMap& map) {
  const size_t walked = map.walked().size();
  if (walked > static_cast<size_t>(kMaxDims))
    return text("the query restricts ", walked, " dimensions (lists other than a total over every base); the gpu ",
                "engine handles up to ", kMaxDims);
  return "";
}
}  // namespace

GpuEngine::~GpuEngine() { cudaEventDestroy(expand_sent_); }

AreaResult GpuEngine::run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) {
  return run_part(facts, map, query, FactSlice{}, false).result;
}

QueryPart GpuEngine::run_part(const FactTable& facts, const AggregationMap& map, const AreaQuery& query,
                               const FactSlice& slice, bool as_part) {
  const size_t end = std::min(slice.end, facts.size());
  const size_t held = end - std::min(slice.begin, end);
  if (held >= gpu::kMaxFactsPerDevice)
    throw InputError(gpu::text("gpu engine: GPU ", ctx_.device(), " would hold ", held,
                               " facts; a GPU holds fewer than 2^32 (--gpus all splits a table over every GPU)"));
  if (const std::string limit = query_limit(map); !limit.empty()) throw InputError("gpu engine: " + limit);
  const bool with_counts = as_part && query.aggregate == Aggregate::avg;
  ctx_.bind();
  StageClock clock(ctx_.stream(), ctx_.events(), time_stages_);
  cdp_.begin_query();

  clock.start("upload");
  const CubeUpdate update = cube_.ensure(facts, query.measure, ctx_.stream(), slice);
  clock.stop();

  clock.start("plan");
  QueryPlan plan = plan_query(facts, map, query);
  clock.stop();

  clock.start("map");
  upload_maps(plan);
  clock.stop();

  clock.start("prefilter");
  const Inputs inputs = prefilter(plan, map, query.measure);
  clock.stop();

  const Expansion expansion = plan.two_phase ? run_phase_one(map, inputs, plan, clock) : Expansion{};
  const bool with_sums =
      as_part && (plan.fields & kExact) && (query.aggregate == Aggregate::sum || query.aggregate == Aggregate::avg);
  Windows windows = aggregate_windows(plan, inputs, expansion, with_counts ? Aggregate::sum : query.aggregate,
                                      with_counts, with_sums, clock);

  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));  // the pair count has arrived
  stages_ = clock.read();
  // Phase 2's pair count: in mapped host memory, written by the expansion.
  const uint64_t contributions = plan.two_phase ? *static_cast<const uint64_t*>(count_staging_.data()) : 0;
  // Phase 2 adds each contribution once, without pre-aggregation.
  target_updates_ = count_updates_ ? expansion.updates + windows.updates + contributions : 0;
  plan_text_ = [facts_of_plan = plan_facts(plan, update, inputs, expansion.store, contributions, windows.chunks)] {
    return describe_plan(facts_of_plan);
  };
  return {std::move(windows.result), std::move(windows.counts), std::move(windows.sums)};
}

PlanFacts GpuEngine::plan_facts(const QueryPlan& plan, const CubeUpdate& update, const Inputs& inputs,
                                StoreKind final_store, uint64_t contributions, uint64_t chunks) const {
  PlanFacts p;
  p.host = plan.host;
  p.auto_plan = plan.auto_plan;
  p.kernel_auto = !options_.kernel;
  p.two_phase = plan.two_phase;
  p.update_kind = update.kind == CubeUpdate::full ? "uploaded" : update.kind == CubeUpdate::patched ? "patched"
                                                                                                     : "resident";
  p.update_cells = update.cells;
  p.resident_cells = cube_.size();
  p.added_cells = cube_.added_size();
  p.device_bytes = cube_.bytes();
  const StagePlan& s = plan.stage;
  p.kernel = s.kernel;
  p.view_dims = plan.image.view.dims;
  p.lean_dims = plan.image.lean.dims;
  p.lean = plan.image.is_lean();
  p.constant_map = plan.constant_map;
  p.map_in_shared = s.map_in_shared;
  p.store = s.store;
  p.copies = s.copies;
  p.copies_given = options_.phf > 0;
  p.slot_budget = static_cast<uint64_t>(slot_budget(costs_, s.store == StoreKind::hash ? StoreKind::hash : StoreKind::dense));
  p.store_targets = plan.first_targets;
  p.preagg = s.preagg;
  p.grid = s.grid;
  p.block = s.block;
  p.sum_limb_bits = (plan.fields & kExact) ? plan.grid.limb_bits : -1;
  const CdpRounds::Totals& cdp = cdp_.totals();
  p.child_kernels = cdp.at[kChildKernels];
  p.child_blocks = cdp.at[kChildBlocks];
  p.direct_pages = cdp.at[kDirectPages];
  p.handed_pages = cdp.at[kHandedPages];
  p.child_grid = options_.child_grid;
  p.sync_every = cdp_.sync_every();
  p.rounds = cdp_.rounds();
  p.ends_bytes = cdp_.ends_bytes();
  p.pending_limit = cdp_.pending_limit();
  p.pending_pool_bytes = cdp_.pending_pool_bytes();
  p.class_tuples = plan.classes.cells;
  p.contributions = contributions;
  p.final_store = final_store;
  p.compact = plan.compact;
  p.pages_skipped = plan.page_list_at ? cube_.page_count() - plan.page_list.size() : 0;
  p.page_count = cube_.page_count();
  p.relevant = inputs.resident.n;
  p.chunks = chunks;
  p.targets = plan.targets;
  return p;
}

}  // namespace gpu

std::string gpu_engine_limit(const FactTable& facts, const AggregationMap& map, size_t devices) {
  if (std::string limit = gpu::query_limit(map); !limit.empty()) return limit;
  // The slices are balanced by bytes in whole pages, so each of `devices`
  // gets its share give or take a page; run_part checks the slice it is given.
  if ((facts.size() + devices - 1) / devices + facts.page_size() >= gpu::kMaxFactsPerDevice)
    return gpu::text("the table has ", facts.size(), " facts; a GPU holds fewer than 2^32 of them",
                     devices > 1 ? gpu::text(", and ", devices, " GPUs fewer than ", devices, " x 2^32")
                                 : std::string(" (--gpus all splits a table over every GPU)"));
  return "";
}

std::unique_ptr<Engine> make_gpu_engine(const GpuOptions& options, const std::string& name, int device,
                                        bool every_gpu_when_faster) {
  GpuOptions o = options;
  if (name == "gpu-cdp") {
    // The CDP engine: the thesis' CDP kernel, or the hybrid.
    if (!o.kernel) o.kernel = KernelKind::cdp;
    if (o.kernel != KernelKind::cdp && o.kernel != KernelKind::hybrid)
      throw InputError(gpu::text("engine gpu-cdp runs --kernel cdp or hybrid, not ", knob_name(*o.kernel),
                                 " (use engine gpu)"));
  }
  if (o.sync_every < 0) throw InputError("--sync-every must be 0 (no synchronisation) or a number of pages");
  if (o.phf < 0) throw InputError("--phf must be at least 1 (0 lets the engine choose)");
  if (o.block != 0 && (o.block < 32 || o.block > 1024 || o.block % 32 != 0))
    throw InputError("--block must be a multiple of 32 between 32 and 1024");
  if (o.grid < 0) throw InputError("--grid must be positive (0 lets the engine choose)");
  if (!(o.store_memory_mb >= 0)) throw InputError("--store-memory must be a size in MiB (0 lets the engine choose)");
  // GPUOLAP_GPUS is the default of --gpus: `GPUOLAP_GPUS=all ctest -L gpu`
  // runs every gpu test again over every GPU, and GPUOLAP_GPUS=0,0 over two
  // contexts on one.
  if (const char* env = std::getenv("GPUOLAP_GPUS"); o.gpus.unset() && env && *env)
    o.gpus = parse_gpu_set(env, "GPUOLAP_GPUS");
  int count = 0;
  GPUOLAP_CUDA_CHECK(cudaGetDeviceCount(&count));
  std::vector<int> devices;
  if (o.gpus.all || (o.gpus.unset() && every_gpu_when_faster))
    for (int d = 0; d < count; ++d) devices.push_back(d);
  for (const int d : o.gpus.devices)
    if (d >= count)
      throw InputError(gpu::text("--gpus ", gpu_set_name(o.gpus), ": there is no GPU ", d, " (this machine has ", count,
                                 count == 1 ? " GPU, number 0)" : " GPUs, numbered 0 to " + std::to_string(count - 1) + ")"));
  if (!o.gpus.devices.empty()) devices = o.gpus.devices;
  if (devices.size() > 1) return gpu::make_multi_gpu_engine(o, name, devices, !o.gpus.unset());
  return std::make_unique<gpu::GpuEngine>(o, name, devices.empty() ? device : devices.front());
}

}  // namespace gpuolap
