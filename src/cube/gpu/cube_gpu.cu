// The GPU forms of cube creation: gpu-naive, gpu-sorted, gpu-lattice and
// gpu-expand over the coded table — or, with several contexts, a slice of
// its rows per context, built at once: gpu-lattice merges the slices'
// finest cells on the first context's GPU (copied GPU to GPU) and derives
// the coarser sets there once; the others build every set per slice and
// merge the parts on the host (part_merge.cpp). A runner per context keeps
// its slice in pinned host memory and on the device between builds
// (uploaded again only when another table or slice is built). An upload
// goes in chunks on the side stream where the first step can take the rows
// chunk by chunk (gpu-lattice's finest set from sorted rows or into a
// dense cube, gpu-naive), each chunk aggregated while the next is copied.
// Stages are timed with CUDA events: "upload" (host to device), the
// algorithm's kernels, and "download" (device to host), so that the bus is
// seen beside the kernels.
#include <cub/cub.cuh>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <array>
#include <barrier>
#include <bit>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cube/cube_algorithms.hpp"
#include "cube/gpu/cube_kernels.cuh"
#include "cube/key_split.hpp"
#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/device_info.hpp"
#include "gpu/runtime/pinned_buffer.cuh"
#include "gpu/runtime/stage_clock.cuh"
#include "gpuolap/error.hpp"
#include "gpuolap/huge_pages.hpp"
#include "groupby/gpu/slot_reduce_by_key.cuh"
#include "groupby/gpu/sorted_runs_one_pass.cuh"

namespace gpuolap::cube {
namespace gpu {
namespace {

using gpuolap::DeviceBuffer;
using gpuolap::gpu::StageClock;

constexpr int kBlock = 256;
// Sorted positions per thread of aggregate_run_chunks.
constexpr int kRunChunk = 16;
// The lattice's waves of dense sets (coarser()). A set whose best parent
// is still queued in the wave takes the best parent already computed
// instead when that has at most kWaveParentCells cells (by its bound: the
// count itself is on the device). Each warp of cells_into_dense_wave takes
// 128 parent cells, so 2^20 of them are 8,192 warps of one latency-bound
// step each, about 2.6 rounds of what an H100 or H200 holds at once (132
// SMs, 3 blocks of 8 warps at the kernel's 80 registers): at worst about
// 40 us, against 33 us for another wave (its launches and its own step;
// ncu on an H200). A bound is often far above the count (a key space that
// a functional dependency leaves mostly empty: (year, month,
// product_group, product) of sales-flat has 505 K cells and 46 K filled),
// and warps past the count return at once. A wave's dense cubes hold at
// most kWaveCells cells together: one set's own limit (dense_fits), so
// that a wave never takes more memory than the largest set may alone.
constexpr std::uint64_t kWaveParentCells = std::uint64_t{1} << 20;
constexpr std::uint64_t kWaveCells = std::uint64_t{1} << 26;

unsigned grid_for(std::size_t items, int block = kBlock) {
  return static_cast<unsigned>(std::clamp<std::size_t>((items + block - 1) / block, 1, 1u << 30));
}

int bits_for(std::uint64_t values) { return values <= 1 ? 0 : std::bit_width(values - 1); }

// Calls f on the same column of each of `cells` (SetCells or DeviceCells,
// laid out alike), for every column the aggregates of `slots` keep: the
// keys, then per aggregate its bits, its high words (integer sums) and its
// counts.
template <class F, class... Cells>
void for_each_column(const std::vector<groupby::AggregateSlot>& slots, F f, Cells&... cells) {
  f(cells.keys...);
  for (std::size_t a = 0; a < slots.size(); ++a) {
    f(cells.bits[a]...);
    if (groupby::integer_sum(slots[a])) f(cells.high[a]...);
    if (slots[a].keeps_count) f(cells.count[a]...);
  }
}

// The host vectors a build's cells will be downloaded into, sized (and so
// faulted in) while the GPUs work: one SetCells per requested set, each
// vector `sizes[s]` long. Faulting in fresh pages was the largest fixed
// cost of a build after the GPU's (4 to 6 ms for the 70 MB of 1.5 M cells
// on a 64-core host, whether 1 or 4 GPUs built; the copy into faulted
// vectors takes 1.3 ms). The sizes are the last build's of the same
// table and sets, so a rebuild gets its vectors ready; the bounds each
// set's key space gives (at most the rows) were tried, and faulting them
// took 30 to 50 ms for that cube, longer than its whole GPU build.
std::vector<SetCells> host_cells_for(const CodedTable& coded, const std::vector<std::size_t>& sizes) {
  std::vector<SetCells> out(sizes.size(), empty_cells(coded));
  std::vector<std::pair<std::vector<std::uint64_t>*, std::size_t>> all;
  for (std::size_t s = 0; s < out.size(); ++s)
    for_each_column(coded.slots, [&](std::vector<std::uint64_t>& v) { all.emplace_back(&v, sizes[s]); }, out[s]);
  tbb::parallel_for(std::size_t{0}, all.size(), [&](std::size_t k) {
    auto& [to, size] = all[k];
    resize_on_huge_pages(*to, size);
  });
  return out;
}

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

// A requested set's compact cells: cells_at(at), or (gpu-expand, whose
// sets share one array) `count` of them from `begin`, their keys with the
// set's index above `key_mask` to be cleared.
struct CellRange {
  static constexpr std::size_t kAll = ~std::size_t{0};
  std::size_t at = 0;
  std::size_t begin = 0;
  std::size_t count = kAll;
  std::uint64_t key_mask = ~std::uint64_t{0};
};

// The rows a context builds from: rows [first, first + rows) of the coded
// table, or (by_key) the `rows` rows whose key is in [lo, hi), in table
// order (key_split.hpp).
struct RowSlice {
  std::size_t first = 0, rows = 0;
  bool by_key = false;
  std::uint64_t lo = 0, hi = 0;
  bool operator==(const RowSlice&) const = default;
};

// Where a downloaded set's cells go instead of vectors of their own: into
// `cells`' vectors (already sized), from cell `offset` on; several
// contexts' disjoint parts of one set are written side by side this way.
struct CellsInto {
  SetCells* cells = nullptr;
  std::size_t offset = 0;
  bool written = false;  // there already (finest_to_host), nothing to download
};

}  // namespace

class CubeRunner {
 public:
  explicit CubeRunner(int device) : ctx_(device) {}
  int device() const { return ctx_.device(); }

  // Starts a build of `slice` of the coded table: the slice staged and
  // uploaded unless it is resident, the stage clock on. The upload itself
  // waits for the build's first step (upload_all(), or with_upload() in
  // `upload_chunks` chunks; 0: chunks of about 32 MB).
  void begin(const CodedTable& coded, const BuildOptions& options, StageTimes& stages, const RowSlice& slice) {
    ctx_.bind();
    wave_.clear();  // a build that failed may have left jobs queued
    wave_cells_ = wave_bound_ = 0;
    slice_ = slice;
    rows_ = slice.rows;
    timing_ = options.timing;
    clock_.reset();
    side_clock_.reset();
    clock_.emplace(ctx_.stream(), ctx_.events(), timing_);
    keep_resident_ = options.keep_resident;
    upload_chunks_ = options.upload_chunks;
    sorted_runs_ = options.sorted_runs;
    upload_pending_ = resident_ != slice_of(coded) || !keep_resident_;
    if (upload_pending_) {
      stage(coded, stages, timing_);
      resident_ = Slice{};  // its buffers are about to be overwritten
      reserve_columns(coded);
    }
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
  }

  // The slice's whole cube: where each requested set's compact cells are.
  std::vector<CellRange> build(const CodedTable& coded, const CubeSpec& spec, Algorithm algorithm) {
    auto whole = [](const std::vector<std::size_t>& at) {
      std::vector<CellRange> ranges;
      for (std::size_t i : at) ranges.push_back({i});
      return ranges;
    };
    switch (algorithm) {
      case Algorithm::GpuNaive:
        return whole(naive(coded, spec, *clock_));
      case Algorithm::GpuSorted:
        upload_all(coded);
        return whole(sorted(coded, spec, *clock_));
      case Algorithm::GpuLattice:
        finest(coded, spec);
        return coarser(coded, spec);
      default:
        upload_all(coded);
        return expand(coded, spec, *clock_);
    }
  }

