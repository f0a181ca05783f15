// The GPU forms of cube creation: gpu-naive, gpu-sorted, gpu-lattice and
// gpu-expand over the coded table, which stays on the device between builds
// (uploaded again only when another table is built). Stages are timed with
// CUDA events: "upload" (host to device), the algorithm's kernels, and
// "download" (device to host), so that the bus is seen beside the kernels.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <array>
#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cube/cube_algorithms.hpp"
#include "cube/gpu/cube_kernels.cuh"
#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/stage_clock.cuh"
#include "gpuolap/error.hpp"

namespace gpuolap::cube {
namespace gpu {
namespace {

using gpuolap::DeviceBuffer;
using gpuolap::gpu::StageClock;

constexpr int kBlock = 256;
// Parent cells per thread of cells_into_dense, sorted positions per thread
// of aggregate_run_chunks.
constexpr int kCellChunk = 8;
constexpr int kRunChunk = 16;

unsigned grid_for(std::size_t items, int block = kBlock) {
  return static_cast<unsigned>(std::clamp<std::size_t>((items + block - 1) / block, 1, 1u << 30));
}

int bits_for(std::uint64_t values) { return values <= 1 ? 0 : std::bit_width(values - 1); }

// A set's cells on the device: compact (keys ascending, a state each) or a
// dense cube (a state per possible key, and `filled`). Grown and kept.
struct DeviceCells {
  DeviceBuffer<std::uint64_t> keys;
  std::array<DeviceBuffer<std::uint64_t>, groupby::kMaxAggregates> bits, high, count;
  DeviceBuffer<std::uint8_t> filled;
  std::uint32_t size = 0;

  // States for n cells, laid out for `slots`.
  DeviceAggregates reserve(const std::vector<groupby::AggregateSlot>& slots, std::size_t n) {
    DeviceAggregates A;
    A.count = static_cast<int>(slots.size());
    n = std::max<std::size_t>(n, 1);
    for (std::size_t a = 0; a < slots.size(); ++a) {
      A.slot[a] = slots[a];
      bits[a].reserve(n);
      A.bits[a] = bits[a].data();
      if (groupby::integer_sum(slots[a])) {
        high[a].reserve(n);
        A.high[a] = high[a].data();
      }
      if (slots[a].keeps_count) {
        count[a].reserve(n);
        A.counts[a] = count[a].data();
      }
    }
    return A;
  }
};

}  // namespace

class CubeRunner {
 public:
  explicit CubeRunner(int device) : ctx_(device) {}

  std::vector<SetCells> run(const CodedTable& coded, const CubeSpec& spec, Algorithm algorithm, bool timing,
                            StageTimes& stages) {
    ctx_.bind();
    StageClock clock(ctx_.stream(), ctx_.events(), timing);
    upload(coded, clock);
    slots_ = coded.slots;
    for (std::size_t v = 0; v < coded.measures.values.size(); ++v)
      for (std::size_t a = 0; a < slots_.size(); ++a)
        if (coded.measures.aggregates[a].value == static_cast<int>(v)) {
          slots_[a].values = values_[v].data();
          slots_[a].nulls = coded.measures.values[v].nulls ? nulls_[v].data() : nullptr;
        }
    row_slots_ = DeviceAggregates{};
    row_slots_.count = static_cast<int>(slots_.size());
    for (std::size_t a = 0; a < slots_.size(); ++a) row_slots_.slot[a] = slots_[a];

    // The compact cells of each requested set, by index into sets_.
    std::vector<std::size_t> result;
    switch (algorithm) {
      case Algorithm::GpuNaive:
        result = naive(coded, spec, clock);
        break;
      case Algorithm::GpuSorted:
        result = sorted(coded, spec, clock);
        break;
      case Algorithm::GpuLattice:
        result = lattice(coded, spec, clock);
        break;
      default:
        result = expand(coded, spec, clock);
        break;
    }
    std::vector<SetCells> out = download(coded, result, clock);
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
    for (auto& stage : clock.read()) stages.push_back(stage);
    return out;
  }

