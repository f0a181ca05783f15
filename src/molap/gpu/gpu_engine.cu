// The gpu engine's pipeline (thesis §4.2), each stage timed with CUDA events
// when asked (time_stages: the events cost every query some 20 driver calls):
//   upload    facts to the device once, then only the cells written since
//             (device_cube.cuh)
//   plan      on the host: the kernel's map (or, two-phase, the classes and
//             the class map), the kernel, store and launch shape
//   map       the maps to global memory in one copy (or constant memory);
//             the thread-run kernel copies its packed map to shared memory
//   prefilter skip pages without relevant cells, compact the relevant cells
//             (CUB select) — or, fused, let the kernel skip them itself (the
//             thread-run kernel gets the list of pages to read)
//   table     allocate and clear the target store
//   aggregate the source-based kernel with the chosen store and pre-aggregation
//   expand    two-phase: phase 2's map, built on the host and sent on a
//             stream of its own while phase 1 runs; the class tuples' cells
//             and target counts in one pass, a CUB scan of the counts, then
//             a thread per (tuple, target) pair
//   compact   merge each target's copies into one cell (CUB sort + reduce-by-key
//             for the hash store, a reduction over copies for dense stores
//             of several) and keep the filled ones (CUB select; a store of
//             one copy is selected from directly) — for dense stores of
//             areas up to 64 MB of results straight into pinned host memory
//   copy back targets and values to the host, through pinned memory
// An area whose store would not fit runs table..copy back once per window of
// target numbers; repeated stages' times are summed.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/zip_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <optional>
#include <sstream>

#include "aggregate_kernel.cuh"
#include "aggregate_kernels.hpp"
#include "cdp_kernels.hpp"
#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_cube.cuh"
#include "gpu/runtime/pinned_buffer.cuh"
#include "molap/planning/relevant_pages.hpp"
#include "gpu_engine.hpp"
#include "gpuolap/error.hpp"
#include "molap/planning/kernel_model.hpp"
#include "molap/planning/map_images.hpp"
#include "molap/planning/target_classes.hpp"

namespace gpuolap {

namespace gpu {
namespace {

// Joins its arguments as text (fmt does not compile under nvcc).
template <class... Args>
std::string text(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

// The plan stage's host steps in microseconds, for the plan text: where a
// query's planning goes on the machine it runs on. Steps are recorded, and
// put in words only when the plan is read.
class HostSteps {
 public:
  void step(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - last_).count();
    if (count_ < kMost) steps_[count_++] = {name, us};
    last_ = now;
  }
  std::string said() const {
    std::string out;
    for (int i = 0; i < count_; ++i) out += text(i ? ", " : "host us: ", steps_[i].first, " ", steps_[i].second);
    return out.empty() ? out : out + "; ";
  }
  // The next step starts now (the time since the last one was not planning).
  void resume() { last_ = std::chrono::steady_clock::now(); }

 private:
  static constexpr int kMost = 8;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
  std::pair<const char*, long long> steps_[kMost];
  int count_ = 0;
};

int fields_of(Aggregate a) {
  switch (a) {
    case Aggregate::sum: return kSumFields;
    case Aggregate::count:
    case Aggregate::avg: return kSumCountFields;
    case Aggregate::min: return kMinFields;
    case Aggregate::max: return kMaxFields;
  }
  return kSumFields;
}

// Whether cell i is relevant: on a relevant page, with a value, and with a
// target in every dimension.
struct IsRelevant {
  const uint64_t* keys;
  const double* values;
  const uint8_t* page_relevant;
  uint64_t page_size;
  DeviceMap map;
  __device__ bool operator()(uint32_t i) const {
    if (!page_relevant[i / page_size]) return false;
    const double v = values[i];
    if (v != v) return false;
    const uint64_t key = keys[i];
    for (int d = 0; d < map.dims; ++d) {
      const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
      const uint32_t* offsets = reinterpret_cast<const uint32_t*>(map.global + map.offsets_at[d]);
      if (offsets[b] == offsets[b + 1]) return false;
    }
    return true;
  }
};

__global__ void fill_u64(uint64_t* p, uint64_t n, uint64_t value) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    p[i] = value;
}

// The query's value of a merged cell.
__device__ inline double finish_value(const Cell& c, Aggregate a) {
  if (a == Aggregate::count) return static_cast<double>(c.count);
  if (a == Aggregate::avg) return c.sum / static_cast<double>(c.count);
  if (a == Aggregate::min) return decode_ordered(c.min);
  if (a == Aggregate::max) return decode_ordered(c.max);
  return c.sum;
}

// Merges the copies of each dense target into one cell (or, with `values`,
// straight into the query's value); flags non-empty ones.
template <int F>
__global__ void reduce_dense(TargetTable t, Cell* cells, double* values, Aggregate a, uint8_t* nonempty) {
  for (uint64_t x = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; x < t.targets;
       x += uint64_t{gridDim.x} * blockDim.x) {
    Cell c{0.0, 0ull, kMinIdentity, kMaxIdentity};
    const bool any = merge_dense_copies<F>(t, x, c);
    if (values) values[x] = finish_value(c, a);
    else cells[x] = c;
    nonempty[x] = any;
  }
}

// Reads the fields of occupied hash slots into cells.
template <int F>
__global__ void gather_slots(TargetTable t, const uint32_t* slots, uint64_t n, Cell* cells) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x) {
    const uint32_t s = slots[i];
    Cell c{0.0, 0ull, kMinIdentity, kMaxIdentity};
    if (F & kSum) c.sum = t.sum[s];
    if (F & kCount) c.count = t.count[s];
    if (F & kMin) c.min = t.min[s];
    if (F & kMax) c.max = t.max[s];
    cells[i] = c;
  }
}

__global__ void finish_cells(const Cell* cells, uint64_t n, Aggregate a, double* out) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    out[i] = finish_value(cells[i], a);
}

// A store of one copy per target (a shared store's flush, phase 2's dense
// store, a one-phase dense store of one copy) is read by the compaction
// itself: slot x holds target first + x, and its value and whether it has
// one need no merge of copies first.
struct OneCopyValue {
  TargetTable t;
  Aggregate a;
  __device__ double operator()(uint64_t x) const {
    switch (a) {
      case Aggregate::count: return static_cast<double>(t.count[x]);
      case Aggregate::avg: return t.sum[x] / static_cast<double>(t.count[x]);
      case Aggregate::min: return decode_ordered(t.min[x]);
      case Aggregate::max: return decode_ordered(t.max[x]);
      default: return t.sum[x];
    }
  }
};
struct OneCopyFilled {
  TargetTable t;
  bool counted;  // the store keeps counts (else touched flags)
  __device__ bool operator()(uint64_t x) const { return counted ? t.count[x] > 0 : t.touched[x] != 0; }
};

struct NotEmpty {
  __host__ __device__ bool operator()(uint64_t key) const { return key != kEmptyKey; }
};

uint64_t next_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

Preagg parse_preagg(const std::string& s) {
  if (s == "none") return Preagg::none;
  if (s == "lane0") return Preagg::lane0;
  if (s == "stride") return Preagg::stride;
  if (s == "run") return Preagg::run;
  return Preagg::match;
}

const char* preagg_name(Preagg p) {
  switch (p) {
    case Preagg::none: return "none";
    case Preagg::lane0: return "lane0";
    case Preagg::stride: return "stride";
    case Preagg::match: return "match";
    case Preagg::run: return "run";
  }
  return "?";
}

const char* store_name(StoreKind s) {
  switch (s) {
    case StoreKind::hash: return "hash";
    case StoreKind::dense: return "dense";
    case StoreKind::shared: return "shared";
  }
  return "?";
}

// The kernel over the facts (--kernel).
enum class KernelKind {
  source,     // thesis §4.2: a thread per source cell walks its targets
  work_list,  // a thread per (source, target) pair, after a scan of the fan-outs
  cdp,        // thesis §4.3: parent blocks launch children over their pages' pairs
  hybrid,     // thesis §6: the parent writes even pages, children take uneven ones
};

KernelKind parse_kernel(const std::string& s) {
  if (s == "work-list") return KernelKind::work_list;
  if (s == "cdp") return KernelKind::cdp;
  if (s == "hybrid") return KernelKind::hybrid;
  return KernelKind::source;
}

const char* kernel_name(KernelKind k) {
  switch (k) {
    case KernelKind::source: return "source";
    case KernelKind::work_list: return "work-list";
    case KernelKind::cdp: return "cdp";
    case KernelKind::hybrid: return "hybrid";
  }
  return "?";
}

bool uses_cdp(KernelKind k) { return k == KernelKind::cdp || k == KernelKind::hybrid; }