  // gpu-lattice's first step: the slice's finest cells (their runs when
  // the rows are sorted; a dense cube when it fits; else sorted by key
  // first), their count on the host when it returns. The first two take
  // an upload chunk by chunk (with_upload); a sort waits for every row.
  void finest(const CodedTable& coded, const CubeSpec& spec) {
    StageClock& clock = *clock_;
    const cudaStream_t s = ctx_.stream();
    finest_at_ = spec.sets.size();
    const std::size_t dense_at = finest_at_ + 1;  // the dense cube a set fills before compaction
    std::optional<std::uint32_t> known;  // the runs counted on the host, if a sorted rebuild takes them
    if (coded.sorted) {
      const std::vector<std::size_t> cuts =
          upload_pending_ ? upload_cuts(coded, /*at_run_borders=*/true) : std::vector<std::size_t>{};
      if (!upload_pending_ || cuts.size() <= 2) {
        upload_all(coded);
        clock.start("finest cells");
        known = counted_runs(coded);
        row_runs(keys_.data(), rows_, nullptr, finest_at_, known);
      } else {
        // Chunks cut where a run starts, so that no cell spans two: each
        // chunk's runs follow the last chunk's. The runs are counted on the
        // host's sorted keys, so that the cells are allocated for them alone
        // and no chunk waits for its count.
        DeviceCells& out = cells_at(finest_at_);
        std::uint32_t* count = count_of(finest_at_);
        const std::vector<std::uint32_t>& runs = runs_per_chunk(coded, cuts);
        std::size_t total = 0;
        for (std::uint32_t r : runs) total += r;
        const DeviceAggregates to = out.reserve(slots_, total);
        out.keys.reserve(std::max<std::size_t>(total, 1));
        run_ids_.reserve(std::max<std::size_t>(rows_, 1));
        std::size_t cells = 0, chunk = 0;
        with_upload(coded, cuts, "finest cells", [] {}, [&](std::size_t b, std::size_t e) {
          cells += reduce_runs(keys_.data() + b, e - b, rows_from(b), nullptr, count, runs[chunk++], [&](std::uint32_t /*runs: room made above*/) {
            return std::pair{cells_from(to, cells), out.keys.data() + cells};
          });
        });
        set_count<<<1, 1, 0, s>>>(count, static_cast<std::uint32_t>(cells));
        GPUOLAP_CHECK_LAUNCH("set_count");
        out.size = static_cast<std::uint32_t>(cells);
      }
    } else if (dense_fits(coded.finest.cells, rows_)) {
      DeviceCells& dense = cells_at(dense_at);
      // The dense cube is initialized while the first chunk is copied.
      auto prepare = [&] {
        DenseTarget t;
        t.projection = projection(coded, coded.finest, coded.finest);
        t.cells = dense_cube(dense, coded.finest.cells);
        t.filled = dense.filled.data();
        targets_.upload(&t, 1, s);
      };
      with_upload(coded, upload_cuts(coded, false), "finest cells", prepare, [&](std::size_t b, std::size_t e) {
        rows_into_dense<<<grid_for(e - b), kBlock, 0, s>>>(keys_.data() + b, e - b, rows_from(b), targets_.data(), 1);
        GPUOLAP_CHECK_LAUNCH("rows_into_dense");
      });
      compact(dense, coded.finest.cells, finest_at_);
    } else {
      upload_all(coded);
      clock.start("finest cells");
      // The rows' keys are the finest set's own: sorted as they are, with
      // their positions.
      positions_.reserve(std::max<std::size_t>(rows_, 1));
      project_keys<<<grid_for(rows_), kBlock, 0, s>>>(keys_.data(), rows_, Projection{}, nullptr, positions_.data());
      GPUOLAP_CHECK_LAUNCH("project_keys");
      sort_with_positions(keys_.data(), positions_.data(), rows_, bits_for(coded.finest.cells));
      row_runs(sorted_keys_.data(), rows_, order_.data(), finest_at_);
    }
    clock.stop();  // at the last kernel queued: the wait for the count is not the kernels'
    // Every count the coarser sets use exists from here on: count_of() may
    // replace the counts' buffer only while nothing queued points into it
    // (the waves' jobs do).
    count_of(dense_at);
    sync_sizes();
    if (known && cells_at(finest_at_).size != *known)
      throw std::logic_error("gpu-lattice: the finest set has " + std::to_string(cells_at(finest_at_).size) +
                             " cells, not the " + std::to_string(*known) + " runs counted on the host");
  }

  // With several contexts, on the first: the finest cells of every
  // context's slice (this one's and `others'`, computed by finest())
  // copied here, GPU to GPU, and merged into this context's finest cells,
  // as a set is made from a parent whose key is its own. Sorted rows give
  // slices whose finest cells overlap only at the cuts; unsorted ones give
  // each context most of the key space, merged here once.
  void absorb_finest(const CodedTable& coded, const std::vector<CubeRunner*>& others) {
    ctx_.bind();
    const cudaStream_t s = ctx_.stream();
    const std::size_t all_at = finest_at_ + 2;
    std::size_t total = cells_at(finest_at_).size;
    for (CubeRunner* o : others) total += o->cells_at(o->finest_at_).size;
    clock_->start("finest cells of the other contexts (GPU to GPU)");
    DeviceCells& all = cells_at(all_at);
    all.reserve(slots_, total);
    all.keys.reserve(std::max<std::size_t>(total, 1));
    std::size_t offset = 0;
    auto append = [&](CubeRunner& from) {
      DeviceCells& f = from.cells_at(from.finest_at_);
      const std::size_t n = f.size;
      auto copy = [&](const DeviceBuffer<std::uint64_t>& to, const DeviceBuffer<std::uint64_t>& source) {
        if (n)
          GPUOLAP_CUDA_CHECK(cudaMemcpyPeerAsync(to.data() + offset, ctx_.device(), source.data(), from.ctx_.device(),
                                                 n * 8, s));
      };
      for_each_column(slots_, copy, all, f);
      offset += n;
    };
    append(*this);
    for (CubeRunner* o : others) {
      ctx_.reach_peer(o->device());
      append(*o);
    }
    clock_->stop();
    set_count<<<1, 1, 0, s>>>(count_of(all_at), static_cast<std::uint32_t>(total));
    GPUOLAP_CHECK_LAUNCH("set_count");
    clock_->start("merge of the contexts' finest cells");
    from_parent(coded, coded.finest.mask, all_at, total, coded.finest.mask, finest_at_);
    clock_->stop();
    sync_sizes();
  }

