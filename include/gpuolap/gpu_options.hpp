#pragma once
// The knobs of the gpu engine (thesis §4.2 and past it), typed. Each knob is
// an enum with one table of names (gpu_options.cpp) that parses and prints
// it; strings exist only at the edges (CLI, HTTP, plan text). A knob left
// empty (std::nullopt, spelled "auto") lets the engine choose from the
// query's shape.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuolap {

// Where targets accumulate (--variant): a hash table keyed by target
// (thesis §4.2.2), a dense array, or block-private arrays in shared memory
// flushed to a dense array.
enum class StoreKind { hash, dense, shared };

// Warp pre-aggregation before the atomic update (--preagg;
// gpu/primitives/warp_preaggregate.cuh).
enum class Preagg { none, lane0, stride, match, run };

// Page prefilter (--prefilter): compact the relevant cells first (CUB
// select, as the thesis), or let the kernel skip them itself.
enum class Prefilter { compact, fused };

// Where the aggregation map lives (--map-memory).
enum class MapMemory { constant, global };

// The kernel over the facts (--kernel).
enum class KernelKind {
  source,     // thesis §4.2: a thread per source cell walks its targets
  work_list,  // a thread per (source, target) pair, after a scan of the fan-outs
  cdp,        // thesis §4.3: parent blocks launch children over their pages' pairs
  hybrid,     // thesis §6: the parent writes even pages, children take uneven ones
};

// CDP child grids (--child-grid): one sized to its pairs, or one block that loops.
enum class ChildGrid { dynamic, fixed };

// Two-phase aggregation (--two-phase): per class tuple, then expanded.
enum class TwoPhase { on, off };

// The GPUs an engine runs on (--gpus). Unset: the gpu engines take the
// current GPU, and `auto` every visible one when the facts are enough to
// gain from it (else one). "all": every visible GPU. A list ("0,1"): those
// devices; one named twice gets a context per mention, which runs the
// several-GPU path on one GPU (how the tests exercise it on a one-GPU
// machine). On several GPUs the facts are split by pages, balanced by
// bytes (molap/gpu/multi_gpu_engine.cu).
struct GpuSet {
  bool all = false;
  std::vector<int> devices;  // when not `all`
  bool unset() const { return !all && devices.empty(); }
};
// "all" or comma-separated device numbers; anything else is an InputError
// naming the flag. Whether a device exists is the engine's to check.
GpuSet parse_gpu_set(std::string_view text, std::string_view flag);
// "all", "0,1", or "auto" when unset.
std::string gpu_set_name(const GpuSet& set);

struct GpuOptions {
  std::optional<StoreKind> variant;
  int phf = 0;  // parallel hash functions: copies of each target (shared: replicas per block); 0 chooses
  std::optional<Preagg> preagg;
  std::optional<Prefilter> prefilter;
  std::optional<MapMemory> map_memory;  // auto: global (constant serialises lanes on Hopper)
  std::optional<TwoPhase> two_phase;
  std::optional<KernelKind> kernel;
  ChildGrid child_grid = ChildGrid::dynamic;  // cdp, hybrid
  int sync_every = 0;  // cdp, hybrid: synchronise parents with their children every k pages (0: never)
  int block = 0;       // threads per block; 0 chooses
  int grid = 0;        // blocks; 0 chooses
  double store_memory_mb = 0;  // device memory a query's target store may take; past it the
                               // area is aggregated in chunks (0: what the GPU has free)
  GpuSet gpus;
};

// The name of a knob's value, as the CLI spells it ("work-list").
template <class Knob>
const char* knob_name(Knob value);
// "auto" for an empty knob.
template <class Knob>
std::string knob_name(const std::optional<Knob>& value) {
  return value ? knob_name(*value) : "auto";
}
// A knob's value from its name; an unknown name is an InputError naming
// the flag and listing the valid names ("--preagg sideways: expected one of
// none, lane0, stride, match, run").
template <class Knob>
Knob parse_knob(std::string_view name, std::string_view flag);
// The same with "auto" (nullopt) allowed, and listed first.
template <class Knob>
std::optional<Knob> parse_auto_knob(std::string_view name, std::string_view flag);
// The valid names, comma-separated ("auto, " first when `with_auto`), for help texts.
template <class Knob>
std::string knob_names(bool with_auto);

}  // namespace gpuolap