// The compaction of a dense store of areas up to this many bytes (16 per
// target) writes the filled targets and their count straight into pinned
// host memory (mapped; a few writes over PCIe): no copy after it, and no
// wait for the count before one. Larger areas keep their results on the
// device, wait for the count, then copy only the filled targets.
constexpr uint64_t kStraightToHostBytes = uint64_t{64} << 20;

// Source cells per work-list segment: its counts and sums take 8 bytes each.
constexpr uint64_t kWorkListSegment = uint64_t{1} << 24;

// CUDA events kept for the stage clocks of every query: creating and
// destroying two per stage took host time from each query (some 20 of them).
class EventPool {
 public:
  EventPool() = default;
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;
  ~EventPool() {
    for (cudaEvent_t e : events_) cudaEventDestroy(e);
  }
  // Event i, created on first use.
  cudaEvent_t at(size_t i) {
    while (events_.size() <= i) {
      cudaEvent_t e;
      GPUOLAP_CUDA_CHECK(cudaEventCreate(&e));
      events_.push_back(e);
    }
    return events_[i];
  }

 private:
  std::vector<cudaEvent_t> events_;
};

// Times the stages of one query with CUDA events on one stream (the
// engine's pool: one query at a time); when not `on`, it records nothing.
class StageClock {
 public:
  StageClock(cudaStream_t s, EventPool& pool, bool on) : stream_(s), pool_(pool), on_(on) {}
  StageClock(const StageClock&) = delete;
  StageClock& operator=(const StageClock&) = delete;
  void start(const char* name) {
    if (!on_) return;
    const cudaEvent_t a = pool_.at(2 * marks_.size());
    const cudaEvent_t b = pool_.at(2 * marks_.size() + 1);
    GPUOLAP_CUDA_CHECK(cudaEventRecord(a, stream_));
    marks_.push_back({name, a, b});
  }
  void stop() {
    if (on_) GPUOLAP_CUDA_CHECK(cudaEventRecord(std::get<2>(marks_.back()), stream_));
  }
  size_t size() const { return marks_.size(); }
  // Forgets the stages after the first n (an attempt that is retried).
  void truncate(size_t n) { marks_.resize(std::min(n, marks_.size())); }
  // Stage times, once the stream has passed them; a stage run more than
  // once (per chunk) is summed.
  StageTimes read() {
    StageTimes out;
    for (auto& [name, start, stop] : marks_) {
      float ms = 0;
      GPUOLAP_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      auto same = std::find_if(out.begin(), out.end(), [&](const auto& stage) { return stage.first == name; });
      if (same != out.end()) same->second += ms;
      else out.emplace_back(name, ms);
    }
    return out;
  }

 private:
  cudaStream_t stream_;
  EventPool& pool_;
  bool on_;
  std::vector<std::tuple<std::string, cudaEvent_t, cudaEvent_t>> marks_;
};

}  // namespace
}  // namespace gpu

namespace {

using namespace gpu;

static_assert(kMaxIdentity == 0, "the maxima start as zero bytes, with the other zeroed fields");

// Device arrays of one target store; they grow and are reused by queries.
struct TableBuffers {
  DeviceBuffer<uint64_t> keys;
  // The fields that start as zero bytes (sums, counts, the maxima's
  // identity, touched flags), one after another, cleared by one memset: a
  // memset per field cost each of M3's two stores an operation on the stream.
  DeviceBuffer<uint8_t> zeroed;
  DeviceBuffer<unsigned long long> min;
  DeviceBuffer<unsigned> overflow;

  // Allocates and clears a store of the targets [first, first + targets),
  // `copies` each.
  TargetTable prepare(StoreKind store, uint64_t first, uint64_t targets, unsigned copies, uint64_t hash_slots,
                      int fields, cudaStream_t s) {
    TargetTable t{};
    t.first = first;
    // A shared store's copies are replicas in each block's shared memory;
    // it flushes into one dense copy in global memory.
    t.copies = store == StoreKind::shared ? 1 : copies;
    t.replicas = store == StoreKind::shared ? copies : 1;
    t.targets = targets;
    t.slots = store == StoreKind::hash ? hash_slots : targets * t.copies;
    if (store == StoreKind::hash) {
      keys.reserve(t.slots);
      t.keys = keys.data();
      fill_u64<<<256, 256, 0, s>>>(t.keys, t.slots, kEmptyKey);
      GPUOLAP_CHECK_LAUNCH("fill_u64");
    }
    // Each field's array 8-byte aligned: they take 8 bytes a slot, the
    // touched flags (dense stores) one and come last.
    const bool dense = store != StoreKind::hash;
    const uint64_t count_at = (fields & kSum) ? 8 * t.slots : 0;
    const uint64_t max_at = count_at + ((fields & kCount) ? 8 * t.slots : 0);
    const uint64_t touched_at = max_at + ((fields & kMax) ? 8 * t.slots : 0);
    const uint64_t zero_bytes = touched_at + (dense ? t.slots : 0);
    if (zero_bytes > 0) {
      zeroed.reserve(zero_bytes);
      uint8_t* z = zeroed.data();
      if (fields & kSum) t.sum = reinterpret_cast<double*>(z);
      if (fields & kCount) t.count = reinterpret_cast<unsigned long long*>(z + count_at);
      if (fields & kMax) t.max = reinterpret_cast<unsigned long long*>(z + max_at);  // kMaxIdentity is 0
      if (dense) t.touched = z + touched_at;
      GPUOLAP_CUDA_CHECK(cudaMemsetAsync(z, 0, zero_bytes, s));
    }
    if (fields & kMin) {
      min.reserve(t.slots);
      t.min = min.data();
      fill_u64<<<256, 256, 0, s>>>(reinterpret_cast<uint64_t*>(t.min), t.slots, kMinIdentity);
      GPUOLAP_CHECK_LAUNCH("fill_u64");
    }
    // Only a hash store can overflow (and only its flag is read back).
    if (store == StoreKind::hash) {
      overflow.reserve(1);
      t.overflow = overflow.data();
      GPUOLAP_CUDA_CHECK(cudaMemsetAsync(t.overflow, 0, sizeof(unsigned), s));
    }
    return t;
  }
  void release() { *this = TableBuffers(); }
};

// Bytes of the stored fields of one slot.
uint64_t field_bytes(int fields) {
  return ((fields & kSum) ? 8 : 0) + ((fields & kCount) ? 8 : 0) + ((fields & kMin) ? 8 : 0) + ((fields & kMax) ? 8 : 0);
}

// Device bytes a store of `window` targets and its compaction take: `entries`
// bounds the targets a hash store holds (at most one per update).
uint64_t store_bytes(StoreKind kind, uint64_t window, unsigned copies, int fields, uint64_t entries) {
  // Compaction per filled target: two cell arrays, a flag, target and value.
  const uint64_t per_target = 2 * sizeof(Cell) + 1 + 8 + 8;
  if (kind == StoreKind::hash) {
    const uint64_t occupied = std::min(window, std::max<uint64_t>(entries, 1)) * copies;
    uint64_t slots = 1024;
    while (slots < 2 * occupied) slots <<= 1;
    // Per slot: key, fields, and the compaction's flag, sorted key and two slot indices.
    return slots * (8 + field_bytes(fields) + 1 + 8 + 4 + 4) + occupied * per_target;
  }
  return window * copies * (field_bytes(fields) + 1) + window * per_target;
}

// Into cells, or with `values` (and `cells` null) into the query's values.
void reduce_dense_table(const TargetTable& t, int fields, Cell* cells, double* values, Aggregate a, uint8_t* nonempty,
                        cudaStream_t s) {
  const int grid = static_cast<int>(std::min<uint64_t>(4096, (t.targets + 255) / 256));
  switch (fields) {
    case kSumFields: reduce_dense<kSumFields><<<grid, 256, 0, s>>>(t, cells, values, a, nonempty); break;
    case kSumCountFields: reduce_dense<kSumCountFields><<<grid, 256, 0, s>>>(t, cells, values, a, nonempty); break;
    case kMinFields: reduce_dense<kMinFields><<<grid, 256, 0, s>>>(t, cells, values, a, nonempty); break;
    case kMinMaxFields: reduce_dense<kMinMaxFields><<<grid, 256, 0, s>>>(t, cells, values, a, nonempty); break;
    default: reduce_dense<kMaxFields><<<grid, 256, 0, s>>>(t, cells, values, a, nonempty); break;
  }
  GPUOLAP_CHECK_LAUNCH("reduce_dense");
}

class GpuEngine final : public Engine {
 public:
  GpuEngine(const GpuOptions& o, std::string name) : options_(o), name_(std::move(name)) {
    GPUOLAP_CUDA_CHECK(cudaGetDevice(&device_));
    GPUOLAP_CUDA_CHECK(cudaGetDeviceProperties(&props_, device_));
    GPUOLAP_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GPUOLAP_CUDA_CHECK(cudaStreamCreateWithFlags(&side_stream_, cudaStreamNonBlocking));
    GPUOLAP_CUDA_CHECK(cudaEventCreateWithFlags(&expand_sent_, cudaEventDisableTiming));
    costs_ = load_kernel_costs(props_.name, &costs_source_);
  }
  ~GpuEngine() override {
    cudaEventDestroy(expand_sent_);
    cudaStreamDestroy(side_stream_);
    cudaStreamDestroy(stream_);
  }