  // gpu-lattice's finest cells (finest() has run) copied to the host beside
  // the coarser sets: queued now on the side stream into page-locked
  // memory, then finest_to_host() writes them into their vectors while
  // the coarser sets' kernels run (coarser()'s `meanwhile`). Without this,
  // the download and the copy into vectors (2 ms of a 17 ms build of 1.4 M
  // finest cells on an H200) waited for the coarser sets.
  void queue_finest_download() {
    const cudaStream_t s = ctx_.stream(), side = ctx_.side_stream();
    DeviceCells& f = cells_at(finest_at_);
    std::size_t words = 0;
    for_each_column(slots_, [&](const DeviceBuffer<std::uint64_t>&) { words += f.size; }, f);
    early_.reserve(std::max<std::size_t>(words, 1) * 8);
    GPUOLAP_CUDA_CHECK(cudaEventRecord(early_events_.at(0), s));
    GPUOLAP_CUDA_CHECK(cudaStreamWaitEvent(side, early_events_.at(0), 0));
    if (!side_clock_) side_clock_.emplace(side, side_events_, timing_);
    side_clock_->start("finest cells download (device to host, beside the coarser sets)");
    auto* pinned = static_cast<std::uint64_t*>(early_.data());
    std::size_t at = 0;
    for_each_column(slots_, [&](const DeviceBuffer<std::uint64_t>& from) {
      if (f.size) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(pinned + at, from.data(), f.size * 8, cudaMemcpyDeviceToHost, side));
      at += f.size;
    }, f);
    side_clock_->stop();
    GPUOLAP_CUDA_CHECK(cudaEventRecord(early_events_.at(1), side));
  }
  // The finest cells queued by queue_finest_download() into `into`'s
  // vectors (sized for them) once they are on the host.
  void finest_to_host(const CellsInto& into, StageTimes& stages) {
    HostStages host(stages, timing_);
    host.start("finest cells into host vectors (host, beside the coarser sets)");
    GPUOLAP_CUDA_CHECK(cudaEventSynchronize(early_events_.at(1)));
    const std::size_t n = cells_at(finest_at_).size;
    const auto* pinned = static_cast<const std::uint64_t*>(early_.data());
    std::vector<std::vector<std::uint64_t>*> columns;
    for_each_column(slots_, [&](std::vector<std::uint64_t>& v) { columns.push_back(&v); }, *into.cells);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, columns.size() * n, std::size_t{1} << 18),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                        // Words r of the columns laid end to end, column by column.
                        for (std::size_t w = r.begin(); w < r.end();) {
                          const std::size_t c = w / n, i = w % n, run = std::min(r.end() - w, n - i);
                          std::memcpy(columns[c]->data() + into.offset + i, pinned + w, run * 8);
                          w += run;
                        }
                      });
  }

  // gpu-lattice's second step: each requested set, finest first, from the
  // computed set with the fewest cells that contains it (or, to stay in
  // the wave being queued, from a small one already launched: flush_wave,
  // kWaveParentCells). Counts stay on
  // the device until the end, so that the host waits once; `meanwhile`
  // runs on the host before that wait, while the kernels run.
  std::vector<CellRange> coarser(const CodedTable& coded, const CubeSpec& spec,
                                 const std::function<void()>& meanwhile = {}) {
    // Computed sets: their mask, where their cells are, at most how many
    // (the count itself is on the device), and whether they are still in
    // the wave being queued (not launched yet).
    struct Computed {
      SetMask mask;
      std::size_t at;
      std::uint64_t bound;
      bool queued = false;
    };
    std::vector<Computed> computed{{coded.finest.mask, finest_at_, cells_at(finest_at_).size}};
    // The computed set with the fewest cells that contains `mask`
    // (`launched`: among those whose wave has been launched only).
    auto parent_of = [&](SetMask mask, bool launched) {
      std::optional<Computed> best;
      for (const Computed& c : computed)
        if ((c.mask & mask) == mask && !(launched && c.queued) && (!best || c.bound < best->bound)) best = c;
      return *best;  // the finest set contains every set
    };
    auto launch = [&] {
      flush_wave();
      for (Computed& c : computed) c.queued = false;
    };
    std::vector<std::size_t> order(spec.sets.size());
    for (std::size_t s = 0; s < order.size(); ++s) order[s] = s;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::popcount(spec.sets[a]) > std::popcount(spec.sets[b]);
    });
    std::vector<CellRange> result(spec.sets.size());
    clock_->start("coarser sets from their parents");
    for (std::size_t s : order) {
      const SetMask mask = spec.sets[s];
      Computed from = parent_of(mask, false);
      if (from.mask == mask) {  // the finest set itself
        result[s] = {from.at};
        continue;
      }
      // A parent still queued would end the wave here; a small parent
      // already computed costs the same one step per warp and keeps the
      // wave going.
      if (from.queued) {
        const Computed launched = parent_of(mask, true);
        if (launched.bound <= kWaveParentCells) from = launched;
        else launch();
      }
      const Layout layout = layout_of(coded, mask);
      if (dense_fits(layout.cells, from.bound)) {
        if (!wave_.empty() && wave_cells_ + layout.cells > kWaveCells) launch();
        queue_dense(coded, from.mask, from.at, from.bound, mask, s);
        computed.push_back({mask, s, std::min(layout.cells, from.bound), true});
      } else {
        // A sort waits for its parent's count, and reads all of it: the
        // best parent, now that none is queued.
        launch();
        from = parent_of(mask, false);
        computed.push_back({mask, s, sorted_from_parent(coded, from.mask, from.at, mask, s)});
      }
      result[s] = {s};
    }
    launch();
    // The stage ends with the last kernel queued: the host's work beside
    // it and the wait for the counts are not the kernels' time.
    clock_->stop();
    if (meanwhile) meanwhile();
    sync_sizes();
    return result;
  }

  // The cells of `ranges` to the host, and the build's stage times;
  // `prepared`: host_cells_for's vectors, or none.
  // `into`: as download()'s.
  std::vector<SetCells> end(const CodedTable& coded, const std::vector<CellRange>& ranges, StageTimes& stages,
                            std::vector<SetCells> prepared = {}, const std::vector<CellsInto>& into = {}) {
    ctx_.bind();  // the calling thread may not be the one that built
    StageTimes host;  // after the GPU's stages, which it follows
    std::vector<SetCells> out = download(coded, ranges, *clock_, host, std::move(prepared), into);
    end(stages);
    stages.insert(stages.end(), host.begin(), host.end());
    return out;
  }
  // gpu-lattice's finest cells (their count on the host: after finest()).
  std::size_t finest_cells() { return cells_at(finest_at_).size; }
  // How many cells `range` holds (their counts on the host: after build()).
  std::size_t cells_in(const CellRange& range) {
    return range.count == CellRange::kAll ? cells_at(range.at).size : range.count;
  }
  // The stage times of a build whose cells another context took.
  void end(StageTimes& stages) {
    ctx_.bind();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
    if (side_clock_)
      for (auto& stage : side_clock_->read()) stages.push_back(stage);
    for (auto& stage : clock_->read()) stages.push_back(stage);
    side_clock_.reset();
    clock_.reset();
  }

 private:
  // The table's keys and measure columns in page-locked host memory, copied
  // there once per coded table (in parallel), so that every upload reads
  // them at the bus's speed: from pageable vectors the driver stages each
  // copy itself (7 GB/s for 400 MB on an H200's host).
  void stage(const CodedTable& coded, StageTimes& stages, bool timing) {
    if (staged_ == slice_of(coded)) return;
    const auto start = std::chrono::steady_clock::now();
    staged_ = Slice{};
    // Each column's rows of the slice: where they start in the table, and
    // their width.
    const std::size_t first = slice_.by_key ? 0 : slice_.first;
    std::vector<RowColumn> parts{{coded.keys.data() + first, 8}};
    for (const groupby::ColumnView& c : coded.measures.values) {
      const std::size_t width = value_width(c.type);
      parts.push_back({static_cast<const std::uint8_t*>(c.values) + first * width, width});
      parts.push_back({c.nulls ? c.nulls + first : nullptr, c.nulls ? std::size_t{1} : 0});
    }
    staged_offsets_.clear();
    std::size_t bytes = 0;
    for (const RowColumn& c : parts) {
      staged_offsets_.push_back(bytes);
      bytes += (rows_ * c.width + 255) / 256 * 256;
    }
    // No copy still reads the old bytes.
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.side_stream()));
    pinned_.reserve(std::max<std::size_t>(bytes, 1));
    auto* base = static_cast<std::uint8_t*>(pinned_.data());
    for (std::size_t p = 0; p < parts.size(); ++p) parts[p].to = base + staged_offsets_[p];
    std::erase_if(parts, [](const RowColumn& c) { return c.width == 0; });  // no NULL flags
    if (slice_.by_key) {
      const std::size_t copied =
          copy_key_range(coded.keys.data(), coded.rows, coded.sorted, slice_.lo, slice_.hi, parts);
      if (copied != rows_)
        throw std::logic_error("a key range's rows changed: " + std::to_string(copied) + ", planned " +
                               std::to_string(rows_));
    } else {
      for (const RowColumn& c : parts)
        tbb::parallel_for(tbb::blocked_range<std::size_t>(0, rows_ * c.width, std::size_t{1} << 22),
                          [&](const tbb::blocked_range<std::size_t>& r) {
                            std::memcpy(static_cast<std::uint8_t*>(c.to) + r.begin(),
                                        static_cast<const std::uint8_t*>(c.from) + r.begin(), r.size());
                          });
    }
    staged_ = slice_of(coded);
    if (timing)
      stages.emplace_back("stage into pinned memory (host, once)",
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }

  // Room on the device for the slice's keys and measure columns.
  void reserve_columns(const CodedTable& coded) {
    keys_.reserve(std::max<std::size_t>(rows_, 1));
    for (std::size_t v = 0; v < coded.measures.values.size(); ++v) {
      const groupby::ColumnView& c = coded.measures.values[v];
      values_[v].reserve(std::max<std::size_t>(rows_ * value_width(c.type), 1));
      if (c.nulls) nulls_[v].reserve(rows_);
    }
  }

  static std::size_t value_width(groupby::ValueType type) { return type == groupby::ValueType::Int32 ? 4 : 8; }

  // Rows [b, e) of the staged keys and measure columns to the device, on `stream`.
  void copy_rows(const CodedTable& coded, std::size_t b, std::size_t e, cudaStream_t stream) {
    if (e <= b) return;
    const auto* base = static_cast<const std::uint8_t*>(pinned_.data());
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(keys_.data() + b, base + staged_offsets_[0] + b * 8, (e - b) * 8,
                                       cudaMemcpyHostToDevice, stream));
    for (std::size_t v = 0; v < coded.measures.values.size(); ++v) {
      const groupby::ColumnView& c = coded.measures.values[v];
      const std::size_t w = value_width(c.type);
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(values_[v].data() + b * w, base + staged_offsets_[1 + 2 * v] + b * w,
                                         (e - b) * w, cudaMemcpyHostToDevice, stream));
      if (c.nulls)
        GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(nulls_[v].data() + b, base + staged_offsets_[2 + 2 * v] + b, e - b,
                                           cudaMemcpyHostToDevice, stream));
    }
  }

  // The slice is on the device: resident for the next build, if kept.
  void uploaded(const CodedTable& coded) {
    upload_pending_ = false;
    if (keep_resident_) resident_ = slice_of(coded);
  }

  // The whole slice to the device in one copy, unless it is there.
  void upload_all(const CodedTable& coded) {
    if (!upload_pending_) return;
    clock_->start("upload (host to device)");
    copy_rows(coded, 0, rows_, ctx_.stream());
    clock_->stop();
    uploaded(coded);
  }

  // Where an upload in chunks cuts the slice: 0, the cuts, rows_ (relative
  // to the slice). `upload_chunks_` chunks, or about 32 MB each (at most
  // 64): enough that the last chunk's kernels, which nothing overlaps, are
  // short, few enough that each chunk's launches and waits stay small
  // beside its copy. `at_run_borders`: each cut moved on to where a run of
  // equal keys starts (sorted rows), so that no cell spans two chunks.
  std::vector<std::size_t> upload_cuts(const CodedTable& coded, bool at_run_borders) const {
    std::size_t row_bytes = 8;
    for (const groupby::ColumnView& c : coded.measures.values) row_bytes += value_width(c.type) + (c.nulls ? 1 : 0);
    std::size_t chunks = upload_chunks_ > 0 ? static_cast<std::size_t>(upload_chunks_)
                                            : std::clamp<std::size_t>(rows_ * row_bytes / (std::size_t{32} << 20), 1, 64);
    chunks = std::min(chunks, std::max<std::size_t>(rows_, 1));
    const std::uint64_t* keys = at_run_borders ? staged_keys() : nullptr;
    std::vector<std::size_t> cuts{0};
    for (std::size_t k = 1; k < chunks; ++k) {
      std::size_t c = rows_ * k / chunks;
      if (at_run_borders && c > 0) c = static_cast<std::size_t>(std::upper_bound(keys + c - 1, keys + rows_, keys[c - 1]) - keys);
      if (c > cuts.back() && c < rows_) cuts.push_back(c);
    }
    cuts.push_back(rows_);
    return cuts;
  }

  // The runs of the slice's sorted keys where runs_per_chunk has counted
  // them for this slice (its first build uploaded in chunks, cut where runs
  // start): a rebuild of the resident slice then allocates its finest
  // cells without waiting for the GPU's count (a round trip of the host).
  std::optional<std::uint32_t> counted_runs(const CodedTable& coded) const {
    if (!(chunk_runs_.slice == slice_of(coded))) return std::nullopt;
    std::uint64_t total = 0;
    for (std::uint32_t r : chunk_runs_.runs) total += r;
    return static_cast<std::uint32_t>(total);
  }
  // The runs of equal keys in each chunk of `cuts` (sorted rows, cut at run
  // borders), counted on the host's keys in parallel; kept for the next
  // build of the same slice and cuts.
  const std::vector<std::uint32_t>& runs_per_chunk(const CodedTable& coded, const std::vector<std::size_t>& cuts) {
    if (chunk_runs_.slice == slice_of(coded) && chunk_runs_.cuts == cuts) return chunk_runs_.runs;
    const std::uint64_t* keys = staged_keys();
    std::vector<std::uint32_t> runs(cuts.size() - 1);
    tbb::parallel_for(std::size_t{0}, runs.size(), [&](std::size_t k) {
      std::uint32_t r = cuts[k + 1] > cuts[k] ? 1 : 0;
      for (std::size_t i = cuts[k] + 1; i < cuts[k + 1]; ++i) r += keys[i] != keys[i - 1];
      runs[k] = r;
    });
    chunk_runs_ = {slice_of(coded), cuts, std::move(runs)};
    return chunk_runs_.runs;
  }

  // Starts main-stream stage `stage` with the slice's upload, if pending,
  // and runs prepare(), then f(b, e) for each chunk [b, e) of `cuts` once
  // its rows are on the device; the caller stops the stage. One chunk (or
  // nothing to upload): the upload first, as its own stage, then
  // f(0, rows). Several: every chunk's copy queued at once on the side
  // stream (timed there as the upload), the main stream waiting for each
  // chunk's copy before its f, so that chunk k is aggregated while chunk
  // k + 1 is copied (stage "<stage>, beside the upload": from the start of
  // the copies to the last chunk's kernels). prepare() runs before the
  // copies are queued, so that its allocations (a growing buffer's
  // cudaFree waits for the whole device) do not hold them up, and its
  // kernels run beside the first copy.
  template <class Prepare, class F>
  void with_upload(const CodedTable& coded, const std::vector<std::size_t>& cuts, const std::string& stage,
                   Prepare prepare, F f) {
    if (!upload_pending_ || cuts.size() <= 2) {
      upload_all(coded);
      clock_->start(stage.c_str());
      prepare();
      f(0, rows_);
      return;
    }
    const cudaStream_t s = ctx_.stream(), side = ctx_.side_stream();
    clock_->start((stage + ", beside the upload").c_str());
    // The copies follow what the main stream has queued (the last build's
    // kernels read the buffers they overwrite) and the stage's start.
    GPUOLAP_CUDA_CHECK(cudaEventRecord(chunk_events_.at(0), s));
    GPUOLAP_CUDA_CHECK(cudaStreamWaitEvent(side, chunk_events_.at(0), 0));
    prepare();
    side_clock_.emplace(side, side_events_, timing_);
    side_clock_->start("upload (host to device)");
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      copy_rows(coded, cuts[k], cuts[k + 1], side);
      GPUOLAP_CUDA_CHECK(cudaEventRecord(chunk_events_.at(k + 1), side));
    }
    side_clock_->stop();
    for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
      GPUOLAP_CUDA_CHECK(cudaStreamWaitEvent(s, chunk_events_.at(k + 1), 0));
      f(cuts[k], cuts[k + 1]);
    }
    uploaded(coded);
  }

  // The row slots over rows [b, rows_): each value column and NULL flags
  // from row b on, so that a chunk's kernels count its rows from 0.
  DeviceAggregates rows_from(std::size_t b) const {
    DeviceAggregates r = row_slots_;
    for (int a = 0; a < r.count; ++a) {
      groupby::AggregateSlot& slot = r.slot[a];
      if (slot.values) slot.values = static_cast<const std::uint8_t*>(slot.values) + b * value_width(slot.type);
      if (slot.nulls) slot.nulls += b;
    }
    return r;
  }

  // States `A` from cell `offset` on.
  static DeviceAggregates cells_from(DeviceAggregates A, std::size_t offset) {
    for (int a = 0; a < A.count; ++a) {
      A.bits[a] += offset;
      if (A.high[a]) A.high[a] += offset;
      if (A.counts[a]) A.counts[a] += offset;
    }
    return A;
  }

  DeviceCells& cells_at(std::size_t i) {
    while (sets_.size() <= i) sets_.push_back(std::make_unique<DeviceCells>());
    return *sets_[i];
  }

  // Where cells_at(at)'s count lives on the device: steps that follow read
  // it there, so that the host waits for the counts once (sync_sizes), not
  // after every set.
  std::uint32_t* count_of(std::size_t at) {
    if (counts_.size() <= at) {
      // Grown only between builds' steps: nothing pending reads the old one.
      GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
      std::vector<std::uint32_t> kept = counts_.download(counts_.size(), ctx_.stream());
      kept.resize(at + 16, 0);
      counts_ = DeviceBuffer<std::uint32_t>{};
      counts_.upload(kept, ctx_.stream());
    }
    return counts_.data() + at;
  }

  // Every cells_at(i)'s size from its count on the device.
  void sync_sizes() {
    const std::vector<std::uint32_t> counts = counts_.download(std::min(counts_.size(), sets_.size()), ctx_.stream());
    for (std::size_t i = 0; i < counts.size(); ++i) sets_[i]->size = counts[i];
  }

  // A dense cube of `cells` cells in `d`, initialized.
  DeviceAggregates dense_cube(DeviceCells& d, std::uint64_t cells) {
    DeviceAggregates A = d.reserve(slots_, cells);
    d.filled.reserve(cells);
    init_cells<<<grid_for(cells), kBlock, 0, ctx_.stream()>>>(A, d.filled.data(), cells);
    GPUOLAP_CHECK_LAUNCH("init_cells");
    return A;
  }

  // The filled cells of dense cube `dense` (cells many) into compact
  // cells_at(at), whose count stays on the device (count_of(at)).
  void compact(DeviceCells& dense, std::uint64_t cells, std::size_t at) {
    DenseJob job{};
    job.out = compact_cells(at, cells);
    job.out_keys = cells_at(at).keys.data();
    job.out_count = count_of(at);
    const DeviceAggregates cube = dense.reserve(slots_, cells);
    compact_jobs(cube, dense.filled.data(), cells, cells, upload_jobs({job}), 1);
  }

  // Room for `cells` compact cells at cells_at(at); their states.
  DeviceAggregates compact_cells(std::size_t at, std::uint64_t cells) {
    DeviceCells& out = cells_at(at);
    out.keys.reserve(std::max<std::uint64_t>(cells, 1));
    return out.reserve(slots_, cells);
  }

  // `jobs` (on the host) copied to the device, each call's to a place of
  // its own, so that a copy never overwrites jobs that kernels queued
  // before it may still read.
  // They go through page-locked memory (the same place there), so that
  // the copy returns at once: from pageable memory it waits for a staging
  // buffer, and the next wave's launches with it.
  DenseJob* upload_jobs(const std::vector<DenseJob>& jobs) {
    if (jobs_used_ + jobs.size() > jobs_.size()) {
      // Full: once the stream has passed every copy and kernel that reads
      // them, the places are used again from the first (grown only for a
      // call with more jobs than they hold).
      GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
      jobs_used_ = 0;
      if (jobs.size() > jobs_.size()) {
        const std::size_t room = std::max<std::size_t>(2 * jobs_.size(), jobs.size() + 64);
        jobs_.reserve(room);
        jobs_staged_.reserve(room * sizeof(DenseJob));
      }
    }
    DenseJob* staged = static_cast<DenseJob*>(jobs_staged_.data()) + jobs_used_;
    std::copy(jobs.begin(), jobs.end(), staged);
    DenseJob* at = jobs_.data() + jobs_used_;
    GPUOLAP_CUDA_CHECK(
        cudaMemcpyAsync(at, staged, jobs.size() * sizeof(DenseJob), cudaMemcpyHostToDevice, ctx_.stream()));
    jobs_used_ += jobs.size();
    return at;
  }

  // The filled cells of dense cubes laid end to end (`cube`, `filled`;
  // `cells` in all, at most `bound` of them filled) into the compact cells
  // of the jobs whose cubes they are (`jobs` on the device, job_count of
  // them), and each job's count into its out_count.
  void compact_jobs(const DeviceAggregates& cube, const std::uint8_t* filled, std::uint64_t cells, std::uint64_t bound,
                    DenseJob* jobs, int job_count) {
    const cudaStream_t s = ctx_.stream();
    selected_.reserve(1);
    index_.reserve(cells);
    const thrust::counting_iterator<std::uint32_t> all(0);
    std::size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, all, filled, index_.data(), selected_.data(),
                                                  static_cast<std::int64_t>(cells), s));
    GPUOLAP_CUDA_CHECK(cub::DeviceSelect::Flagged(ctx_.scratch(bytes), bytes, all, filled, index_.data(),
                                                  selected_.data(), static_cast<std::int64_t>(cells), s));
    compaction_counts<<<grid_for(std::size_t{32} * job_count), kBlock, 0, s>>>(jobs, job_count, index_.data(),
                                                                             selected_.data());
    GPUOLAP_CHECK_LAUNCH("compaction_counts");
    gather_wave<<<grid_for(bound), kBlock, 0, s>>>(jobs, job_count, index_.data(), selected_.data(), cube);
    GPUOLAP_CHECK_LAUNCH("gather_wave");
  }

  // A set (`mask`'s, into cells_at(at)) queued in the wave from the cells of
  // a computed one (`from_mask`'s at `from_at`, at most `from_bound`).
  void queue_dense(const CodedTable& coded, SetMask from_mask, std::size_t from_at, std::uint64_t from_bound,
                   SetMask mask, std::size_t at) {
    DeviceCells& p = cells_at(from_at);
    const Layout layout = layout_of(coded, mask);
    DenseJob job{};
    job.runs.parent_keys = p.keys.data();
    job.runs.parent_count = count_of(from_at);
    job.runs.parent = p.reserve(slots_, from_bound);
    job.runs.target.projection = projection(coded, layout_of(coded, from_mask), layout);
    job.bound = from_bound;
    job.offset = wave_cells_;
    // A warp per step of 128 parent cells, at most 2^16 blocks (the warps
    // then take several steps each), so that a wave's grid stays far below
    // its limit however many sets it holds.
    const std::size_t steps = (from_bound + 32 * kCellsPerLane - 1) / (32 * kCellsPerLane);
    job.blocks = std::min(grid_for(std::max<std::size_t>(steps, 1) * 32, kDenseRunsBlock), 1u << 16);
    const std::uint64_t cells = std::min(layout.cells, from_bound);
    job.out = compact_cells(at, cells);
    job.out_keys = cells_at(at).keys.data();
    job.out_count = count_of(at);
    wave_.push_back(job);
    wave_cells_ += layout.cells;
    wave_bound_ += cells;
  }

  // The queued wave launched: its dense cubes laid end to end and
  // initialized, every set's parent cells into its cube in one launch,
  // then compacted together.
  void flush_wave() {
    if (wave_.empty()) return;
    const cudaStream_t s = ctx_.stream();
    DeviceCells& dense = cells_at(finest_at_ + 1);
    const DeviceAggregates cubes = dense_cube(dense, wave_cells_);
    unsigned blocks = 0;
    for (DenseJob& job : wave_) {
      job.runs.target.cells = cells_from(cubes, job.offset);
      job.runs.target.filled = dense.filled.data() + job.offset;
      job.first_block = blocks;
      blocks += job.blocks;
    }
    DenseJob* jobs = upload_jobs(wave_);
    const int count = static_cast<int>(wave_.size());
    switch (slots_.size()) {
      case 1: cells_into_dense_wave<1><<<blocks, kDenseRunsBlock, 0, s>>>(jobs, count); break;
      case 2: cells_into_dense_wave<2><<<blocks, kDenseRunsBlock, 0, s>>>(jobs, count); break;
      case 3:
      case 4: cells_into_dense_wave<4><<<blocks, kDenseRunsBlock, 0, s>>>(jobs, count); break;
      default: cells_into_dense_wave<kStates><<<blocks, kDenseRunsBlock, 0, s>>>(jobs, count); break;
    }
    GPUOLAP_CHECK_LAUNCH("cells_into_dense_wave");
    compact_jobs(cubes, dense.filled.data(), wave_cells_, wave_bound_, jobs, count);
    wave_.clear();
    wave_cells_ = wave_bound_ = 0;
  }

  // Compact cells of the runs of `sorted_keys` (n), each run's items added
  // from `source`, into cells_at(at). The runs are numbered by a scan of
  // "a run starts here" flags: written first by the shared-memory border
  // kernel of the paper's §2.3 (staged_borders, gpu-sorted), or computed
  // inside the scan from the keys (the coarser sets a sort makes: one pass
  // less). The runs of rows in the lattice and gpu-expand are row_runs'.
  template <class Source>
  void runs(const std::uint64_t* sorted_keys, std::size_t n, const Source& source, std::size_t at,
            bool staged_borders = false) {
    const cudaStream_t s = ctx_.stream();
    DeviceCells& out = cells_at(at);
    run_ids_.reserve(std::max<std::size_t>(n, 1));
    std::uint32_t r = 0;
    if (n) {
      std::size_t bytes = 0;
      if (staged_borders) {
        flags_.reserve(n);
        border_flags<<<grid_for(n, kBorderBlock), kBorderBlock, 0, s>>>(sorted_keys, n, flags_.data());
        GPUOLAP_CHECK_LAUNCH("border_flags");
        GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, flags_.data(), run_ids_.data(),
                                                         static_cast<std::int64_t>(n), s));
        GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(ctx_.scratch(bytes), bytes, flags_.data(), run_ids_.data(),
                                                         static_cast<std::int64_t>(n), s));
      } else {
        const auto flags =
            thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0), KeyChanges{sorted_keys});
        GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, bytes, flags, run_ids_.data(),
                                                         static_cast<std::int64_t>(n), s));
        GPUOLAP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(ctx_.scratch(bytes), bytes, flags, run_ids_.data(),
                                                         static_cast<std::int64_t>(n), s));
      }
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&r, run_ids_.data() + n - 1, sizeof r, cudaMemcpyDeviceToHost, s));
      GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    }
    const DeviceAggregates to = out.reserve(slots_, r);
    out.keys.reserve(std::max<std::uint32_t>(r, 1));
    if (r) {
      init_compact_cells<<<grid_for(r), kBlock, 0, s>>>(to, r);
      GPUOLAP_CHECK_LAUNCH("init_compact_cells");
      aggregate_run_chunks<<<grid_for((n + kRunChunk - 1) / kRunChunk), kBlock, 0, s>>>(
          sorted_keys, run_ids_.data(), n, kRunChunk, source, to, out.keys.data());
      GPUOLAP_CHECK_LAUNCH("aggregate_run_chunks");
    }
    set_count<<<1, 1, 0, s>>>(count_of(at), r);
    GPUOLAP_CHECK_LAUNCH("set_count");
    out.size = r;
  }

  // The runs of rows sorted by key (`sorted_keys`, n; the rows' values
  // through `rows`, at order[i] or, with no order, i): their number r
  // (`known`, counted on the host already, or counted here: the host
  // waits), then place(r) gives where their states and keys go (a pair:
  // DeviceAggregates, key array), and the runs are reduced into them.
  // `count`: a device word the calls use (it ends holding r). Returns r.
  // Two ways (BuildOptions::sorted_runs):
  //   cub       slot_reduce_by_key.cuh: CUB's unique-by-key finds the runs'
  //             starts (and r), then a reduce-by-key per word of each state
  //             (256 us for the 25 M sorted rows of sales-flat on an H200);
  //   one-pass  groupby/gpu/sorted_runs_one_pass.cuh: the keys read once,
  //             then each aggregate's values once (the default: 169 us
  //             there, COUNT(*) reduced in the keys' pass).
  // The CUB path replaced the scan of run ids and aggregate_run_chunks (a
  // thread per chunk of 16 sorted positions, so a warp's loads 16
  // positions apart): 104 + 503 us for the 25 M sorted rows of the
  // sales-flat cube on an H200, against 260 (ncu, 2026-11-28).
  template <class Place>
  std::uint32_t reduce_runs(const std::uint64_t* sorted_keys, std::size_t n, const DeviceAggregates& rows,
                            const std::uint32_t* order, std::uint32_t* count, std::optional<std::uint32_t> known,
                            Place place) {
    if (sorted_runs_ == SortedRuns::OnePass) {
      const std::uint32_t r = known ? *known : groupby::gpu::count_runs(ctx_, sorted_keys, n, count);
      const auto [to, out_keys] = place(r);
      groupby::gpu::reduce_runs_one_pass(ctx_, sorted_keys, n, order, rows, to, out_keys, count);
      return r;
    }
    const cudaStream_t s = ctx_.stream();
    std::uint32_t r = 0;
    run_ids_.reserve(std::max<std::size_t>(n, 1));  // the runs' starts
    // 32-bit item counts where they fit: CUB's 64-bit offsets cost time.
    auto with_count = [&](auto f) {
      if (n <= INT32_MAX) f(static_cast<std::int32_t>(n));
      else f(static_cast<std::int64_t>(n));
    };
    if (n) {
      with_count([&](auto items) { groupby::gpu::find_run_starts(ctx_, sorted_keys, items, run_ids_.data(), count); });
      if (known) {
        r = *known;
      } else {
        GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&r, count, sizeof r, cudaMemcpyDeviceToHost, s));
        GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
      }
    } else {
      set_count<<<1, 1, 0, s>>>(count, 0);
      GPUOLAP_CHECK_LAUNCH("set_count");
    }
    const auto [to, out_keys] = place(r);
    with_count([&](auto items) {
      groupby::gpu::reduce_slots_by_key(ctx_, sorted_keys, items, run_ids_.data(), r, rows, order, to, out_keys, count);
    });
    return r;
  }

  // Compact cells of the runs of rows sorted by key into cells_at(at),
  // allocated for the runs alone (reduce_runs; `order` and `known` as there).
  void row_runs(const std::uint64_t* sorted_keys, std::size_t n, const std::uint32_t* order, std::size_t at,
                std::optional<std::uint32_t> known = std::nullopt) {
    DeviceCells& out = cells_at(at);
    out.size = reduce_runs(sorted_keys, n, row_slots_, order, count_of(at), known, [&](std::uint32_t r) {
      const DeviceAggregates to = out.reserve(slots_, r);
      out.keys.reserve(std::max<std::uint32_t>(r, 1));
      return std::pair{to, out.keys.data()};
    });
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
    std::uint64_t total = 0;  // saturates: 4,096 sets of up to 2^63 cells each could wrap
    for (SetMask mask : spec.sets) total = std::min(total + std::min(layout_of(coded, mask).cells, std::uint64_t{1} << 40),
                                                    std::uint64_t{1} << 40);
    std::size_t free = 0, memory = 0;
    ctx_.memory_info(free, memory);
    const std::size_t bytes_per_cell = 1 + 8 * slots_.size() * 3;
    if (total > (std::uint64_t{1} << 32) || total * bytes_per_cell > free / 2)
      throw InputError("gpu-naive keeps every grouping set as a dense cube: " + std::to_string(total) +
                       " cells of up to " + std::to_string(bytes_per_cell) + " bytes, more than half of the GPU's free " +
                       std::to_string(free >> 20) + " MB; gpu-lattice or gpu-sorted keep only filled cells");
    // The dense cubes are initialized while the first chunk is copied.
    auto prepare = [&] {
      for (std::size_t s = 0; s < spec.sets.size(); ++s) {
        const Layout layout = layout_of(coded, spec.sets[s]);
        DeviceCells& dense = cells_at(spec.sets.size() + s);
        DenseTarget t;
        t.projection = projection(coded, coded.finest, layout);
        t.cells = dense_cube(dense, layout.cells);
        t.filled = dense.filled.data();
        targets.push_back(t);
      }
      targets_.upload(targets, ctx_.stream());
    };
    with_upload(coded, upload_cuts(coded, false), "dense cubes (init) and rows into every set (atomics)", prepare,
                [&](std::size_t b, std::size_t e) {
                  if (e > b)
                    rows_into_dense<<<grid_for(e - b), kBlock, 0, ctx_.stream()>>>(
                        keys_.data() + b, e - b, rows_from(b), targets_.data(), static_cast<int>(targets.size()));
                  GPUOLAP_CHECK_LAUNCH("rows_into_dense");
                });
    clock.stop();
    clock.start("filled cells (compaction)");
    std::vector<std::size_t> result;
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      compact(cells_at(spec.sets.size() + s), layout_of(coded, spec.sets[s]).cells, s);
      result.push_back(s);
    }
    sync_sizes();
    clock.stop();
    return result;
  }

  // gpu-sorted: per set, the rows sorted by the set's key (not needed when
  // the rows are sorted and the set keeps a prefix of the columns), then its
  // runs (runs(), borders through the paper's shared-memory kernel).
  std::vector<std::size_t> sorted(const CodedTable& coded, const CubeSpec& spec, StageClock& clock) {
    std::vector<std::size_t> result;
    projected_.reserve(std::max<std::size_t>(rows_, 1));
    positions_.reserve(std::max<std::size_t>(rows_, 1));
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      const SetMask mask = spec.sets[s];
      const Layout layout = layout_of(coded, mask);
      const bool prefix = (mask & (mask + 1)) == 0;  // columns 0..k-1
      clock.start("set keys (projection)");
      if (rows_)
        project_keys<<<grid_for(rows_), kBlock, 0, ctx_.stream()>>>(keys_.data(), rows_,
                                                                         projection(coded, coded.finest, layout),
                                                                         projected_.data(), positions_.data());
      GPUOLAP_CHECK_LAUNCH("project_keys");
      clock.stop();
      const std::uint64_t* keys = projected_.data();
      const std::uint32_t* order = nullptr;
      if (!(coded.sorted && prefix)) {
        clock.start("sort (CUB radix sort)");
        sort_with_positions(projected_.data(), positions_.data(), rows_, bits_for(layout.cells));
        clock.stop();
        keys = sorted_keys_.data();
        order = order_.data();
      }
      clock.start("borders and runs");
      runs(keys, rows_, RowSource{row_slots_, order}, s, /*staged_borders=*/true);
      clock.stop();
      result.push_back(s);
    }
    return result;
  }

  // Set `mask`'s cells at `at` from a computed set's (`from_mask`'s at
  // `from_at`, at most `from_bound`), alone: a wave of one, or a sort.
  void from_parent(const CodedTable& coded, SetMask from_mask, std::size_t from_at, std::uint64_t from_bound,
                   SetMask mask, std::size_t at) {
    if (dense_fits(layout_of(coded, mask).cells, from_bound)) {
      queue_dense(coded, from_mask, from_at, from_bound, mask, at);
      flush_wave();
    } else {
      sorted_from_parent(coded, from_mask, from_at, mask, at);
    }
  }

  // The cells of a computed set (`from_mask`'s, at `from_at`, its count
  // on the device) aggregated into set `mask`'s cells at `at` by their runs
  // once the parent's cells are sorted by the set's key: for a set too
  // large for a dense cube (queue_dense takes the others). Returns the
  // set's cells.
  std::uint64_t sorted_from_parent(const CodedTable& coded, SetMask from_mask, std::size_t from_at, SetMask mask,
                                   std::size_t at) {
    DeviceCells& p = cells_at(from_at);
    const Layout layout = layout_of(coded, mask);
    const Projection proj = projection(coded, layout_of(coded, from_mask), layout);
    // A sort needs the parent's count on the host.
    std::uint32_t n = 0;
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&n, count_of(from_at), sizeof n, cudaMemcpyDeviceToHost, ctx_.stream()));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream()));
    const DeviceAggregates parent_cells = p.reserve(slots_, n);
    projected_.reserve(std::max<std::uint32_t>(n, 1));
    positions_.reserve(std::max<std::uint32_t>(n, 1));
    if (n)
      project_keys<<<grid_for(n), kBlock, 0, ctx_.stream()>>>(p.keys.data(), n, proj, projected_.data(), positions_.data());
    GPUOLAP_CHECK_LAUNCH("project_keys");
    sort_with_positions(projected_.data(), positions_.data(), n, bits_for(layout.cells));
    runs(sorted_keys_.data(), n, CellSource{parent_cells, order_.data()}, at);
    return cells_at(at).size;
  }

  // gpu-expand: a virtual row per (set, row), keyed by the set's index above
  // its key, sorted once, then its runs (row_runs()).
  std::vector<CellRange> expand(const CodedTable& coded, const CubeSpec& spec, StageClock& clock) {
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
    const std::size_t n = rows_ * spec.sets.size();
    if (n > kMaxRows)
      throw InputError("gpu-expand makes " + std::to_string(rows_) + " rows x " + std::to_string(spec.sets.size()) +
                       " sets = " + std::to_string(n) + " virtual rows, at most 2^32 - 1; gpu-lattice takes this cube");
    clock.start("expand (a row per set)");
    projections_.upload(projections, ctx_.stream());
    projected_.reserve(std::max<std::size_t>(n, 1));
    positions_.reserve(std::max<std::size_t>(n, 1));
    if (n)
      expand_keys<<<grid_for(n), kBlock, 0, ctx_.stream()>>>(keys_.data(), rows_, projections_.data(),
                                                             static_cast<int>(spec.sets.size()), key_bits,
                                                             projected_.data(), positions_.data());
    GPUOLAP_CHECK_LAUNCH("expand_keys");
    clock.stop();
    clock.start("sort (CUB radix sort)");
    sort_with_positions(projected_.data(), positions_.data(), n, bits);
    clock.stop();
    clock.start("borders and runs");
    DeviceCells& all = cells_at(spec.sets.size());
    row_runs(sorted_keys_.data(), n, order_.data(), spec.sets.size());
    clock.stop();
    // The sets' cells lie one after the other, in set order: split them
    // where the set index (the keys' top bits) changes.
    std::vector<std::uint64_t> keys = all.keys.download(all.size, ctx_.stream());
    const std::uint64_t key_mask = key_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << key_bits) - 1;
    std::vector<CellRange> result;
    std::size_t begin = 0;
    for (std::size_t s = 0; s < spec.sets.size(); ++s) {
      const std::size_t end =
          s + 1 == spec.sets.size()
              ? keys.size()
              : static_cast<std::size_t>(
                    std::lower_bound(keys.begin() + begin, keys.end(), std::uint64_t{s + 1} << key_bits) - keys.begin());
      result.push_back({spec.sets.size(), begin, end - begin, key_mask});
      begin = end;
    }
    return result;
  }

  // The cells of each range to the host. The copies land in page-locked
  // memory (a copy into pageable vectors ran at 5 GB/s); then the cells'
  // vectors are filled from it in parallel. The vectors are `prepared`'s
  // when it has one per range (sized while the GPU worked, cut to the
  // cells here); else they are sized while the copies run (zero-filled, in
  // huge pages where Linux gives them: 70 MB for 1.5 M cells), a task per
  // vector. A range with a CellsInto in `into` goes there instead (its
  // SetCells in the result left empty).
  std::vector<SetCells> download(const CodedTable& coded, const std::vector<CellRange>& result, StageClock& clock,
                                 StageTimes& stages, std::vector<SetCells> prepared,
                                 const std::vector<CellsInto>& into = {}) {
    const cudaStream_t s = ctx_.stream();
    struct Piece {
      const std::uint64_t* from;
      std::vector<std::uint64_t>* to;
      std::size_t offset, size;  // in the pinned buffer, in words
      std::size_t at = 0;        // where in `to` (a CellsInto's offset)
      bool sized = false;        // `to` is a CellsInto's, sized by its owner
    };
    std::vector<SetCells> out = prepared.size() == result.size() ? std::move(prepared) : std::vector<SetCells>{};
    std::vector<Piece> pieces;
    std::size_t words = 0;
    if (out.empty()) out.assign(result.size(), empty_cells(coded));
    for (std::size_t i = 0; i < result.size(); ++i) {
      DeviceCells& d = cells_at(result[i].at);
      const std::size_t begin = result[i].begin;
      const std::size_t n = cells_in(result[i]);
      const bool elsewhere = i < into.size() && into[i].cells;
      if (elsewhere && into[i].written) continue;
      SetCells& c = elsewhere ? *into[i].cells : out[i];
      auto add = [&](const DeviceBuffer<std::uint64_t>& from, std::vector<std::uint64_t>& to) {
        pieces.push_back({from.data() + begin, &to, words, n, elsewhere ? into[i].offset : 0, elsewhere});
        words += n;
      };
      for_each_column(slots_, add, d, c);
    }
    downloaded_.reserve(std::max<std::size_t>(words, 1) * 8);
    auto* pinned = static_cast<std::uint64_t*>(downloaded_.data());
    clock.start("download (device to host)");
    for (const Piece& p : pieces)
      if (p.size)
        GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(pinned + p.offset, p.from, p.size * 8, cudaMemcpyDeviceToHost, s));
    clock.stop();
    HostStages host(stages, clock.size() > 0);  // the clock is on
    host.start("cells into host vectors (host)");
    tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t k) {
      // Prepared vectors are only cut; fresh ones faulted in on huge pages.
      if (!pieces[k].sized) resize_on_huge_pages(*pieces[k].to, pieces[k].size);
    });
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s));
    tbb::parallel_for(std::size_t{0}, pieces.size(), [&](std::size_t k) {
      const Piece& p = pieces[k];
      tbb::parallel_for(tbb::blocked_range<std::size_t>(0, p.size, std::size_t{1} << 18),
                        [&](const tbb::blocked_range<std::size_t>& r) {
                          std::memcpy(p.to->data() + p.at + r.begin(), pinned + p.offset + r.begin(), r.size() * 8);
                        });
    });
    for (std::size_t i = 0; i < result.size(); ++i)
      if (result[i].key_mask != ~std::uint64_t{0}) {
        const bool elsewhere = i < into.size() && into[i].cells;
        std::vector<std::uint64_t>& keys = elsewhere ? into[i].cells->keys : out[i].keys;
        const std::size_t from = elsewhere ? into[i].offset : 0;
        const std::size_t n = elsewhere ? cells_in(result[i]) : keys.size();
        for (std::size_t c = from; c < from + n; ++c) keys[c] &= result[i].key_mask;
      }
    return out;
  }

  gpuolap::gpu::DeviceContext ctx_;
  // The rows this runner builds from: a slice of a coded table.
  struct Slice {
    std::uint64_t id = 0;  // the coded table's (0: none)
    RowSlice rows;
    bool operator==(const Slice&) const = default;
  };
  Slice slice_of(const CodedTable& coded) const { return {coded.id, slice_}; }
  // The staged slice's keys in host memory (stage() has run).
  const std::uint64_t* staged_keys() const {
    return reinterpret_cast<const std::uint64_t*>(static_cast<const std::uint8_t*>(pinned_.data()) + staged_offsets_[0]);
  }
  RowSlice slice_;
  std::size_t rows_ = 0;  // slice_.rows
  std::optional<StageClock> clock_;  // the build's stages, from begin() to end()
  // The upload's stage where it runs in chunks on the side stream, its
  // events, and the events that say each chunk has arrived.
  std::optional<StageClock> side_clock_;
  gpuolap::gpu::EventPool side_events_, chunk_events_;
  PinnedBuffer early_;  // the finest cells on their way back (queue_finest_download)
  gpuolap::gpu::EventPool early_events_;  // 0: the finest cells made; 1: downloaded
  bool timing_ = false;
  bool upload_pending_ = false;  // begin() staged the slice; its copy waits for the first step
  bool keep_resident_ = true;
  int upload_chunks_ = 0;  // BuildOptions::upload_chunks
  SortedRuns sorted_runs_ = SortedRuns::OnePass;  // BuildOptions::sorted_runs
  struct ChunkRuns {
    Slice slice;
    std::vector<std::size_t> cuts;
    std::vector<std::uint32_t> runs;
  } chunk_runs_;  // runs_per_chunk's last answer
  std::size_t finest_at_ = 0;        // where gpu-lattice's finest cells are (cells_at)
  Slice resident_;              // on the device
  Slice staged_;                // in pinned_
  PinnedBuffer pinned_;         // the slice's keys and measure columns in page-locked host memory
  PinnedBuffer downloaded_;     // the cells on their way back
  std::vector<std::size_t> staged_offsets_;  // keys, then each value column's values and NULL flags
  DeviceBuffer<std::uint64_t> keys_;
  std::array<DeviceBuffer<std::uint8_t>, groupby::kMaxAggregates> values_, nulls_;
  std::vector<groupby::AggregateSlot> slots_;  // over the device's columns
  DeviceAggregates row_slots_;
  std::vector<std::unique_ptr<DeviceCells>> sets_;
  DeviceBuffer<DenseTarget> targets_;
  // The lattice's wave of dense sets being queued (queue_dense, flush_wave):
  // its jobs, their dense cubes' cells and at most how many are filled.
  std::vector<DenseJob> wave_;
  std::uint64_t wave_cells_ = 0, wave_bound_ = 0;
  DeviceBuffer<DenseJob> jobs_;  // the jobs of the waves and compactions, each call's at a place of its own
  PinnedBuffer jobs_staged_;     // the same places in page-locked host memory, copied from
  std::size_t jobs_used_ = 0;
  DeviceBuffer<std::uint32_t> selected_;  // a compaction's count of filled cells
  DeviceBuffer<Projection> projections_;
  DeviceBuffer<std::uint64_t> projected_, sorted_keys_;
  DeviceBuffer<std::uint32_t> positions_, order_, flags_, run_ids_, index_;
  DeviceBuffer<std::uint32_t> counts_;  // each cells_at(i)'s count, on the device
};

}  // namespace gpu