 private:
  // The table's keys and measure columns, unless this coded table is the
  // one already resident.
  void upload(const CodedTable& coded, StageClock& clock) {
    if (resident_ == coded.id) return;
    resident_ = 0;
    const cudaStream_t s = ctx_.stream();
    clock.start("upload (host to device)");
    keys_.upload(coded.keys.data(), coded.rows, s);
    for (std::size_t v = 0; v < coded.measures.values.size(); ++v) {
      const groupby::ColumnView& c = coded.measures.values[v];
      const std::size_t bytes = coded.rows * (c.type == groupby::ValueType::Int32 ? 4 : 8);
      values_[v].upload(static_cast<const std::uint8_t*>(c.values), bytes, s);
      if (c.nulls) nulls_[v].upload(c.nulls, coded.rows, s);
    }
    clock.stop();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    resident_ = coded.id;
  }

  DeviceCells& cells_at(std::size_t i) {
    while (sets_.size() <= i) sets_.push_back(std::make_unique<DeviceCells>());
    return *sets_[i];
  }

  std::uint32_t read_count() {
    std::uint32_t n = 0;
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&n, count_.data(), sizeof n, cudaMemcpyDeviceToHost, ctx_.stream()));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
    return n;
  }

  // A dense cube of `cells` cells in `d`, initialized.
  DeviceAggregates dense_cube(DeviceCells& d, std::uint64_t cells) {
    DeviceAggregates A = d.reserve(slots_, cells);
    d.filled.reserve(cells);
    init_cells<<<grid_for(cells), kBlock, 0, ctx_.stream()>>>(A, d.filled.data(), cells);
    GPUOLAP_CHECK_LAUNCH("init_cells");
    return A;
  }