  std::string name() const override { return name_; }
  bool time_stages(bool on) override {
    time_stages_ = on;
    return true;
  }
  StageTimes stages() const override { return stages_; }
  std::string last_plan() const override { return plan_text_ ? plan_text_() : std::string(); }
  bool count_target_updates(bool on) override {
    count_updates_ = on;
    return true;
  }
  uint64_t last_target_updates() const override { return target_updates_; }

  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) override;

 private:
  // How the kernel over the facts runs: into which store, with how many
  // copies per target, which pre-aggregation and launch shape.
  struct StagePlan {
    KernelKind kernel;
    StoreKind store;
    Preagg preagg;
    unsigned copies;
    int block;
    int grid;
    size_t shared_bytes;
    bool map_in_shared;  // Preagg::run: the lean map's positions, after the store's replicas
    int resident;        // blocks per multiprocessor at once (0: this block size cannot launch)
  };
  StagePlan choose_stage(KernelKind kernel, uint64_t targets, int fields, bool dense_only, const MapImage& map) const;
  // allow_shared false: not the shared store (auto's choice when it leaves
  // no room for a block of the kernel).
  StagePlan plan_for(KernelKind kernel, int block, uint64_t targets, int fields, bool dense_only,
                     const MapImage& map, bool allow_shared = true) const;
  // Why the plan has its copies, for the plan text ("" when --phf gave them).
  std::string copies_origin(const StagePlan& plan, uint64_t targets) const;
  // The kernels over one input (the resident cells or those added since).
  void launch_work_list_segments(const StagePlan& plan, const KernelInput& in, const DeviceMap& map, int fields,
                                 const TargetTable& t);
  void launch_cdp_rounds(const StagePlan& plan, const KernelInput& in, const DeviceMap& map, int fields,
                         const TargetTable& t);
  // Reads the CDP counters after the aggregate stage; throws on a failed launch.
  void collect_cdp_stats();
  // The facts' kernel into a store of the targets [first, first + width).
  TargetTable aggregate_facts(const StagePlan& plan, const MapImage& image, const KernelInput& input,
                              const KernelInput& added, int fields, uint64_t first, uint64_t width, StageClock& clock);
  uint64_t read_updates();
  // Windows the area is aggregated in so that each window's store fits.
  uint64_t chunks_for(StoreKind kind, uint64_t targets, unsigned copies, int fields, uint64_t entries);
  // Frees the reusable store and compaction buffers.
  void release_stores();
  AreaResult compact_dense(const TargetTable& t, int fields, Aggregate a, StageClock& clock);
  AreaResult compact_hash(const TargetTable& t, int fields, Aggregate a, StageClock& clock);
  // Where results go in the pinned staging: a count, then room for `most`
  // targets, then `most` values, from the staging's first byte as the
  // device or the host addresses it.
  struct ResultStaging {
    uint64_t* count;
    uint64_t* targets;
    double* values;
    static ResultStaging at(void* first, uint64_t most) {
      auto* count = static_cast<uint64_t*>(first);
      return {count, count + 1, reinterpret_cast<double*>(count + 1 + most)};
    }
  };
  // The staging, grown to hold `most` results, as the device addresses it.
  ResultStaging stage_results(uint64_t most);
  // n targets and values on the device to the staging, then collected.
  AreaResult download(uint64_t n, const uint64_t* targets, const double* values, StageClock& clock);
  // Waits for the stream and reads the staged results: the first `count`
  // of them when counted, else all `most`.
  AreaResult collect(uint64_t most, bool counted, StageClock& clock);
  void* temp(size_t bytes) {
    temp_.reserve(bytes);
    return temp_.data();
  }

  GpuOptions options_;
  std::string name_;
  KernelCosts costs_;  // what `auto` chooses kernels by
  std::string costs_source_;
  int device_ = 0;
  cudaDeviceProp props_{};
  cudaStream_t stream_ = nullptr;
  // Phase 2's map goes up on a stream of its own while phase 1 runs;
  // `stream_` waits for the event before phase 2.
  cudaStream_t side_stream_ = nullptr;
  cudaEvent_t expand_sent_ = nullptr;
  EventPool events_;  // the stage clocks'
  DeviceCube cube_;
  bool time_stages_ = false;
  StageTimes stages_;  // the last query's, when timed
  // The last query's plan, put in words when it is read (formatting it took
  // some 10-20 us of every query's host time).
  std::function<std::string()> plan_text_;
  bool count_updates_ = false;
  uint64_t target_updates_ = 0;

  // Reused between queries; they only grow.
  TableBuffers first_, second_;  // the store of the facts' kernel; phase 2's
  // The trips of the maps, phase 2's map, the results and the pair count.
  PinnedBuffer upload_staging_, expand_staging_, download_staging_, count_staging_;
  DeviceBuffer<uint8_t> map_global_, expand_global_, page_relevant_, nonempty_, temp_;
  DeviceBuffer<uint32_t> cells_, slots_, slots_sorted_;
  DeviceBuffer<uint64_t> selected_count_, keys_sorted_, out_targets_, expand_ends_;
  DeviceBuffer<Cell> cells_a_, cells_b_, phase1_cells_;
  DeviceBuffer<double> values_a_, out_values_;
  DeviceBuffer<unsigned long long> updates_;
  // Work list: a segment's fan-outs, then their inclusive sums.
  DeviceBuffer<uint64_t> fan_out_ends_;
  // CDP: D (the parents' page scans), the counters, and what they said.
  DeviceBuffer<uint32_t> cdp_ends_;
  DeviceBuffer<unsigned long long> cdp_stats_;
  unsigned long long cdp_totals_[kCdpStatCount] = {};
  uint64_t cdp_ends_bytes_ = 0;   // D of the last query (thesis eq. 5.1)
  uint64_t cdp_rounds_ = 0;       // parent grids of the last query (1 + tail launches)
  size_t pending_limit_ = 0;      // the device's pending-launch limit at the last CDP query
  // Device memory the runtime took for pending launches (thesis fig. 5.5):
  // free memory before the limit was set, less after the first query that
  // launched under it (CUDA 13 reserves nothing at cudaDeviceSetLimit).
  size_t free_before_limit_ = 0;
  bool pool_measured_ = true;
  int64_t pending_pool_bytes_ = -1;
  int cdp_sync_every_ = 0;  // pages between synchronisations in the last query (0: none)
};