// The devices gpu_status() finds usable (none where this build's kernels do not fit the GPU).
int gpu_count() { return gpu_status().device_count; }

bool gpu_available() { return gpu_count() > 0; }

// GpuSplit::Auto cuts by key where the largest key range holds at most
// this many times an even share of the rows: a context's finest step takes
// time by its rows, so a build over key ranges waits for the fullest one.
constexpr double kEvenEnough = 1.25;

std::vector<SetCells> build_gpu(const CodedTable& coded, const CubeSpec& spec, Algorithm algorithm,
                                const BuildOptions& options, StageTimes& stages) {
  if (!gpu_available())
    throw InputError(std::string(algorithm_name(algorithm)) + " needs an NVIDIA GPU: " + gpu_status().problem +
                     " (cpu-partitioned and cpu-sequential run on the CPU)");
  std::vector<int> devices = options.devices.empty() ? std::vector<int>{options.device} : options.devices;
  int count = 0;
  GPUOLAP_CUDA_CHECK(cudaGetDeviceCount(&count));
  for (int& d : devices) {
    if (d < 0) GPUOLAP_CUDA_CHECK(cudaGetDevice(&d));
    if (d >= count)
      throw InputError("GPU " + std::to_string(d) + " does not exist: this machine has " + std::to_string(count));
  }
  // One runner per context (its index and device), kept for its buffers and
  // its resident slice; one build at a time.
  static std::mutex mutex;
  static std::map<std::pair<std::size_t, int>, std::unique_ptr<gpu::CubeRunner>> runners;
  std::lock_guard lock(mutex);
  const std::size_t k = devices.size();
  std::vector<gpu::CubeRunner*> mine;
  for (std::size_t i = 0; i < k; ++i) {
    auto& runner = runners[{i, devices[i]}];
    if (!runner) runner = std::make_unique<gpu::CubeRunner>(devices[i]);
    mine.push_back(runner.get());
  }
  // A context's failure fails the build, naming its GPU; out of memory is
  // the input's size, and the runner is dropped with its buffers.
  auto rethrow = [&](std::size_t i, std::exception_ptr error) {
    try {
      std::rethrow_exception(error);
    } catch (const GpuOutOfMemory& e) {
      runners.erase({i, devices[i]});
      throw InputError(std::to_string(coded.rows) + " rows do not fit " + std::string(algorithm_name(algorithm)) +
                       "'s buffers in GPU " + std::to_string(devices[i]) + "'s memory (" + e.what() +
                       "); cpu-partitioned runs in host memory");
    }
  };
  // Runs step(i) for every context at once (a thread each), then rethrows
  // the first failure.
  auto each = [&](auto step) {
    std::vector<std::exception_ptr> errors(k);
    auto guarded = [&](std::size_t i) {
      try {
        step(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    };
    if (k == 1) {
      guarded(0);
    } else {
      std::vector<std::thread> threads;
      for (std::size_t i = 0; i < k; ++i) threads.emplace_back(guarded, i);
      for (std::thread& t : threads) t.join();
    }
    for (std::size_t i = 0; i < k; ++i)
      if (errors[i]) rethrow(i, errors[i]);
  };

  // Several contexts cut the rows by ranges of the finest key where those
  // hold about equal rows (or when asked): each builds every set of its
  // range, the finest set's parts are disjoint and go side by side into
  // the result, and the coarser sets' parts are merged on the host. The
  // ranges are found once per table and count of contexts.
  struct LastSplit {
    std::uint64_t coded_id = 0;
    std::size_t parts = 0;
    KeySplit split;
  };
  static LastSplit last_split;  // under `mutex`
  bool by_key = false;
  if (k > 1 && options.gpu_split != GpuSplit::Rows) {
    if (coded.id == 0 || last_split.coded_id != coded.id || last_split.parts != k) {
      const auto t = std::chrono::steady_clock::now();
      last_split = LastSplit{coded.id, k, split_by_key(coded, k)};
      if (options.timing)
        stages.emplace_back("key ranges of the contexts (host, once per table)",
                            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count());
    }
    by_key = options.gpu_split == GpuSplit::Keys || last_split.split.imbalance() <= kEvenEnough;
  }
  const KeySplit& split = last_split.split;
  // Cut by position instead, gpu-lattice merges on the first context's GPU:
  // each context computes its slice's finest cells, the first gathers and
  // merges them and derives every coarser set once. The other algorithms
  // build every set per slice, and the parts are merged on the host.
  const bool merge_on_device = k > 1 && !by_key && algorithm == Algorithm::GpuLattice;
  const auto start = std::chrono::steady_clock::now();
  // The host vectors of the whole cube, sized on a thread of their own
  // while the GPUs work, where one context downloads the whole cube and the
  // last build was of the same table and sets (host_cells_for).
  struct LastBuild {
    std::uint64_t coded_id = 0;
    std::vector<SetMask> sets;
    std::vector<std::size_t> cells;  // per set
  };
  static LastBuild last_build;  // under `mutex`
  std::future<std::vector<SetCells>> host_cells;
  double host_cells_ms = 0;
  if ((k == 1 || merge_on_device || by_key) && coded.id != 0 && last_build.coded_id == coded.id &&
      last_build.sets == spec.sets)
    host_cells = std::async(std::launch::async, [&, sizes = last_build.cells] {
      const auto t = std::chrono::steady_clock::now();
      std::vector<SetCells> cells = gpu::host_cells_for(coded, sizes);
      host_cells_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
      return cells;
    });
  // Waits for them. A failure there (out of host memory) is not the
  // build's: the vectors are then sized after the download. A build that
  // fails first waits too: std::async's future blocks when destroyed, so
  // the thread never outlives what it refers to.
  auto prepared = [&] {
    try {
      return host_cells.valid() ? host_cells.get() : std::vector<SetCells>{};
    } catch (const std::exception&) {
      return std::vector<SetCells>{};
    }
  };
  std::vector<std::vector<SetCells>> parts(k);
  std::vector<std::vector<gpu::CellRange>> ranges(k);
  std::vector<StageTimes> part_stages(k);
  auto slice_of = [&](std::size_t i) {
    const std::size_t first = coded.rows * i / k, last = coded.rows * (i + 1) / k;
    return by_key ? gpu::RowSlice{0, split.rows[i], true, split.cuts[i], split.cuts[i + 1]}
                  : gpu::RowSlice{first, last - first};
  };
  std::vector<SetCells> out;
  // Key ranges (or one context's gpu-lattice): the set of every column, if
  // requested, has disjoint parts in key order; they go side by side into
  // its vectors (sized, once every context knows its count, as the last
  // build's or here), each context writing its own. gpu-lattice writes its
  // finest cells there while it computes the coarser sets. The other sets'
  // parts are merged on the host (one context's are the result).
  const bool lattice = algorithm == Algorithm::GpuLattice;
  const bool side_by_side = by_key || (k == 1 && lattice);
  if (side_by_side) {
    std::size_t side = spec.sets.size();  // the requested set of every column (sets are distinct)
    for (std::size_t s = 0; s < spec.sets.size(); ++s)
      if (spec.sets[s] == coded.finest.mask) side = s;
    std::vector<std::size_t> counts(k, 0), offsets(k, 0);
    std::vector<SetCells> for_end;  // one context: the prepared vectors of the other sets
    double sizing_ms = 0;
    std::exception_ptr sizing_error;
    auto size_side = [&]() noexcept {
      try {
        const auto t = std::chrono::steady_clock::now();
        out = prepared();
        if (out.size() != spec.sets.size()) out.assign(spec.sets.size(), empty_cells(coded));
        std::size_t cells = 0;
        for (std::size_t i = 0; i < k; ++i) {
          offsets[i] = cells;
          cells += counts[i];
        }
        if (side < spec.sets.size()) {
          std::vector<std::vector<std::uint64_t>*> columns;
          gpu::for_each_column(coded.slots, [&](std::vector<std::uint64_t>& v) { columns.push_back(&v); }, out[side]);
          tbb::parallel_for(std::size_t{0}, columns.size(),
                            [&](std::size_t c) { resize_on_huge_pages(*columns[c], cells); });
        }
        if (k == 1) {
          for_end = std::move(out);
          out.assign(spec.sets.size(), empty_cells(coded));
          if (side < spec.sets.size()) std::swap(out[side], for_end[side]);
        }
        sizing_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
      } catch (...) {
        sizing_error = std::current_exception();
      }
    };
    std::barrier counted(static_cast<std::ptrdiff_t>(k), size_side);
    each([&](std::size_t i) {
      bool arrived = false;
      try {
        mine[i]->begin(coded, options, part_stages[i], slice_of(i));
        if (lattice)
          mine[i]->finest(coded, spec);
        else
          ranges[i] = mine[i]->build(coded, spec, algorithm);
        if (side < spec.sets.size())
          counts[i] = lattice ? mine[i]->finest_cells() : mine[i]->cells_in(ranges[i][side]);
        arrived = true;
        counted.arrive_and_wait();
      } catch (...) {
        if (!arrived) counted.arrive_and_drop();  // the others go on; the build fails
        throw;
      }
      if (sizing_error) return;  // rethrown below
      std::vector<gpu::CellsInto> into(spec.sets.size());
      if (side < spec.sets.size()) into[side] = {&out[side], offsets[i]};
      if (lattice) {
        std::function<void()> meanwhile;
        if (side < spec.sets.size()) {
          mine[i]->queue_finest_download();
          meanwhile = [&, i] { mine[i]->finest_to_host(into[side], part_stages[i]); };
        }
        ranges[i] = mine[i]->coarser(coded, spec, meanwhile);
        if (side < spec.sets.size()) into[side].written = true;
      }
      parts[i] = mine[i]->end(coded, ranges[i], part_stages[i], k == 1 ? std::move(for_end) : std::vector<SetCells>{},
                              into);
    });
    if (sizing_error) std::rethrow_exception(sizing_error);
    const auto merge_start = std::chrono::steady_clock::now();
    if (k == 1) {
      for (std::size_t s = 0; s < spec.sets.size(); ++s)
        if (s != side) out[s] = std::move(parts[0][s]);
    } else {
      std::vector<bool> skip(spec.sets.size());
      if (side < spec.sets.size()) skip[side] = true;
      std::vector<SetCells> merged = merge_parts(coded, parts, skip);
      for (std::size_t s = 0; s < spec.sets.size(); ++s)
        if (s != side) out[s] = std::move(merged[s]);
    }
    if (options.timing) {
      stages.emplace_back("vectors of the set of every column sized (host)", sizing_ms);
      if (k > 1)
        stages.emplace_back(
            "the other sets' parts of " + std::to_string(k) + " key ranges merged (host)",
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - merge_start).count());
    }
  } else {
    each([&](std::size_t i) {
      mine[i]->begin(coded, options, part_stages[i], slice_of(i));
      if (merge_on_device) {
        mine[i]->finest(coded, spec);
      } else {
        ranges[i] = mine[i]->build(coded, spec, algorithm);
        parts[i] = mine[i]->end(coded, ranges[i], part_stages[i], k == 1 ? prepared() : std::vector<SetCells>{});
      }
    });
  }
  if (merge_on_device) {
    try {
      mine[0]->absorb_finest(coded, std::vector<gpu::CubeRunner*>(mine.begin() + 1, mine.end()));
      const std::vector<gpu::CellRange> ranges = mine[0]->coarser(coded, spec);
      out = mine[0]->end(coded, ranges, part_stages[0], prepared());
    } catch (...) {
      rethrow(0, std::current_exception());
    }
    each([&](std::size_t i) {
      if (i > 0) mine[i]->end(part_stages[i]);
    });
  }
  if (options.timing && host_cells_ms > 0)
    stages.emplace_back("cells' host vectors sized as the last build's (host, beside the GPUs)", host_cells_ms);
  for (std::size_t i = 0; i < k; ++i)
    for (auto& [name, ms] : part_stages[i])
      stages.emplace_back(k == 1 ? name : "context " + std::to_string(i) + " (GPU " + std::to_string(devices[i]) + "): " + name, ms);
  if (k == 1 && !side_by_side) {
    out = std::move(parts[0]);
  } else if (!merge_on_device && !side_by_side) {
    const auto merge_start = std::chrono::steady_clock::now();
    out = merge_parts(coded, parts);
    if (options.timing)
      stages.emplace_back("merge of " + std::to_string(k) + " parts (host)",
                          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - merge_start).count());
  }
  last_build = LastBuild{coded.id, spec.sets, {}};
  for (const SetCells& c : out) last_build.cells.push_back(c.keys.size());
  // The GPU part as a whole, by the host's clock: what several contexts
  // are compared by (their stages overlap).
  if (options.timing)
    stages.emplace_back("GPU build, all contexts (host clock)",
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return out;
}

}  // namespace gpuolap::cube