  // The filled cells of dense cube `dense` (cells many) into compact `out`.
  void compact(DeviceCells& dense, std::uint64_t cells, DeviceCells& out) {
    const cudaStream_t s = ctx_.stream();
    index_.reserve(cells);
    count_.reserve(1);
    const thrust::counting_iterator<std::uint32_t> all(0);
    std::size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, all, dense.filled.data(), index_.data(), count_.data(),
                                                  static_cast<std::int64_t>(cells), s));
    GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(ctx_.scratch(bytes), bytes, all, dense.filled.data(), index_.data(),
                                                  count_.data(), static_cast<std::int64_t>(cells), s));
    const std::uint32_t n = read_count();
    const DeviceAggregates from = dense.reserve(slots_, cells);
    const DeviceAggregates to = out.reserve(slots_, n);
    out.keys.reserve(std::max<std::uint32_t>(n, 1));
    if (n) gather_cells<<<grid_for(n), kBlock, 0, s>>>(index_.data(), n, from, to, out.keys.data());
    GPUOLAP_CHECK_LAUNCH("gather_cells");
    out.size = n;
  }

  // Compact cells of the runs of `sorted_keys` (n), each run's items added
  // from `source`.
  template <class Source>
  void runs(const std::uint64_t* sorted_keys, std::size_t n, const Source& source, DeviceCells& out) {
    const cudaStream_t s = ctx_.stream();
    flags_.reserve(std::max<std::size_t>(n, 1));
    run_ids_.reserve(std::max<std::size_t>(n, 1));
    std::uint32_t r = 0;
    if (n) {
      border_flags<<<grid_for(n, kBorderBlock), kBorderBlock, 0, s>>>(sorted_keys, n, flags_.data());
      GPUOLAP_CHECK_LAUNCH("border_flags");
      std::size_t bytes = 0;
      GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, flags_.data(), run_ids_.data(),
                                                       static_cast<std::int64_t>(n), s));
      GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(ctx_.scratch(bytes), bytes, flags_.data(), run_ids_.data(),
                                                       static_cast<std::int64_t>(n), s));
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&r, run_ids_.data() + n - 1, sizeof r, cudaMemcpyDeviceToHost, s));
      GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    const DeviceAggregates to = out.reserve(slots_, r);
    out.keys.reserve(std::max<std::uint32_t>(r, 1));
    if (r) {
      init_compact_cells<<<grid_for(r), kBlock, 0, s>>>(to, r);
      GPUOLAP_CHECK_LAUNCH("init_compact_cells");
      aggregate_run_chunks<<<grid_for((n + kRunChunk - 1) / kRunChunk), kBlock, 0, s>>>(
          sorted_keys, flags_.data(), run_ids_.data(), n, kRunChunk, source, to, out.keys.data());
      GPUOLAP_CHECK_LAUNCH("aggregate_run_chunks");
    }
    out.size = r;
  }

  // keys (n) sorted with their positions: into sorted_keys_ and order_
  // (bits: the keys' significant bits).
  void sort_with_positions(const std::uint64_t* keys, std::uint32_t* positions, std::size_t n, int bits) {
    const cudaStream_t s = ctx_.stream();
    sorted_keys_.reserve(std::max<std::size_t>(n, 1));
    order_.reserve(std::max<std::size_t>(n, 1));
    std::size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, sorted_keys_.data(), positions, order_.data(),
                                                       static_cast<std::int64_t>(n), 0, std::max(bits, 1), s));
    GPUOLAP_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ctx_.scratch(bytes), bytes, keys, sorted_keys_.data(), positions,
                                                       order_.data(), static_cast<std::int64_t>(n), 0, std::max(bits, 1), s));
  }

  // gpu-naive: every requested set a dense cube, a thread per row merging
  // into each; then each cube's filled cells.
  std::vector<std::size_t> naive(const CodedTable& coded, const CubeSpec& spec, StageClock& clock) {
    std::vector<DenseTarget> targets;
    std::uint64_t total = 0;
    for (SetMask mask : spec.sets) total += layout_of(coded, mask).cells;
    std::size_t free = 0, memory = 0;
    ctx_.memory_info(free, memory);
    const std::size_t bytes_per_cell = 1 + 8 * slots_.size() * 3;
    if (total > (std::uint64_t{1} << 32) || total * bytes_per_cell > free / 2)
      throw InputError("gpu-naive keeps every grouping set as a dense cube: " + std::to_string(total) +
                       " cells of up to " + std::to_string(bytes_per_cell) + " bytes, more than half of the GPU's free " +
                       std::to_string(free >> 20) + " MB; gpu-lattice or gpu-sorted keep only filled cells");
    clock.start("dense cubes (init)");
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      const Layout layout = layout_of(coded, spec.sets[s]);
      DeviceCells& dense = cells_at(spec.sets.size() + s);
      DenseTarget t;
      t.projection = projection(coded, coded.finest, layout);
      t.cells = dense_cube(dense, layout.cells);
      t.filled = dense.filled.data();
      targets.push_back(t);
    }
    clock.stop();
    clock.start("rows into every set (atomics)");
    targets_.upload(targets, ctx_.stream());
    if (coded.rows)
      rows_into_dense<<<grid_for(coded.rows), kBlock, 0, ctx_.stream()>>>(keys_.data(), coded.rows, row_slots_, targets_.data(),
                                                                        static_cast<int>(targets.size()));
    GPUOLAP_CHECK_LAUNCH("rows_into_dense");
    clock.stop();
    clock.start("filled cells (compaction)");
    std::vector<std::size_t> result;
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      compact(cells_at(spec.sets.size() + s), layout_of(coded, spec.sets[s]).cells, cells_at(s));
      result.push_back(s);
    }
    clock.stop();
    return result;
  }

  // gpu-sorted: per set, the rows sorted by the set's key (not needed when
  // the rows are sorted and the set keeps a prefix of the columns), then a
  // thread per run.
  std::vector<std::size_t> sorted(const CodedTable& coded, const CubeSpec& spec, StageClock& clock) {
    std::vector<std::size_t> result;
    projected_.reserve(std::max<std::size_t>(coded.rows, 1));
    positions_.reserve(std::max<std::size_t>(coded.rows, 1));
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      const SetMask mask = spec.sets[s];
      const Layout layout = layout_of(coded, mask);
      const bool prefix = (mask & (mask + 1)) == 0;  // columns 0..k-1
      clock.start("set keys (projection)");
      if (coded.rows)
        project_keys<<<grid_for(coded.rows), kBlock, 0, ctx_.stream()>>>(keys_.data(), coded.rows,
                                                                         projection(coded, coded.finest, layout),
                                                                         projected_.data(), positions_.data());
      GPUOLAP_CHECK_LAUNCH("project_keys");
      clock.stop();
      const std::uint64_t* keys = projected_.data();
      const std::uint32_t* order = nullptr;
      if (!(coded.sorted && prefix)) {
        clock.start("sort (CUB radix sort)");
        sort_with_positions(projected_.data(), positions_.data(), coded.rows, bits_for(layout.cells));
        clock.stop();
        keys = sorted_keys_.data();
        order = order_.data();
      }
      clock.start("borders and runs");
      runs(keys, coded.rows, RowSource{row_slots_, order}, cells_at(s));
      clock.stop();
      result.push_back(s);
    }
    return result;
  }

  // gpu-lattice: the finest set from the rows, once (runs when the rows are
  // sorted; a dense cube when it fits; else sorted by key), then each
  // requested set, finest first, from the computed set with the fewest
  // cells that contains it (a dense cube when the set fits, else runs of its
  // parent's cells sorted by the set's key).
  std::vector<std::size_t> lattice(const CodedTable& coded, const CubeSpec& spec, StageClock& clock) {
    const std::size_t finest_at = spec.sets.size();
    DeviceCells& finest = cells_at(finest_at);
    clock.start("finest cells");
    if (coded.sorted) {
      runs(keys_.data(), coded.rows, RowSource{row_slots_, nullptr}, finest);
    } else if (dense_fits(coded.finest.cells, coded.rows)) {
      DeviceCells& dense = cells_at(finest_at + 1);
      DenseTarget t;
      t.projection = projection(coded, coded.finest, coded.finest);
      t.cells = dense_cube(dense, coded.finest.cells);
      t.filled = dense.filled.data();
      targets_.upload(&t, 1, ctx_.stream());
      if (coded.rows)
        rows_into_dense<<<grid_for(coded.rows), kBlock, 0, ctx_.stream()>>>(keys_.data(), coded.rows, row_slots_,
                                                                          targets_.data(), 1);
      GPUOLAP_CHECK_LAUNCH("rows_into_dense");
      compact(dense, coded.finest.cells, finest);
    } else {
      projected_.reserve(std::max<std::size_t>(coded.rows, 1));
      positions_.reserve(std::max<std::size_t>(coded.rows, 1));
      project_keys<<<grid_for(coded.rows), kBlock, 0, ctx_.stream()>>>(keys_.data(), coded.rows,
                                                                       projection(coded, coded.finest, coded.finest),
                                                                       projected_.data(), positions_.data());
      GPUOLAP_CHECK_LAUNCH("project_keys");
      sort_with_positions(keys_.data(), positions_.data(), coded.rows, bits_for(coded.finest.cells));
      runs(sorted_keys_.data(), coded.rows, RowSource{row_slots_, order_.data()}, finest);
    }
    clock.stop();

    // Computed sets: (mask, index into sets_, cells).
    struct Computed {
      SetMask mask;
      std::size_t at;
      std::uint32_t cells;
    };
    std::vector<Computed> computed{{coded.finest.mask, finest_at, finest.size}};
    std::vector<std::size_t> order(spec.sets.size());
    for (std::size_t s = 0; s < order.size(); ++s) order[s] = s;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::popcount(spec.sets[a]) > std::popcount(spec.sets[b]);
    });
    std::vector<std::size_t> result(spec.sets.size());
    clock.start("coarser sets from their parents");
    for (std::size_t s : order) {
      const SetMask mask = spec.sets[s];
      const Computed* parent = nullptr;
      for (const Computed& c : computed)
        if ((c.mask & mask) == mask && (!parent || c.cells < parent->cells)) parent = &c;
      if (parent->mask == mask) {  // the finest set itself
        result[s] = parent->at;
        continue;
      }
      const Computed from = *parent;
      DeviceCells& p = cells_at(from.at);
      const DeviceAggregates parent_cells = p.reserve(slots_, from.cells);
      const Layout layout = layout_of(coded, mask);
      const Projection proj = projection(coded, layout_of(coded, from.mask), layout);
      DeviceCells& out = cells_at(s);
      if (dense_fits(layout.cells, from.cells)) {
        DeviceCells& dense = cells_at(finest_at + 1);
        DenseTarget t;
        t.projection = proj;
        t.cells = dense_cube(dense, layout.cells);
        t.filled = dense.filled.data();
        if (from.cells)
          cells_into_dense<<<grid_for((from.cells + kCellChunk - 1) / kCellChunk), kBlock, 0, ctx_.stream()>>>(
              p.keys.data(), parent_cells, from.cells, t, kCellChunk);
        GPUOLAP_CHECK_LAUNCH("cells_into_dense");
        compact(dense, layout.cells, out);
      } else {
        projected_.reserve(std::max<std::uint32_t>(from.cells, 1));
        positions_.reserve(std::max<std::uint32_t>(from.cells, 1));
        if (from.cells)
          project_keys<<<grid_for(from.cells), kBlock, 0, ctx_.stream()>>>(p.keys.data(), from.cells, proj,
                                                                          projected_.data(), positions_.data());
        GPUOLAP_CHECK_LAUNCH("project_keys");
        sort_with_positions(projected_.data(), positions_.data(), from.cells, bits_for(layout.cells));
        runs(sorted_keys_.data(), from.cells, CellSource{parent_cells, order_.data()}, out);
      }
      computed.push_back({mask, s, out.size});
      result[s] = s;
    }
    clock.stop();
    return result;
  }

  // gpu-expand: a virtual row per (set, row), keyed by the set's index above
  // its key, sorted once, then a thread per run.
  std::vector<std::size_t> expand(const CodedTable& coded, const CubeSpec& spec, StageClock& clock) {
    int key_bits = 0;
    std::vector<Projection> projections;
    for (SetMask mask : spec.sets) {
      const Layout layout = layout_of(coded, mask);
      key_bits = std::max(key_bits, bits_for(layout.cells));
      projections.push_back(projection(coded, coded.finest, layout));
    }
    const int bits = key_bits + bits_for(spec.sets.size());
    if (bits > 64)
      throw InputError("gpu-expand keys a virtual row by its set and the set's key, " + std::to_string(bits) +
                       " bits, more than 64; gpu-lattice or gpu-sorted take this cube");
    const std::size_t n = coded.rows * spec.sets.size();
    if (n > kMaxRows)
      throw InputError("gpu-expand makes " + std::to_string(coded.rows) + " rows x " + std::to_string(spec.sets.size()) +
                       " sets = " + std::to_string(n) + " virtual rows, at most 2^32 - 1; gpu-lattice takes this cube");
    clock.start("expand (a row per set)");
    projections_.upload(projections, ctx_.stream());
    projected_.reserve(std::max<std::size_t>(n, 1));
    positions_.reserve(std::max<std::size_t>(n, 1));
    if (n)
      expand_keys<<<grid_for(n), kBlock, 0, ctx_.stream()>>>(keys_.data(), coded.rows, projections_.data(),
                                                             static_cast<int>(spec.sets.size()), key_bits,
                                                             projected_.data(), positions_.data());
    GPUOLAP_CHECK_LAUNCH("expand_keys");
    clock.stop();
    clock.start("sort (CUB radix sort)");
    sort_with_positions(projected_.data(), positions_.data(), n, bits);
    clock.stop();
    clock.start("borders and runs");
    DeviceCells& all = cells_at(spec.sets.size());
    runs(sorted_keys_.data(), n, RowSource{row_slots_, order_.data()}, all);
    clock.stop();
    // The sets' cells lie one after the other, in set order: split them
    // where the set index (the keys' top bits) changes.
    std::vector<std::uint64_t> keys = all.keys.download(all.size, ctx_.stream());
    std::vector<std::size_t> result;
    std::size_t begin = 0;
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      const std::size_t end =
          s + 1 == spec.sets.size()
              ? keys.size()
              : static_cast<std::size_t>(
                    std::lower_bound(keys.begin() + begin, keys.end(), std::uint64_t{s + 1} << key_bits) - keys.begin());
      expand_ranges_.push_back({begin, end});
      result.push_back(spec.sets.size());
      begin = end;
    }
    expand_key_bits_ = key_bits;
    return result;
  }

  // The compact cells sets_[result[i]] to the host; after gpu-expand, the
  // ranges of the one array of cells.
  std::vector<SetCells> download(const CodedTable& coded, const std::vector<std::size_t>& result, StageClock& clock) {
    clock.start("download (device to host)");
    std::vector<SetCells> out;
    const cudaStream_t s = ctx_.stream();
    for (std::size_t i = 0; i < result.size(); ++i) {
      DeviceCells& d = cells_at(result[i]);
      std::size_t begin = 0, n = d.size;
      if (!expand_ranges_.empty()) {
        begin = expand_ranges_[i].first;
        n = expand_ranges_[i].second - begin;
      }
      SetCells c = empty_cells(coded);
      c.keys.resize(n);
      if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(c.keys.data(), d.keys.data() + begin, n * 8, cudaMemcpyDeviceToHost, s));
      for (std::size_t a = 0; a < slots_.size(); ++a) {
        auto take = [&](DeviceBuffer<std::uint64_t>& from, std::vector<std::uint64_t>& to) {
          to.resize(n);
          if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(to.data(), from.data() + begin, n * 8, cudaMemcpyDeviceToHost, s));
        };
        take(d.bits[a], c.bits[a]);
        if (groupby::integer_sum(slots_[a])) take(d.high[a], c.high[a]);
        if (slots_[a].keeps_count) take(d.count[a], c.count[a]);
      }
      out.push_back(std::move(c));
    }
    clock.stop();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    if (!expand_ranges_.empty()) {
      // The set index above each key goes.
      const std::uint64_t mask = expand_key_bits_ >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << expand_key_bits_) - 1;
      for (SetCells& c : out)
        for (std::uint64_t& k : c.keys) k &= mask;
      expand_ranges_.clear();
    }
    return out;
  }

  gpuolap::gpu::DeviceContext ctx_;
  std::uint64_t resident_ = 0;  // the coded table's id whose columns are on the device
  DeviceBuffer<std::uint64_t> keys_;
  std::array<DeviceBuffer<std::uint8_t>, groupby::kMaxAggregates> values_, nulls_;
  std::vector<groupby::AggregateSlot> slots_;  // over the device's columns
  DeviceAggregates row_slots_;
  std::vector<std::unique_ptr<DeviceCells>> sets_;
  DeviceBuffer<DenseTarget> targets_;
  DeviceBuffer<Projection> projections_;
  DeviceBuffer<std::uint64_t> projected_, sorted_keys_;
  DeviceBuffer<std::uint32_t> positions_, order_, flags_, run_ids_, index_, count_;
  std::vector<std::pair<std::size_t, std::size_t>> expand_ranges_;
  int expand_key_bits_ = 0;
};

}  // namespace gpu

bool gpu_available() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::vector<SetCells> build_gpu(const CodedTable& coded, const CubeSpec& spec, Algorithm algorithm,
                                const BuildOptions& options, StageTimes& stages) {
  if (!gpu_available())
    throw InputError(std::string(algorithm_name(algorithm)) +
                     " needs an NVIDIA GPU, and this machine has none (cpu-partitioned and cpu-sequential run on the CPU)");
  // One runner per device, kept for its buffers and the resident table; one
  // build at a time each.
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<gpu::CubeRunner>> runners;
  std::lock_guard lock(mutex);
  int device = options.device;
  if (device < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  auto& runner = runners[device];
  if (!runner) runner = std::make_unique<gpu::CubeRunner>(device);
  try {
    return runner->run(coded, spec, algorithm, options.timing, stages);
  } catch (const GpuOutOfMemory& e) {
    runner.reset();
    throw InputError(std::to_string(coded.rows) + " rows do not fit " + std::string(algorithm_name(algorithm)) +
                     "'s buffers in GPU " + std::to_string(device) + "'s memory (" + e.what() +
                     "); cpu-partitioned runs in host memory");
  }
}

}  // namespace gpuolap::cube