GpuEngine::StagePlan GpuEngine::choose_stage(KernelKind kernel, uint64_t targets, int fields, bool dense_only,
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

GpuEngine::StagePlan GpuEngine::plan_for(KernelKind kernel, int block, uint64_t targets, int fields, bool dense_only,
                                         const MapImage& map, bool allow_shared) const {
  const bool lean = map.is_lean();
  StagePlan p{};
  p.kernel = kernel;
  // Copies of each target (the thesis' parallel hash functions): the cost
  // model's slot budget of each global store over the area (kernel_model.hpp),
  // so few hot targets spread over many slots and large areas get one.
  const uint64_t area = std::max<uint64_t>(targets, 1);
  p.copies = options_.phf > 0 ? static_cast<unsigned>(options_.phf) : model_copies(costs_, GlobalStoreKind::hash, area);
  const unsigned dense_copies = options_.phf > 0 ? p.copies : model_copies(costs_, GlobalStoreKind::dense, area);
  const size_t shared_limit = props_.sharedMemPerBlockOptin - 1024;
  const uint64_t replica_bytes = shared_store_bytes(fields, area);
  // CDP children are grids of their own: they cannot share a parent block's
  // shared store.
  const bool shared_fits = allow_shared && replica_bytes <= shared_limit && !uses_cdp(kernel);
  if (options_.variant == "shared" && uses_cdp(kernel))
    throw InputError(text("gpu engine: kernel ", kernel_name(kernel), " writes from child grids, which cannot use a ",
                          "block's shared store; use --variant hash or dense"));
  // Replicas per block: one per warp while they take at most 48 KB (more
  // shared memory per block would cost resident blocks), or --phf.
  const uint64_t warps = static_cast<uint64_t>(block) / 32;
  const unsigned replicas = static_cast<unsigned>(std::clamp<uint64_t>(
      options_.phf > 0 ? std::min<uint64_t>(options_.phf, shared_limit / std::max<uint64_t>(replica_bytes, 1))
                       : (48 * 1024) / std::max<uint64_t>(replica_bytes, 1),
      1, warps));
  const bool dense_fits = targets * dense_copies <= kMaxDenseSlots;
  if (options_.variant == "shared" || (options_.variant == "auto" && shared_fits)) {
    if (!shared_fits)
      throw InputError(text("gpu engine: variant shared needs ", shared_store_bytes(fields, targets),
                            " bytes of shared memory per block for ", targets, " targets; this GPU allows ",
                            shared_limit));
    p.store = StoreKind::shared;
    p.copies = replicas;
  } else if (options_.variant == "dense" || (options_.variant == "auto" && dense_fits) || dense_only) {
    if (!dense_fits)
      throw InputError(text("gpu engine: variant dense needs ", targets * dense_copies, " slots for ", targets,
                            " targets x ", dense_copies, " copies; at most ", kMaxDenseSlots));
    p.store = StoreKind::dense;
    p.copies = dense_copies;
  } else {
    p.store = StoreKind::hash;
  }
  // Thread runs need a lean map. Otherwise lane 0 pre-aggregation was the
  // fastest or within noise of it on every thesis query with up to 28 K
  // targets (H200, scale 1); past that, none.
  const bool constant_map = options_.map_memory == "constant";
  // CDP children get the thesis' strided shuffle (§4.3.4); the work list's
  // neighbouring pairs mostly hold different targets of one cell.
  if (options_.preagg == "auto" && kernel == KernelKind::source)
    p.preagg = lean && map.narrow && !constant_map ? Preagg::run : targets <= 65536 ? Preagg::lane0 : Preagg::none;
  else if (options_.preagg == "auto")
    p.preagg = uses_cdp(kernel) ? Preagg::stride : Preagg::none;
  else
    p.preagg = parse_preagg(options_.preagg);
  if (p.preagg == Preagg::run && kernel != KernelKind::source)
    throw InputError(text("gpu engine: --preagg run is the source kernel's; kernel ", kernel_name(kernel),
                          " takes none, lane0, stride or match"));
  if (p.preagg == Preagg::run && !lean)
    throw InputError(text("gpu engine: --preagg run needs a map with at most one target per base in at most ",
                          kFewDims, " restricted dimensions; this one has ", map.view.dims,
                          map.view.single ? "" : " and bases with several targets"));
  if (p.preagg == Preagg::run && !map.narrow)
    throw InputError("gpu engine: --preagg run needs an area of fewer than 2^32 - 1 targets");
  if (p.preagg == Preagg::run && constant_map)
    throw InputError("gpu engine: --preagg run reads its own packed map from shared or global memory, not constant memory");
  p.block = block;
  p.shared_bytes = p.store == StoreKind::shared ? shared_store_bytes(fields, area * replicas) : 0;
  if (p.preagg == Preagg::run) {
    const size_t store_bytes = (p.shared_bytes + 15) & ~size_t{15};
    const size_t positions_bytes = size_t{map.lean.entries} * sizeof(uint32_t);
    p.map_in_shared = positions_bytes <= kLeanSharedBytes && store_bytes + positions_bytes <= shared_limit;
    if (p.map_in_shared) p.shared_bytes = store_bytes + positions_bytes;
  }
  if (uses_cdp(kernel)) {
    // The thesis ran two parent blocks per multiprocessor (30 on a K40c),
    // which leaves room for children to run beside their parents.
    if (!cdp_block_supported(block))
      throw InputError(text("gpu engine: kernel ", kernel_name(kernel), " takes --block 128, 256, 512 or 1024, not ",
                            block));
    p.resident = 2;
    p.grid = options_.grid > 0 ? options_.grid : 2 * props_.multiProcessorCount;
    return p;
  }
  // A shared store that fits a block's limit may still leave no room for
  // the kernel's own shared memory or registers: auto then takes another.
  const auto without_shared = [&] { return plan_for(kernel, block, targets, fields, dense_only, map, false); };
  if (kernel == KernelKind::work_list) {
    p.resident =
        work_list_blocks_per_sm(p.store, p.preagg, fields, map.view.dims <= kFewDims, p.block, p.shared_bytes);
    if (p.resident == 0 && p.store == StoreKind::shared && options_.variant == "auto") return without_shared();
    if (p.resident == 0)
      throw InputError(text("gpu engine: blocks of ", block, " threads do not fit on a multiprocessor with the ",
                            "work-list kernel and this store; choose a smaller --block"));
    p.grid = options_.grid > 0 ? options_.grid : p.resident * props_.multiProcessorCount;
    return p;
  }
  const int lean_dims = map.lean.dims;
  p.resident = p.preagg == Preagg::run
                   ? lean_run_blocks_per_sm(p.store, fields, lean_dims, p.block, p.shared_bytes)
                   : resident_blocks_per_sm(p.store, p.preagg, fields, lean, map.view.dims <= kFewDims, p.block,
                                            p.shared_bytes);
  if (p.resident == 0 && p.store == StoreKind::shared && options_.variant == "auto") return without_shared();
  if (p.resident == 0 && options_.block > 0)
    throw InputError(text("gpu engine: blocks of ", block, " threads do not fit on a multiprocessor with this kernel ",
                          "and store (registers or shared memory); choose a smaller --block"));
  p.grid = options_.grid > 0 ? options_.grid : std::max(1, p.resident) * props_.multiProcessorCount;
  return p;
}

std::string GpuEngine::copies_origin(const StagePlan& plan, uint64_t targets) const {
  if (options_.phf > 0) return {};
  switch (plan.store) {
    case StoreKind::shared: return " (replicas: up to one per warp within 48 KB)";
    case StoreKind::hash:
      return text(" (model: slot budget ", static_cast<uint64_t>(slot_budget(costs_, GlobalStoreKind::hash)), " over ",
                  targets, " targets)");
    default:
      return text(" (model: slot budget ", static_cast<uint64_t>(slot_budget(costs_, GlobalStoreKind::dense)), " over ",
                  targets, " targets)");
  }
}

AreaResult GpuEngine::run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) {
  if (const std::string limit = gpu_engine_limit(facts, map); !limit.empty()) throw InputError("gpu engine: " + limit);
  GPUOLAP_CUDA_CHECK(cudaSetDevice(device_));
  const int fields = fields_of(query.aggregate);
  const uint64_t targets = map.target_count();
  StageClock clock(stream_, events_, time_stages_);
  // What the CDP kernels did, summed over the inputs and windows of this query.
  std::fill(std::begin(cdp_totals_), std::end(cdp_totals_), 0ull);
  cdp_rounds_ = 0;
  cdp_ends_bytes_ = 0;

  clock.start("upload");
  const CubeUpdate update = cube_.ensure(facts, query.measure, stream_);
  clock.stop();

  // Two-phase when the facts fall into few class tuples: far fewer updates
  // than one per (fact, target). A map that already gives one target per
  // base to the lean kernel gains nothing from it (measured on B1 and M1:
  // 2.14 and 0.36 ms in one phase against 2.42 and 0.46 in two).
  clock.start("plan");
  HostSteps host;
  const bool direct_is_lean = direct_map_is_lean(map);
  KernelKind kernel = parse_kernel(options_.kernel);  // auto: source, unless the model says otherwise below
  // The pair kernels (work list, CDP, hybrid) answer uneven fan-out of the
  // direct map; two-phase aggregation's phase 1 has one target per cell.
  if (kernel != KernelKind::source && options_.two_phase == "on")
    throw InputError(text("gpu engine: kernel ", kernel_name(kernel), " aggregates in one phase; --two-phase on ",
                          "needs --kernel source"));
  const uint64_t max_cells = std::min<uint64_t>(uint64_t{1} << 22, std::max<uint64_t>(1024, facts.size() / 4));
  TargetClasses classes;
  if (kernel == KernelKind::source &&
      (options_.two_phase == "on" || (options_.two_phase == "auto" && !direct_is_lean)))
    classes = target_classes(map, max_cells);
  host.step("classes");
  const bool two_phase = classes.cells > 0;
  if (options_.two_phase == "on" && !two_phase)
    throw InputError(text("gpu engine: two-phase aggregation needs at most ", max_cells,
                          " class tuples; this area has more"));
  MapImage image = two_phase ? class_map_image(map, classes) : direct_map_image(map);
  host.step("map image");
  // `auto`: two-phase aggregation and thread runs make about one update per
  // fact; the pair kernels make one per contribution, so they are weighed
  // only where neither applies, by the cost model on a sample of the facts.
  std::string auto_plan;
  if (options_.kernel == "auto" && !two_phase && !direct_is_lean) {
    const FanOutStats stats = sample_fan_out(facts, map, query.measure);
    std::vector<KernelPrediction> predicted = predict_kernels(stats, costs_);
    // Only kernels the other knobs allow: CDP children cannot use a shared
    // store and need a compiled parent block size; runs are the source
    // kernel's.
    std::erase_if(predicted, [&](const KernelPrediction& p) {
      const KernelKind k = parse_kernel(p.kernel);
      if (options_.preagg == "run") return k != KernelKind::source;
      return uses_cdp(k) && (options_.variant == "shared" || (options_.block > 0 && !cdp_block_supported(options_.block)));
    });
    kernel = parse_kernel(predicted.front().kernel);
    std::string list;
    for (const KernelPrediction& p : predicted) list += text(list.empty() ? "" : ", ", p.kernel, " ", p.seconds * 1e3);
    auto_plan = text("auto chose kernel ", kernel_name(kernel), " (predicted aggregate ms: ", list, "; ",
                     stats.pairs / std::max(1.0, stats.relevant), " targets per relevant fact, warp efficiency ",
                     stats.pairs / std::max(1.0, 32 * stats.warp_steps), "; ", costs_source_, "); ");
  }
  host.step("kernel choice");
  const size_t map_bytes = image.image.bytes.size();
  // The thesis kept the map in constant memory. On Hopper that serialises
  // the lanes' different addresses (M3 ran 10x slower than with global
  // memory through L1), so it is used only when asked for.
  const bool constant_map = options_.map_memory == "constant";
  if (options_.map_memory == "constant" && map_bytes > kConstantMapBytes)
    throw InputError(text("gpu engine: the aggregation map takes ", map_bytes, " bytes, more than the ",
                          kConstantMapBytes, " of constant memory"));
  const uint64_t first_targets = two_phase ? classes.cells : targets;
  const int first_fields = two_phase && (fields & (kMin | kMax)) ? kMinMaxFields : fields;
  const bool lean = image.is_lean();
  const StagePlan plan = choose_stage(kernel, first_targets, first_fields, two_phase, image);
  host.step("launch shape");
  const bool compact = options_.prefilter == "compact";
  // The thread-run kernel skips the resident pages without a relevant cell
  // itself (fused prefilter): the list of pages it reads travels with its
  // map.
  std::optional<uint32_t> page_list_at;
  std::vector<uint32_t> page_list;
  // A sample of the pages says first whether any can be skipped.
  constexpr size_t kPageSampleStep = 32;
  if (plan.preagg == Preagg::run && !compact && cube_.page_size() % kLeanRunStep == 0 &&
      worth_listing_pages(map, cube_, kPageSampleStep)) {
    const std::vector<uint8_t> pages = relevant_pages(map, cube_);
    if (std::find(pages.begin(), pages.end(), 0) != pages.end()) {
      for (uint32_t p = 0; p < pages.size(); ++p)
        if (pages[p]) page_list.push_back(p);
      page_list_at = image.lean_image.append(page_list);
    }
  }
  const size_t pages_skipped = page_list_at ? cube_.page_count() - page_list.size() : 0;
  host.step("page list");
  clock.stop();

  // The kernel's map and the thread-run kernel's packed map go up in one
  // copy from pinned memory (phase 2's map follows while phase 1 runs). A
  // query that failed may have left its copy of the staging bytes in
  // flight: wait for it (the stream is idle otherwise).
  clock.start("map");
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  // The images' places in the staging bytes (8-byte aligned), then the
  // images copied straight there.
  const auto align8 = [](size_t at) { return (at + 7) & ~size_t{7}; };
  const std::vector<uint8_t> none;
  const std::vector<uint8_t>& lean_bytes = plan.preagg == Preagg::run ? image.lean_image.bytes : none;
  const size_t lean_at = align8(image.image.bytes.size());
  const size_t upload_bytes = lean_at + lean_bytes.size();
  upload_staging_.reserve(upload_bytes);
  auto* staged = static_cast<uint8_t*>(upload_staging_.data());
  const auto put = [&](size_t at, const std::vector<uint8_t>& bytes) {
    if (!bytes.empty()) std::memcpy(staged + at, bytes.data(), bytes.size());
  };
  put(0, image.image.bytes);
  put(lean_at, lean_bytes);
  map_global_.reserve(upload_bytes);
  GPUOLAP_CUDA_CHECK(
      cudaMemcpyAsync(map_global_.data(), staged, upload_bytes, cudaMemcpyHostToDevice, stream_));
  image.view.global = map_global_.data();
  if (plan.preagg == Preagg::run) {
    image.lean.global = map_global_.data() + lean_at;
    image.lean.positions_in_shared = plan.map_in_shared;
    image.lean.shared_at = static_cast<uint32_t>(plan.shared_bytes - size_t{image.lean.entries} * sizeof(uint32_t));
  }
  image.view.in_constant = constant_map;
  if (constant_map && uses_cdp(kernel)) upload_cdp_constant_map(image.image.bytes.data(), map_bytes, stream_);
  else if (constant_map) upload_constant_map(image.image.bytes.data(), map_bytes, stream_);
  clock.stop();

  // Prefilter. Page summaries are on the host: a page is skipped when some
  // dimension has no relevant base id in the page's range.
  clock.start("prefilter");
  // The resident table is prefiltered; the few cells added since it was
  // uploaded are read in full (KernelInput `added`).
  KernelInput input{cube_.keys(), cube_.values(query.measure), nullptr, cube_.size()};
  const KernelInput added{cube_.added_keys(), cube_.added_values(query.measure), nullptr, cube_.added_size()};
  if (page_list_at) {
    input.pages = reinterpret_cast<const uint32_t*>(image.lean.global + *page_list_at);
    input.page_count = page_list.size();
    input.page_size = cube_.page_size();
  }
  if (compact && cube_.size() > 0) {
    std::vector<uint8_t> pages = relevant_pages(map, cube_);
    if (pages.empty()) pages.assign(cube_.page_count(), 1);
    page_relevant_.upload(pages, stream_);
    cells_.reserve(cube_.size());
    selected_count_.reserve(2);
    IsRelevant relevant{cube_.keys(), cube_.values(query.measure), page_relevant_.data(), cube_.page_size(),
                        image.view};
    thrust::counting_iterator<uint32_t> all(0);
    size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(cub::DeviceSelect::If(nullptr, bytes, all, cells_.data(), selected_count_.data(),
                                             static_cast<int64_t>(cube_.size()), relevant, stream_));
    GPUOLAP_CUDA_CHECK(cub::DeviceSelect::If(temp(bytes), bytes, all, cells_.data(), selected_count_.data(),
                                             static_cast<int64_t>(cube_.size()), relevant, stream_));
    input.cells = cells_.data();
    input.n = selected_count_.download(1, stream_)[0];
  }
  clock.stop();

  // Phase 1 of two-phase aggregation: the class tuples, never chunked (at
  // most 2^22 of them), then the (tuple, target) pairs of phase 2.
  uint64_t updates = 0;
  uint64_t contributions = 0;
  const StoreKind final_store = two_phase ? (targets <= kMaxDenseSlots ? StoreKind::dense : StoreKind::hash)
                                          : plan.store;
  TargetTable tuples{};  // phase 1's store
  ExpandImage expand;
  if (two_phase) {
    tuples = aggregate_facts(plan, image, input, added, first_fields, 0, first_targets, clock);
    clock.start("expand");
    // Phase 2's map is built and sent while phase 1 runs: its own staging
    // (the first copy may still be reading upload_staging_), and its own
    // stream, so the copy is done when phase 1 is (in stream_ it took a few
    // microseconds after it). A failed query may have left its copy in
    // flight: wait for it before the staging is written again.
    host.resume();
    expand = expand_image(map, classes);
    host.step("expansion image");
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(side_stream_));
    expand_staging_.reserve(expand.image.bytes.size());
    std::memcpy(expand_staging_.data(), expand.image.bytes.data(), expand.image.bytes.size());
    expand_global_.reserve(expand.image.bytes.size());
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(expand_global_.data(), expand_staging_.data(), expand.image.bytes.size(),
                                       cudaMemcpyHostToDevice, side_stream_));
    GPUOLAP_CUDA_CHECK(cudaEventRecord(expand_sent_, side_stream_));
    GPUOLAP_CUDA_CHECK(cudaStreamWaitEvent(stream_, expand_sent_, 0));
    expand.view.global = expand_global_.data();
    updates = read_updates();
    phase1_cells_.reserve(first_targets);
    expand_ends_.reserve(first_targets);
    launch_count_expansions(tuples, first_fields, expand.view, phase1_cells_.data(), expand_ends_.data(), stream_);
    size_t bytes = 0;
    const auto n = static_cast<int64_t>(first_targets);
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, expand_ends_.data(), expand_ends_.data(), n, stream_));
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp(bytes), bytes, expand_ends_.data(), expand_ends_.data(), n, stream_));
    // The pair count arrives with the results (the expansion writes it to
    // mapped host memory); only a hash store, sized by it, waits for it here.
    count_staging_.reserve(sizeof(uint64_t));
    if (final_store == StoreKind::hash) {
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(count_staging_.data(), expand_ends_.data() + first_targets - 1,
                                         sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
      GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream_));
      contributions = *static_cast<const uint64_t*>(count_staging_.data());
    }
    clock.stop();
  }

  // The area's targets, in windows of target numbers whose stores fit the
  // device memory left for them: one window, unless the area is huge. A
  // store that does not fit after all splits the area further.
  const unsigned final_copies = two_phase ? 1 : plan.copies;
  const uint64_t entries = two_phase ? contributions : input.n + added.n;
  uint64_t chunks = chunks_for(final_store, targets, final_copies, fields, entries);
  const size_t before_windows = clock.size();
  const uint64_t updates_before_windows = updates;
  AreaResult result;
  for (;;) {
    try {
      result = AreaResult{};
      updates = updates_before_windows;
      const uint64_t window = (targets + chunks - 1) / chunks;
      for (uint64_t first = 0; first < std::max<uint64_t>(targets, 1); first += std::max<uint64_t>(window, 1)) {
        const uint64_t width = std::min(window, targets - first);
        AreaResult part;
        if (two_phase) {
          clock.start("expand");
          // A hash store needs a slot per distinct target: at most one per contribution.
          const TargetTable t = second_.prepare(final_store, first, width, 1,
                                                next_pow2(std::max<uint64_t>(1024, 2 * std::min(width, contributions))),
                                                fields, stream_);
          // A grid-stride loop: the host may not know the pair count yet.
          const int grid = props_.multiProcessorCount * 8;
          launch_expand(final_store, fields, LaunchShape{grid, 256, 0, stream_, false}, phase1_cells_.data(),
                        expand_ends_.data(), first_targets, expand.view, t,
                        static_cast<uint64_t*>(count_staging_.device_data()));
          clock.stop();
          if (final_store == StoreKind::hash && second_.overflow.download(1, stream_)[0] != 0)
            throw GpuError("gpu engine: phase 2 hash store overflowed");
          part = final_store == StoreKind::hash ? compact_hash(t, fields, query.aggregate, clock)
                                                : compact_dense(t, fields, query.aggregate, clock);
        } else {
          const TargetTable t = aggregate_facts(plan, image, input, added, first_fields, first, width, clock);
          updates += read_updates();
          part = plan.store == StoreKind::hash ? compact_hash(t, fields, query.aggregate, clock)
                                               : compact_dense(t, fields, query.aggregate, clock);
        }
        if (result.targets.empty()) {
          result = std::move(part);  // the one window, or the first with targets: no copy
        } else {
          result.targets.insert(result.targets.end(), part.targets.begin(), part.targets.end());
          result.values.insert(result.values.end(), part.values.begin(), part.values.end());
        }
        if (targets == 0) break;
      }
      break;
    } catch (const GpuOutOfMemory&) {
      if (chunks >= targets) throw;
      chunks = std::min(targets, chunks * 2);
      clock.truncate(before_windows);
      release_stores();
    }
  }

  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the pair count has arrived
  stages_ = clock.read();
  if (two_phase) contributions = *static_cast<const uint64_t*>(count_staging_.data());
  // Phase 2 adds each contribution once, without pre-aggregation.
  target_updates_ = count_updates_ ? updates + contributions : 0;
  plan_text_ = [=, this, host = std::move(host), auto_plan = std::move(auto_plan), view_dims = image.view.dims,
                lean_dims = image.lean.dims, cells = classes.cells, relevant = input.n]() {
    const char* update_kind = update.kind == CubeUpdate::full      ? "uploaded"
                              : update.kind == CubeUpdate::patched ? "patched"
                                                                   : "resident";
    const std::string chose =
        options_.kernel == "auto" && auto_plan.empty()
            ? text("auto chose kernel source (", two_phase ? "two-phase" : "one target per fact",
                   ": about one update per fact); ")
            : auto_plan;
    const std::string map_place =
        text(view_dims, " dimensions walked, map in ", constant_map ? "constant" : "global", " memory");
    std::string kernel_plan;
    switch (plan.kernel) {
      case KernelKind::source:
        kernel_plan = plan.preagg == Preagg::run
                          ? text("thread-run kernel (", lean_dims, " dimensions walked, map in ",
                                 plan.map_in_shared ? "shared" : "global", " memory)")
                          : text(lean ? "lean kernel (" : "kernel (", map_place, ")");
        break;
      case KernelKind::work_list: kernel_plan = text("work-list kernel (", map_place, ")"); break;
      case KernelKind::cdp:
      case KernelKind::hybrid:
        kernel_plan = text(plan.kernel == KernelKind::cdp ? "CDP kernel (" : "hybrid CDP kernel (", map_place, "; ",
                           cdp_totals_[kChildKernels], " child grids of ", cdp_totals_[kChildBlocks], " blocks, ",
                           options_.child_grid, " child grid",
                           plan.kernel == KernelKind::hybrid
                               ? text(", ", cdp_totals_[kDirectPages], " pages written by the parent, ",
                                      cdp_totals_[kHandedPages], " handed to children")
                               : std::string(),
                           cdp_sync_every_ > 0 ? text(", synchronised every ", cdp_sync_every_, " pages (",
                                                          cdp_rounds_, " rounds)")
                                                   : std::string(", no synchronisation"),
                           "; D ", cdp_ends_bytes_ / 1e6, " MB, pending-launch limit ", pending_limit_, " (",
                           pending_pool_bytes_ < 0 ? std::string("not measured")
                                                   : text(pending_pool_bytes_ / 1e6, " MB"),
                           " of device memory taken by the runtime since it was set))");
        break;
    }
    const std::string expand_plan =
        two_phase ? text("two-phase: ", cells, " class tuples, expanded to ", contributions, " contributions into a ",
                         store_name(final_store), " store of the area; ")
                  : std::string();
    return text(host.said(), chose, "facts ", update_kind,
                update.kind == CubeUpdate::resident ? std::string() : text(" (", update.cells, " cells)"), ", ",
                cube_.size(), " resident + ", cube_.added_size(), " added cells in ", cube_.bytes() / 1e6,
                " MB of device memory; ", expand_plan, kernel_plan, ", store ", store_name(plan.store), ", copies ",
                plan.copies, copies_origin(plan, first_targets), ", preagg ", preagg_name(plan.preagg), ", prefilter ",
                compact ? "compact" : "fused",
                pages_skipped > 0 ? text(" (", pages_skipped, " of ", cube_.page_count(), " pages skipped)")
                                  : std::string(),
                ", grid ", plan.grid, " x ", plan.block, " threads",
                compact ? text(", ", relevant, " relevant cells") : std::string(),
                chunks > 1 ? text(", the area in ", chunks, " chunks of ", (targets + chunks - 1) / chunks, " targets")
                           : std::string());
  };
  return result;
}

TargetTable GpuEngine::aggregate_facts(const StagePlan& plan, const MapImage& image, const KernelInput& input,
                                       const KernelInput& added, int fields, uint64_t first, uint64_t width,
                                       StageClock& clock) {
  unsigned long long cdp_before[kCdpStatCount];
  std::copy(std::begin(cdp_totals_), std::end(cdp_totals_), cdp_before);
  for (uint64_t capacity_factor = 2;; capacity_factor *= 2) {
    const size_t attempt = clock.size();
    std::copy(std::begin(cdp_before), std::end(cdp_before), cdp_totals_);  // a retry replaces its attempt
    clock.start("table");
    const uint64_t expected = std::min<uint64_t>(width, std::max<uint64_t>(input.n + added.n, 1)) * plan.copies;
    TargetTable t = first_.prepare(plan.store, first, width, plan.copies,
                                   next_pow2(std::max<uint64_t>(1024, expected * capacity_factor)), fields, stream_);
    if (count_updates_) {
      updates_.reserve(1);
      GPUOLAP_CUDA_CHECK(cudaMemsetAsync(updates_.data(), 0, sizeof(unsigned long long), stream_));
      t.updates = updates_.data();
    }
    clock.stop();

    clock.start("aggregate");
    const LaunchShape shape{plan.grid, plan.block, plan.shared_bytes, stream_, image.is_lean()};
    if (uses_cdp(plan.kernel)) {
      cdp_stats_.reserve(kCdpStatCount);
      GPUOLAP_CUDA_CHECK(cudaMemsetAsync(cdp_stats_.data(), 0, kCdpStatCount * sizeof(unsigned long long), stream_));
    }
    for (const KernelInput& in : {input, added}) {
      if (in.n == 0) continue;
      switch (plan.kernel) {
        case KernelKind::source:
          if (plan.preagg == Preagg::run) launch_lean_run(plan.store, fields, shape, in, image.lean, t);
          else launch_aggregate(plan.store, plan.preagg, fields, shape, in, image.view, t);
          break;
        case KernelKind::work_list: launch_work_list_segments(plan, in, image.view, fields, t); break;
        case KernelKind::cdp:
        case KernelKind::hybrid: launch_cdp_rounds(plan, in, image.view, fields, t); break;
      }
    }
    clock.stop();
    if (uses_cdp(plan.kernel)) collect_cdp_stats();
    // A full hash store: again, twice as large (the retry's stages replace these).
    if (plan.store == StoreKind::hash && first_.overflow.download(1, stream_)[0] != 0) {
      clock.truncate(attempt);
      continue;
    }
    return t;
  }
}

void GpuEngine::launch_work_list_segments(const StagePlan& plan, const KernelInput& in, const DeviceMap& map,
                                          int fields, const TargetTable& t) {
  const LaunchShape shape{plan.grid, plan.block, plan.shared_bytes, stream_, false};
  // Segments bound the sums' memory; inputs past a few thousand cells are
  // split at least four ways, so every test crosses segment boundaries.
  const uint64_t segment = std::clamp<uint64_t>((in.n + 3) / 4, 1024, kWorkListSegment);
  fan_out_ends_.reserve(std::min(in.n, segment));
  for (uint64_t offset = 0; offset < in.n; offset += segment) {
    const uint64_t n = std::min(segment, in.n - offset);
    launch_count_fan_out(in, offset, n, map, fan_out_ends_.data(), stream_);
    size_t bytes = 0;
    const auto items = static_cast<int64_t>(n);
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, fan_out_ends_.data(), fan_out_ends_.data(), items, stream_));
    GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp(bytes), bytes, fan_out_ends_.data(), fan_out_ends_.data(), items, stream_));
    // The kernel reads the segment's pair count from the sums itself.
    launch_work_list(plan.store, plan.preagg, fields, shape, in, offset, n, fan_out_ends_.data(), map, t);
  }
}

void GpuEngine::launch_cdp_rounds(const StagePlan& plan, const KernelInput& in, const DeviceMap& map, int fields,
                                  const TargetTable& t) {
  const uint64_t page_size = uint64_t{static_cast<unsigned>(plan.grid)} * static_cast<unsigned>(plan.block);
  const uint64_t pages = (in.n + page_size - 1) / page_size;
  // `auto` synchronises every 2,048 pages, as the thesis did (§5.5.2): the
  // pending launches then fit what the runtime grants on any table.
  cdp_sync_every_ = options_.sync_every > 0 ? options_.sync_every : options_.kernel == "auto" ? 2048 : 0;
  const uint64_t per_round = cdp_sync_every_ > 0 ? std::min<uint64_t>(cdp_sync_every_, pages) : pages;
  CdpArgs a{};
  a.pages_per_round = per_round;
  a.rounds = (pages + per_round - 1) / per_round;
  cdp_rounds_ = std::max(cdp_rounds_, a.rounds);
  a.fixed_child_grid = options_.child_grid == "fixed";
  a.hybrid = plan.kernel == KernelKind::hybrid;
  a.stats = cdp_stats_.data();
  // D: 4 bytes per parent thread and page of a round (thesis eq. 5.1).
  cdp_ends_bytes_ = std::max(cdp_ends_bytes_, page_size * per_round * sizeof(uint32_t));
  try {
    cdp_ends_.reserve(page_size * per_round);
  } catch (const GpuOutOfMemory&) {
    // Not the target store's fault: splitting the area would not help.
    throw GpuError(text("gpu engine: D, the CDP parents' page scans, needs ", page_size * per_round * 4,
                        " bytes of device memory; --sync-every k bounds it to grid x block x k x 4 bytes"));
  }
  a.ends = cdp_ends_.data();
  // Each block launches at most one child per page of a round, and the
  // round one tail launch: reserve that many pending launches, measuring
  // the memory the device runtime takes for them.
  const size_t needed = static_cast<size_t>(plan.grid) * per_round + 2;
  // The limit is the device's, not this engine's: another engine may have
  // set it lower since.
  GPUOLAP_CUDA_CHECK(cudaDeviceGetLimit(&pending_limit_, cudaLimitDevRuntimePendingLaunchCount));
  if (needed > pending_limit_) {
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream_));
    size_t free_before = 0, total = 0;
    GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
    const cudaError_t e = cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, needed);
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw GpuError(text("gpu engine: reserving ", needed, " pending child launches failed (",
                                cudaGetErrorString(e), "); --sync-every k bounds them to grid x k"));
    }
    // The runtime may grant fewer than asked for (an H200 with CUDA 13
    // granted 599,186 of 1.1 million), and launches past them fail.
    size_t granted = 0;
    GPUOLAP_CUDA_CHECK(cudaDeviceGetLimit(&granted, cudaLimitDevRuntimePendingLaunchCount));
    if (granted < needed)
      throw InputError(text("gpu engine: the CDP kernel may have ", needed, " child launches pending (", plan.grid,
                            " parent blocks x ", per_round, " pages); this GPU's device runtime allows ", granted,
                            "; use --sync-every ", std::max<size_t>(1, (granted - 2) / plan.grid), " or less"));
    pending_limit_ = needed;
    free_before_limit_ = free_before;
    pool_measured_ = false;
  }
  launch_cdp(plan.store, plan.preagg, fields, LaunchShape{plan.grid, plan.block, 0, stream_, false}, in, map, t, a);
}

void GpuEngine::collect_cdp_stats() {
  const std::vector<unsigned long long> s = cdp_stats_.download(kCdpStatCount, stream_);
  for (int i = 0; i < kCdpStatCount; ++i) cdp_totals_[i] += s[i];
  if (!pool_measured_) {
    size_t free_now = 0, total = 0;
    GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free_now, &total));
    pending_pool_bytes_ = static_cast<int64_t>(free_before_limit_) - static_cast<int64_t>(free_now);
    pool_measured_ = true;
  }
  if (s[kLaunchFailures] > 0)
    throw GpuError(text("gpu engine: ", s[kLaunchFailures], " device-side kernel launches failed, the first with ",
                        cudaGetErrorName(static_cast<cudaError_t>(s[kFirstLaunchError])), " (",
                        cudaGetErrorString(static_cast<cudaError_t>(s[kFirstLaunchError])), ")"));
  if (s[kFanOutOverflow] > 0)
    throw InputError("gpu engine: a parent page's cells reach more than 2^32 - 1 targets, more than the CDP kernel's "
                     "4-byte counts hold; use --kernel work-list");
}

uint64_t GpuEngine::read_updates() { return count_updates_ ? updates_.download(1, stream_)[0] : 0; }

uint64_t GpuEngine::chunks_for(StoreKind kind, uint64_t targets, unsigned copies, int fields, uint64_t entries) {
  if (targets <= 1) return 1;
  const auto window_bytes = [&](uint64_t chunks) {
    return store_bytes(kind, (targets + chunks - 1) / chunks, copies, fields, entries);
  };
  uint64_t budget = options_.store_memory_mb > 0 ? static_cast<uint64_t>(options_.store_memory_mb * 1048576.0) : 0;
  if (budget == 0) {
    size_t free = 0, total = 0;
    GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    if (window_bytes(1) > free / 10 * 8) {
      // The stores kept from earlier queries count as taken: free them first.
      release_stores();
      GPUOLAP_CUDA_CHECK(cudaMemGetInfo(&free, &total));
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
  cells_a_ = {};
  cells_b_ = {};
  nonempty_ = {};
  keys_sorted_ = {};
  out_targets_ = {};
  slots_ = {};
  slots_sorted_ = {};
  out_values_ = {};
  values_a_ = {};
  temp_ = {};
  fan_out_ends_ = {};
  cdp_ends_ = {};
}

AreaResult GpuEngine::compact_dense(const TargetTable& t, int fields, Aggregate a, StageClock& clock) {
  clock.start("compact");
  // The non-empty targets with their numbers and the query's values, in one
  // selection: straight from a store of one copy, else after a pass that
  // merges each target's copies into its value.
  const auto n = static_cast<int64_t>(t.targets);
  const thrust::counting_iterator<uint64_t> slots(0);
  const auto numbers = thrust::counting_iterator<uint64_t>(t.first);
  const auto select = [&](uint64_t* targets, double* values, uint64_t* count) {
    auto out = thrust::make_zip_iterator(thrust::make_tuple(targets, values));
    const auto run = [&](auto in, auto flags) {
      size_t bytes = 0;
      GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, in, flags, out, count, n, stream_));
      GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(temp(bytes), bytes, in, flags, out, count, n, stream_));
    };
    if (t.copies == 1) {
      run(thrust::make_zip_iterator(
              thrust::make_tuple(numbers, thrust::make_transform_iterator(slots, OneCopyValue{t, a}))),
          thrust::make_transform_iterator(slots, OneCopyFilled{t, (fields & kCount) != 0}));
      return;
    }
    values_a_.reserve(t.targets);
    nonempty_.reserve(t.targets);
    reduce_dense_table(t, fields, nullptr, values_a_.data(), a, nonempty_.data(), stream_);
    run(thrust::make_zip_iterator(thrust::make_tuple(numbers, values_a_.data())), nonempty_.data());
  };
  if (t.targets * (sizeof(uint64_t) + sizeof(double)) <= kStraightToHostBytes) {
    const ResultStaging staged = stage_results(t.targets);
    select(staged.targets, staged.values, staged.count);
    clock.stop();
    return collect(t.targets, true, clock);
  }
  out_targets_.reserve(t.targets);
  out_values_.reserve(t.targets);
  selected_count_.reserve(1);
  select(out_targets_.data(), out_values_.data(), selected_count_.data());
  const uint64_t filled = selected_count_.download(1, stream_)[0];
  clock.stop();
  return download(filled, out_targets_.data(), out_values_.data(), clock);
}

AreaResult GpuEngine::compact_hash(const TargetTable& t, int fields, Aggregate a, StageClock& clock) {
  clock.start("compact");
  // Occupied slots, then their targets sorted, then one cell per target.
  const auto n = static_cast<int64_t>(t.slots);
  nonempty_.reserve(t.slots);
  keys_sorted_.reserve(t.slots);
  slots_.reserve(t.slots);
  slots_sorted_.reserve(t.slots);
  out_targets_.reserve(t.slots);
  selected_count_.reserve(2);
  thrust::counting_iterator<uint32_t> all(0);
  thrust::transform_iterator<NotEmpty, const uint64_t*> occupied(t.keys, NotEmpty{});
  size_t bytes = 0;
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, all, occupied, slots_.data(), selected_count_.data(), n,
                                                stream_));
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(temp(bytes), bytes, all, occupied, slots_.data(),
                                                selected_count_.data(), n, stream_));
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, t.keys, occupied, out_targets_.data(),
                                                selected_count_.data(), n, stream_));
  GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(temp(bytes), bytes, t.keys, occupied, out_targets_.data(),
                                                selected_count_.data(), n, stream_));
  const uint64_t occupied_count = selected_count_.download(1, stream_)[0];
  uint64_t filled = 0;
  if (occupied_count > 0) {
    int end_bit = 1;
    while (end_bit < 64 && (t.first + t.targets - 1) >> end_bit) ++end_bit;
    const auto m = static_cast<int64_t>(occupied_count);
    GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, out_targets_.data(), keys_sorted_.data(),
                                                       slots_.data(), slots_sorted_.data(), m, 0, end_bit, stream_));
    GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp(bytes), bytes, out_targets_.data(), keys_sorted_.data(),
                                                       slots_.data(), slots_sorted_.data(), m, 0, end_bit, stream_));
    cells_a_.reserve(occupied_count);
    cells_b_.reserve(occupied_count);
    const int grid = std::min<uint64_t>(4096, (occupied_count + 255) / 256);
    switch (fields) {
      case kSumFields: gather_slots<kSumFields><<<grid, 256, 0, stream_>>>(t, slots_sorted_.data(), occupied_count, cells_a_.data()); break;
      case kSumCountFields: gather_slots<kSumCountFields><<<grid, 256, 0, stream_>>>(t, slots_sorted_.data(), occupied_count, cells_a_.data()); break;
      case kMinFields: gather_slots<kMinFields><<<grid, 256, 0, stream_>>>(t, slots_sorted_.data(), occupied_count, cells_a_.data()); break;
      default: gather_slots<kMaxFields><<<grid, 256, 0, stream_>>>(t, slots_sorted_.data(), occupied_count, cells_a_.data()); break;
    }
    GPUOLAP_CHECK_LAUNCH("gather_slots");
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(nullptr, bytes, keys_sorted_.data(), out_targets_.data(),
                                                      cells_a_.data(), cells_b_.data(), selected_count_.data() + 1,
                                                      MergeCells{}, m, stream_));
    GPUOLAP_CUDA_CHECK(cub::DeviceReduce::ReduceByKey(temp(bytes), bytes, keys_sorted_.data(), out_targets_.data(),
                                                      cells_a_.data(), cells_b_.data(), selected_count_.data() + 1,
                                                      MergeCells{}, m, stream_));
    filled = selected_count_.download(2, stream_)[1];
  }
  clock.stop();
  if (filled > 0) {
    out_values_.reserve(filled);
    const int grid = static_cast<int>(std::min<uint64_t>(4096, (filled + 255) / 256));
    finish_cells<<<grid, 256, 0, stream_>>>(cells_b_.data(), filled, a, out_values_.data());
    GPUOLAP_CHECK_LAUNCH("finish_cells");
  }
  return download(filled, out_targets_.data(), out_values_.data(), clock);
}

GpuEngine::ResultStaging GpuEngine::stage_results(uint64_t most) {
  download_staging_.reserve(sizeof(uint64_t) + most * (sizeof(uint64_t) + sizeof(double)));
  return ResultStaging::at(download_staging_.device_data(), most);
}

AreaResult GpuEngine::download(uint64_t n, const uint64_t* targets, const double* values, StageClock& clock) {
  clock.start("copy back");
  const ResultStaging staged = stage_results(n);
  if (n > 0) {
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(staged.targets, targets, n * sizeof(uint64_t), cudaMemcpyDeviceToHost, stream_));
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(staged.values, values, n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  }
  clock.stop();
  return collect(n, false, clock);
}

AreaResult GpuEngine::collect(uint64_t most, bool counted, StageClock& clock) {
  clock.start("copy back");
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const ResultStaging staged = ResultStaging::at(download_staging_.data(), most);
  const uint64_t n = counted ? *staged.count : most;
  if (n > most) throw GpuError(text("gpu engine: the compaction selected ", n, " of ", most, " targets"));
  AreaResult r;
  r.targets.assign(staged.targets, staged.targets + n);
  r.values.assign(staged.values, staged.values + n);
  clock.stop();
  return r;
}

}  // namespace

std::string gpu_engine_limit(const FactTable& facts, const AggregationMap& map) {
  size_t walked = 0;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    if (!is_total(m.offsets, m.positions, m.weights)) ++walked;
  }
  if (walked > static_cast<size_t>(kMaxDims))
    return text("the query restricts ", walked, " dimensions (lists other than a total over every base); the gpu "
                "engine handles up to ", kMaxDims);
  if (facts.size() >= (uint64_t{1} << 32)) return "more than 2^32 facts are not supported yet";
  return "";
}

std::unique_ptr<Engine> make_gpu_engine(const GpuOptions& options, const std::string& name) {
  GpuOptions o = options;
  if (name == "gpu-cdp") {
    // The CDP engine: the thesis' CDP kernel, or the hybrid.
    if (o.kernel == "auto") o.kernel = "cdp";
    if (o.kernel != "cdp" && o.kernel != "hybrid")
      throw InputError(text("engine gpu-cdp runs --kernel cdp or hybrid, not ", o.kernel, " (use engine gpu)"));
  }
  auto one_of = [](const std::string& knob, const std::string& value, std::initializer_list<const char*> allowed) {
    for (const char* a : allowed)
      if (value == a) return;
    std::string list;
    for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    throw InputError(text("--", knob, " ", value, ": expected one of ", list));
  };
  one_of("variant", o.variant, {"auto", "hash", "dense", "shared"});
  one_of("preagg", o.preagg, {"auto", "none", "lane0", "stride", "match", "run"});
  one_of("prefilter", o.prefilter, {"auto", "compact", "fused"});
  one_of("map-memory", o.map_memory, {"auto", "constant", "global"});
  one_of("two-phase", o.two_phase, {"auto", "on", "off"});
  one_of("kernel", o.kernel, {"auto", "source", "work-list", "cdp", "hybrid"});
  one_of("child-grid", o.child_grid, {"dynamic", "fixed"});
  if (o.sync_every < 0) throw InputError("--sync-every must be 0 (no synchronisation) or a number of pages");
  if (o.phf < 0) throw InputError("--phf must be at least 1 (0 lets the engine choose)");
  if (o.block != 0 && (o.block < 32 || o.block > 1024 || o.block % 32 != 0))
    throw InputError("--block must be a multiple of 32 between 32 and 1024");
  if (o.grid < 0) throw InputError("--grid must be positive (0 lets the engine choose)");
  if (!(o.store_memory_mb >= 0)) throw InputError("--store-memory must be a size in MiB (0 lets the engine choose)");
  return std::make_unique<GpuEngine>(o, name);
}

}  // namespace gpuolap
