// The gpu H-tree: the paper's structure of arrays on the device, built and
// updated with CUB (radix sort, scans, reduce-by-key, run-length encoding,
// selection) and queried by the paper's kernels.
//
// Build (Algorithm 1): the tuples are packed into 64-bit words
// (key_packing.hpp) and sorted least significant word first (stable radix
// sorts carrying the permutation: the paper's sort and segmented sorts in
// one); equal tuples fold into leaf rows (reduce-by-key). From the sorted
// distinct leaf rows every level comes out of one scan: a node of level i
// starts at each row whose first difference from the row before is at
// dimension i or above, so a scan of those flags numbers the level's nodes,
// and a row starting a node of level i starts one of level i + 1 too
// (GCHILDREN). The roll-up is reduce-by-key over each level's parent
// indices (the paper's segmented reduction with the parent as segment id),
// the header tables a radix sort of the level's keys carrying node indices
// and a run-length encoding (HTABLE).
//
// Update (Algorithm 2): the batch is sorted and folded the same way; each of
// its leaf rows is searched down the tree by binary search among the
// children of the node found above (the paper's search step), which gives
// its place among the old leaves and whether it is one of them; rows that
// are new are scattered between the old leaves, the others fold into
// theirs, and the levels, roll-up and header tables are made again from the
// merged leaves.
#include <cub/cub.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/device_info.hpp"
#include "gpu/runtime/pinned_buffer.cuh"
#include "gpu/runtime/pinned_memory.hpp"
#include "gpu/runtime/stage_clock.cuh"
#include "gpuolap/error.hpp"
#include "htree/gpu/device_tree.cuh"
#include "htree/gpu/htree_gpu.hpp"
#include "htree/gpu/query_kernels.cuh"
#include "htree/key_packing.hpp"

namespace gpuolap::htree {
namespace {

using gpuolap::DeviceBuffer;

// Unsigned words in the order of the doubles (for atomicMin/atomicMax).
__device__ __forceinline__ unsigned long long order_bits(double d) {
  const unsigned long long u = static_cast<unsigned long long>(__double_as_longlong(d));
  return (u >> 63) ? ~u : (u | (1ull << 63));
}
__device__ __forceinline__ double double_of_order_bits(unsigned long long o) {
  return __longlong_as_double(static_cast<long long>((o >> 63) ? (o ^ (1ull << 63)) : ~o));
}

constexpr int kBlock = 256;
unsigned grid_for(std::size_t items, int block = kBlock) {
  return static_cast<unsigned>(std::clamp<std::size_t>((items + block - 1) / block, 1, 1u << 30));
}

// ---- kernels ----

// Dimensions fill words in order, so one running word in a register is
// written out each time the next dimension starts a new one (no array in
// local memory).
__global__ void pack_tuples(const std::uint32_t* codes, std::size_t n, KeyPacking p, std::uint64_t* words) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x) {
    std::uint64_t w = 0;
    for (int d = 0; d < p.dimensions; ++d) {
      w |= std::uint64_t{codes[d * n + r]} << p.shift[d];
      if (d + 1 == p.dimensions || p.word[d + 1] != p.word[d]) {
        words[p.word[d] * n + r] = w;
        w = 0;
      }
    }
  }
}

// Dimension d's code of row r of word-major rows.
__device__ __forceinline__ std::uint32_t code_of(const std::uint64_t* words, std::size_t n, std::size_t r,
                                                 const KeyPacking& p, int d) {
  if (p.bits[d] == 0) return 0;
  return static_cast<std::uint32_t>((words[p.word[d] * n + r] >> p.shift[d]) & ((std::uint64_t{1} << p.bits[d]) - 1));
}

__global__ void gather_words(const std::uint64_t* in, const std::uint32_t* perm, std::size_t n, std::uint64_t* out) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x)
    out[r] = in[perm[r]];
}

__global__ void iota(std::uint32_t* out, std::size_t n) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x)
    out[r] = static_cast<std::uint32_t>(r);
}

// flag[r] = 1 where sorted row r starts a run of equal tuples.
__global__ void run_starts(const std::uint64_t* words, int w, std::size_t n, std::uint32_t* flag) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x) {
    bool start = r == 0;
    for (int k = 0; k < w && !start; ++k) start = words[k * n + r] != words[k * n + r - 1];
    flag[r] = start;
  }
}

__global__ void row_aggregates(const std::uint32_t* perm, const double* measure, const std::uint8_t* null,
                               std::size_t n, DevAgg* out) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint32_t t = perm[r];
    if (null && null[t]) {
      out[r] = empty_agg();
    } else {
      const double v = measure[t];
      out[r] = {1ull, v, v, v};
    }
  }
}

// The words of each run's first row, as the leaf rows.
__global__ void leaf_words_of_runs(const std::uint64_t* words, int w, const std::uint32_t* flag,
                                   const std::uint32_t* run, std::size_t n, std::size_t leaves, std::uint64_t* out) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x)
    if (flag[r])
      for (int k = 0; k < w; ++k) out[k * leaves + run[r] - 1] = words[k * n + r];
}

// diff[r]: the first dimension where leaf row r differs from row r - 1 (0 for row 0).
__global__ void first_difference(const std::uint64_t* words, std::size_t n, KeyPacking p, std::uint8_t* diff) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x) {
    int d = 0;
    if (r > 0) {
      int k = 0;
      while (k + 1 < p.words && words[k * n + r] == words[k * n + r - 1]) ++k;
      const std::uint64_t x = words[k * n + r] ^ words[k * n + r - 1];
      const int high = 63 - __clzll(static_cast<long long>(x));
      d = p.dimensions - 1;
      for (int e = 0; e < p.dimensions; ++e)
        if (p.word[e] == k && p.bits[e] && high >= p.shift[e] && high < p.shift[e] + p.bits[e]) {
          d = e;
          break;
        }
    }
    diff[r] = static_cast<std::uint8_t>(d);
  }
}

struct StartsLevel {
  const std::uint8_t* diff;
  int level;
  __host__ __device__ std::uint32_t operator()(std::size_t r) const { return r == 0 || diff[r] <= level; }
};

// The nodes of level i: key, parent, first leaf row, and the first child of
// level i - 1's nodes.
__global__ void level_nodes(const std::uint64_t* words, std::size_t n, KeyPacking p, const std::uint8_t* diff, int i,
                            const std::uint32_t* node_id, const std::uint32_t* node_id_above, std::uint32_t* key,
                            std::uint32_t* parent, std::uint32_t* first_leaf, std::uint32_t* first_child_above) {
  for (std::size_t r = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; r < n; r += std::size_t{gridDim.x} * blockDim.x) {
    if (r != 0 && diff[r] > i) continue;
    const std::uint32_t k = node_id[r] - 1;
    key[k] = code_of(words, n, r, p, i);
    first_leaf[k] = static_cast<std::uint32_t>(r);
    if (i == 0) {
      parent[k] = 0;
    } else {
      parent[k] = node_id_above[r] - 1;
      if (r == 0 || diff[r] <= i - 1) first_child_above[node_id_above[r] - 1] = k;
    }
  }
}

__global__ void child_counts(const std::uint32_t* first_child, std::size_t n, std::uint32_t below, std::uint32_t* count) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < n; k += std::size_t{gridDim.x} * blockDim.x)
    count[k] = (k + 1 < n ? first_child[k + 1] : below) - first_child[k];
}

// Roll-up (the paper's segmented reduction with the parent as segment id):
// a node's children are contiguous, so each node folds its own range.
__global__ void roll_up(const std::uint32_t* first_child, const std::uint32_t* child_count, std::size_t n,
                        const DevAgg* below, DevAgg* out) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < n; k += std::size_t{gridDim.x} * blockDim.x) {
    DevAgg a = empty_agg();
    const std::uint32_t first = first_child[k], end = first + child_count[k];
    for (std::uint32_t c = first; c < end; ++c) a = MergeAgg()(a, below[c]);
    out[k] = a;
  }
}

__global__ void fill_u32(std::uint32_t* out, std::size_t n, std::uint32_t v) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < n; k += std::size_t{gridDim.x} * blockDim.x)
    out[k] = v;
}

// Level i's first leaf rows from level i + 1's (a node's first leaf is its
// first child's); the leaf level's are its own rows.
__global__ void first_leaves(const std::uint32_t* first_child, std::size_t n, const std::uint32_t* below,
                             std::uint32_t* out) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < n; k += std::size_t{gridDim.x} * blockDim.x)
    out[k] = below ? below[first_child[k]] : static_cast<std::uint32_t>(k);
}

// Each leaf's path, packed.
__global__ void old_leaf_words(const LevelView* levels, int m, std::size_t n, KeyPacking p, std::uint64_t* out) {
  for (std::size_t leaf = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; leaf < n; leaf += std::size_t{gridDim.x} * blockDim.x) {
    // Up from the leaf: the last word first, one word in a register.
    std::uint64_t w = 0;
    std::uint32_t node = static_cast<std::uint32_t>(leaf);
    for (int i = m - 1; i >= 0; --i) {
      w |= std::uint64_t{levels[i].key[node]} << p.shift[i];
      node = levels[i].parent[node];
      if (i == 0 || p.word[i - 1] != p.word[i]) {
        out[p.word[i] * n + leaf] = w;
        w = 0;
      }
    }
  }
}


// Algorithm 2's search: each new leaf row down the tree, by binary search
// among the children of the node matched above. rank: its place among the
// old leaves (the leftmost leaf under the first node past it); found: it
// is an old leaf.
__global__ void search_tree(const std::uint64_t* words, std::size_t n, KeyPacking p, const LevelView* levels, int m,
                            std::uint32_t leaves, std::uint32_t* rank, std::uint32_t* inserted) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < n; e += std::size_t{gridDim.x} * blockDim.x) {
    std::uint32_t lo = 0, hi = levels[0].nodes, at = leaves;
    bool found = true;
    for (int i = 0; i < m; ++i) {
      const std::uint32_t code = code_of(words, n, e, p, i);
      const std::uint32_t s = lower_bound(levels[i].key, lo, hi, code);
      if (s < hi && levels[i].key[s] == code) {
        if (i + 1 == m) at = s;
        lo = levels[i].first_child[s];
        hi = lo + levels[i].child_count[s];
        continue;
      }
      found = false;
      if (s < levels[i].nodes) {
        std::uint32_t node = s;
        for (int j = i; j + 1 < m; ++j) node = levels[j].first_child[node];
        at = node;
      }
      break;
    }
    rank[e] = at;
    inserted[e] = !found;
  }
}

__device__ __forceinline__ std::uint32_t upper_bound(const std::uint32_t* a, std::uint32_t n, std::uint32_t v) {
  std::uint32_t lo = 0, hi = n;
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (a[mid] <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

__global__ void scatter_old_leaves(const std::uint64_t* words, const DevAgg* agg, std::size_t n, int w,
                                   const std::uint32_t* inserted_rank, std::uint32_t inserted, std::size_t merged,
                                   std::uint64_t* out_words, DevAgg* out_agg) {
  for (std::size_t j = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; j < n; j += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t to = j + upper_bound(inserted_rank, inserted, static_cast<std::uint32_t>(j));
    for (int k = 0; k < w; ++k) out_words[k * merged + to] = words[k * n + j];
    out_agg[to] = agg[j];
  }
}

__global__ void scatter_new_leaves(const std::uint64_t* words, const DevAgg* agg, std::size_t n, int w,
                                   const std::uint32_t* inserted_row, const std::uint32_t* inserted_rank,
                                   std::uint32_t inserted, std::size_t merged, std::uint64_t* out_words, DevAgg* out_agg) {
  for (std::size_t k = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; k < inserted; k += std::size_t{gridDim.x} * blockDim.x) {
    const std::size_t to = inserted_rank[k] + k, e = inserted_row[k];
    for (int j = 0; j < w; ++j) out_words[j * merged + to] = words[j * n + e];
    out_agg[to] = agg[e];
  }
}

// New rows equal to old leaves fold into them (distinct rows: no two alike).
__global__ void fold_found(const DevAgg* agg, const std::uint32_t* rank, const std::uint32_t* inserted_flag, std::size_t n,
                           const std::uint32_t* inserted_rank, std::uint32_t inserted, DevAgg* out_agg) {
  for (std::size_t e = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; e < n; e += std::size_t{gridDim.x} * blockDim.x) {
    if (inserted_flag[e]) continue;
    const std::size_t to = rank[e] + upper_bound(inserted_rank, inserted, rank[e]);
    out_agg[to] = MergeAgg()(out_agg[to], agg[e]);
  }
}

// balanced, step 1: each online query's list, its length for the scan.
__global__ void online_lists(const std::uint32_t* codes, int m, const std::uint32_t* which, std::size_t n,
                             const LevelView* levels, SideLinkList* lists, std::uint32_t* lengths) {
  for (std::size_t t = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; t < n; t += std::size_t{gridDim.x} * blockDim.x) {
    lists[t] = side_link_list(codes + std::size_t{which[t]} * m, m, levels);
    lengths[t] = lists[t].count;
  }
}

struct Widen {
  __host__ __device__ unsigned long long operator()(std::uint32_t x) const { return x; }
};

struct OnlineSums {
  unsigned long long* count;
  double* sum;
  unsigned long long* min_bits;
  unsigned long long* max_bits;
};

__device__ __forceinline__ void flush(const OnlineSums& s, std::uint32_t t, const DevAgg& a) {
  if (a.count == 0) return;
  atomicAdd(&s.count[t], a.count);
  atomicAdd(&s.sum[t], a.sum);
  atomicMin(&s.min_bits[t], order_bits(a.min));
  atomicMax(&s.max_bits[t], order_bits(a.max));
}

// balanced, step 2: the visits of every list laid end to end, kVisits per
// thread; a thread's visits of one query are folded before one atomic flush.
constexpr int kVisits = 8;
__global__ void online_balanced(const std::uint32_t* codes, int m, const std::uint32_t* which, std::size_t n,
                                const LevelView* levels, const SideLinkList* lists, const unsigned long long* offsets,
                                unsigned long long visits, OnlineSums sums) {
  const unsigned long long v0 = (blockIdx.x * std::size_t{blockDim.x} + threadIdx.x) * kVisits;
  if (v0 >= visits) return;
  const unsigned long long v1 = v0 + kVisits < visits ? v0 + kVisits : visits;
  // The last query whose visits start at or before v0 (64-bit: a batch's
  // visits may pass 2^32).
  std::uint32_t lo = 0, hi = static_cast<std::uint32_t>(n);
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= v0) lo = mid + 1;
    else hi = mid;
  }
  std::uint32_t t = lo - 1;
  DevAgg a = empty_agg();
  for (unsigned long long v = v0; v < v1; ++v) {
    while (v >= offsets[t] + lists[t].count) {
      flush(sums, t, a);
      a = empty_agg();
      ++t;
    }
    const SideLinkList& l = lists[t];
    const std::uint32_t* c = codes + std::size_t{which[t]} * m;
    const std::uint32_t node = levels[l.deepest].side_links[l.first + (v - offsets[t])];
    if (matches_above(c, levels, l.deepest, l.shallowest, node)) a = MergeAgg()(a, levels[l.deepest].aggregate[node]);
  }
  flush(sums, t, a);
}

__global__ void online_finish(const std::uint32_t* which, std::size_t n, OnlineSums s, DevAgg* out) {
  for (std::size_t t = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; t < n; t += std::size_t{gridDim.x} * blockDim.x) {
    DevAgg a = empty_agg();
    if (s.count[t]) a = {s.count[t], s.sum[t], double_of_order_bits(s.min_bits[t]), double_of_order_bits(s.max_bits[t])};
    out[which[t]] = a;
  }
}

__global__ void init_online_sums(OnlineSums s, std::size_t n) {
  for (std::size_t t = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; t < n; t += std::size_t{gridDim.x} * blockDim.x) {
    s.count[t] = 0;
    s.sum[t] = 0;
    s.min_bits[t] = ~0ull;
    s.max_bits[t] = 0;
  }
}

bool same_packing(const KeyPacking& a, const KeyPacking& b) {
  return a.dimensions == b.dimensions && a.words == b.words &&
         std::equal(a.word, a.word + a.dimensions, b.word) && std::equal(a.shift, a.shift + a.dimensions, b.shift) &&
         std::equal(a.bits, a.bits + a.dimensions, b.bits);
}

int as_items(std::size_t n) {
  if (n >= (std::size_t{1} << 31)) throw InputError("the gpu H-tree takes fewer than 2^31 tuples or nodes at once");
  return static_cast<int>(n);
}

}  // namespace

// One level on the device.
struct DeviceLevel {
  DeviceBuffer<std::uint32_t> key, parent, first_child, child_count, side_links, header_key, header_count, header_first,
      first_leaf;
  DeviceBuffer<DevAgg> aggregate;
  std::uint32_t nodes = 0, headers = 0;
};

// Sorted distinct leaf rows on the device: words [w * n + row], aggregates.
struct DeviceLeaves {
  DeviceBuffer<std::uint64_t> words;
  DeviceBuffer<DevAgg> aggregate;
  std::size_t n = 0;
};

struct GpuHTree::Impl {
  gpu::DeviceContext ctx;
  GpuKnobs knobs;
  std::vector<DeviceLevel> levels;
  DeviceBuffer<LevelView> views;
  std::vector<std::uint32_t> cardinalities;
  DevAgg total = empty_agg();
  bool timing = false;
  std::vector<std::pair<std::string, double>> stages;

  // Scratch kept between operations.
  DeviceBuffer<std::uint32_t> codes, perm, perm_alt, flags, run, node_id, node_id_above;
  DeviceBuffer<std::uint64_t> words, key_tmp, key_alt;
  DeviceBuffer<double> measure;
  DeviceBuffer<std::uint8_t> nulls, diff;
  DeviceBuffer<DevAgg> row_agg;
  DeviceBuffer<int> level_counts;
  DeviceBuffer<std::uint32_t> query_codes, query_online;
  DeviceBuffer<DevAgg> query_answers;
  // The query kernels' counters (query_kernels.cuh): zero between batches
  // once zeroed, which a batch that did not finish leaves undone.
  DeviceBuffer<unsigned long long> query_counters{kQueryCounters};
  bool query_counters_zero = false;
  PinnedBuffer query_in, query_out, query_counts;
  // Kept between operations so that an update allocates nothing once the
  // tree stops growing: the levels being built (swapped with `levels`),
  // the batch's, the old and the merged leaf rows, the search's arrays.
  std::vector<DeviceLevel> spare;
  DeviceLeaves fresh, old, merged;
  DeviceBuffer<std::uint64_t> sorted_words;
  DeviceBuffer<std::uint32_t> unique, rank, inserted_flag, inserted_row, inserted_rank;
  DeviceBuffer<int> counters;  // CUB's output counts
  DeviceBuffer<DevAgg> root;
  // The tree's leaf rows, sorted and packed (word-major, as DeviceLeaves),
  // for the queries' leaf jump: the last build's or update's, or made from
  // the levels by upload().
  DeviceBuffer<std::uint64_t> leaf_words;
  KeyPacking leaf_packing;

  Impl(int device, GpuKnobs k) : ctx(device), knobs(k) {
    const unsigned t = k.block_threads;
    if (t != 32 && t != 64 && t != 128 && t != 256)
      throw InputError("the gpu H-tree's block-per-query threads must be 32, 64, 128 or 256, not " + std::to_string(t));
  }

  cudaStream_t s() const { return ctx.stream(); }

  template <typename F>
  void cub_call(F&& f) {
    std::size_t bytes = 0;
    GPUOLAP_CUDA_CHECK(f(nullptr, bytes));
    GPUOLAP_CUDA_CHECK(f(ctx.scratch(bytes), bytes));
  }

  // The query kernels' report, once the stream has finished.
  static void check_reported(const QueryCounts& c) {
    if (!c.reported) throw GpuError("the gpu H-tree's query kernels finished without reporting their counts");
    if (c.launch_error)
      throw GpuError(std::string("the gpu H-tree could not launch its online-cubing grid from the device: ") +
                          cudaGetErrorString(static_cast<cudaError_t>(c.launch_error)));
  }

  // Spins until the query kernels have reported, asking the stream now and
  // then whether it failed or ended without a report.
  // The flag is read with acquire order, so that no read of the counts or
  // the answers after it is served before it (the kernels write them first).
  void wait_for_report(const QueryCounts& c) {
    const auto reported = [&] { return __atomic_load_n(&c.reported, __ATOMIC_ACQUIRE) != 0; };
    for (unsigned spins = 1; !reported(); ++spins) {
      if (spins % 1024) continue;
      const cudaError_t e = cudaStreamQuery(s());
      if (e == cudaErrorNotReady) continue;
      GPUOLAP_CUDA_CHECK(e);
      if (!reported()) break;  // the stream has ended: check_reported says so
    }
  }

  void finish_stages(gpu::StageClock& clock) {
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s()));
    stages = clock.read();
  }

  // Tuples uploaded, sorted (packed words, least significant word first)
  // and folded into sorted distinct leaf rows.
  void fold_tuples(const CodedTuples& tuples, const KeyPacking& p, gpu::StageClock& clock, DeviceLeaves& out) {
    const std::size_t n = tuples.size(), m = tuples.codes.size(), w = p.words;
    out.n = 0;
    if (n == 0) return;
    const int items = as_items(n);
    clock.start("io");
    codes.grow(n * m);
    for (std::size_t d = 0; d < m; ++d)
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(codes.data() + d * n, tuples.codes[d].data(), n * sizeof(std::uint32_t),
                                         cudaMemcpyHostToDevice, s()));
    measure.upload(tuples.measure, s());
    const bool has_nulls = !tuples.measure_null.empty();
    if (has_nulls) nulls.upload(tuples.measure_null, s());
    clock.stop();
    clock.start("key");
    words.grow(n * w);
    pack_tuples<<<grid_for(n), kBlock, 0, s()>>>(codes.data(), n, p, words.data());
    GPUOLAP_CHECK_LAUNCH("pack_tuples");
    perm.grow(n);
    perm_alt.grow(n);
    key_tmp.grow(n);
    key_alt.grow(n);
    iota<<<grid_for(n), kBlock, 0, s()>>>(perm.data(), n);
    // Least significant word first; each sort stable, so the last (word 0)
    // leaves the tuples in order. A word's bits are its top `used` bits.
    for (std::size_t k = w; k-- > 0;) {
      int used = 0;
      for (int d = 0; d < p.dimensions; ++d)
        if (p.word[d] == k) used += p.bits[d];
      if (used == 0) continue;
      gather_words<<<grid_for(n), kBlock, 0, s()>>>(words.data() + k * n, perm.data(), n, key_tmp.data());
      cub_call([&](void* t, std::size_t& b) {
        return cub::DeviceRadixSort::SortPairs(t, b, key_tmp.data(), key_alt.data(), perm.data(), perm_alt.data(), items,
                                               64 - used, 64, s());
      });
      std::swap(perm, perm_alt);
    }
    // The sorted words (word-major), then the runs of equal tuples.
    DeviceBuffer<std::uint64_t>& sorted = sorted_words;
    sorted.grow(n * w);
    for (std::size_t k = 0; k < w; ++k)
      gather_words<<<grid_for(n), kBlock, 0, s()>>>(words.data() + k * n, perm.data(), n, sorted.data() + k * n);
    flags.grow(n);
    run.grow(n);
    run_starts<<<grid_for(n), kBlock, 0, s()>>>(sorted.data(), static_cast<int>(w), n, flags.data());
    cub_call([&](void* t, std::size_t& b) { return cub::DeviceScan::InclusiveSum(t, b, flags.data(), run.data(), items, s()); });
    std::uint32_t leaves = 0;
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(&leaves, run.data() + n - 1, sizeof leaves, cudaMemcpyDeviceToHost, s()));
    row_agg.grow(n);
    row_aggregates<<<grid_for(n), kBlock, 0, s()>>>(perm.data(), measure.data(), has_nulls ? nulls.data() : nullptr, n,
                                                    row_agg.data());
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(s()));
    out.n = leaves;
    out.aggregate.grow(leaves);
    out.words.grow(leaves * w);
    unique.grow(leaves);
    counters.grow(kMaxDimensions + 1);
    cub_call([&](void* t, std::size_t& b) {
      return cub::DeviceReduce::ReduceByKey(t, b, run.data(), unique.data(), row_agg.data(), out.aggregate.data(),
                                            counters.data(), MergeAgg(), items, s());
    });
    leaf_words_of_runs<<<grid_for(n), kBlock, 0, s()>>>(sorted.data(), static_cast<int>(w), flags.data(), run.data(), n,
                                                        leaves, out.words.data());
    GPUOLAP_CHECK_LAUNCH("leaf_words_of_runs");
    clock.stop();
  }

  // The levels, roll-up and header tables from sorted distinct leaf rows.
  void build_levels(const DeviceLeaves& leaves, const KeyPacking& p, gpu::StageClock& clock) {
    const std::size_t n = leaves.n;
    const int m = p.dimensions;
    spare.resize(m);
    std::vector<DeviceLevel>& next = spare;
    if (n == 0) {
      for (DeviceLevel& l : next) l.nodes = l.headers = 0;
      std::swap(levels, spare);
      total = empty_agg();
      upload_views();
      return;
    }
    const int items = as_items(n);
    clock.start("index");
    diff.grow(n);
    first_difference<<<grid_for(n), kBlock, 0, s()>>>(leaves.words.data(), n, p, diff.data());
    GPUOLAP_CHECK_LAUNCH("first_difference");
    // Rows by the level of their first difference (a histogram: most rows
    // fall on the last levels, where atomics on one counter would serialize).
    level_counts.grow(kMaxDimensions);
    cub_call([&](void* t, std::size_t& b) {
      return cub::DeviceHistogram::HistogramEven(t, b, diff.data(), level_counts.data(), kMaxDimensions + 1, 0,
                                                 kMaxDimensions, items, s());
    });
    const auto starts = level_counts.download(kMaxDimensions, s());  // row 0 counts at diff 0
    std::size_t nodes = 0;
    for (int i = 0; i < m; ++i) {
      nodes += starts[i];
      next[i].nodes = static_cast<std::uint32_t>(i + 1 == m ? n : nodes);
    }
    node_id.grow(n);
    node_id_above.grow(n);
    for (int i = 0; i < m; ++i) {
      DeviceLevel& l = next[i];
      l.key.grow(l.nodes);
      l.parent.grow(l.nodes);
      l.first_child.grow(l.nodes);
      l.child_count.grow(l.nodes);
      l.first_leaf.grow(l.nodes);
      const auto flag = thrust::make_transform_iterator(thrust::counting_iterator<std::size_t>(0), StartsLevel{diff.data(), i});
      cub_call([&](void* t, std::size_t& b) { return cub::DeviceScan::InclusiveSum(t, b, flag, node_id.data(), items, s()); });
      level_nodes<<<grid_for(n), kBlock, 0, s()>>>(leaves.words.data(), n, p, diff.data(), i, node_id.data(),
                                                   node_id_above.data(), l.key.data(), l.parent.data(),
                                                   l.first_leaf.data(), i ? next[i - 1].first_child.data() : nullptr);
      GPUOLAP_CHECK_LAUNCH("level_nodes");
      if (i > 0)
        child_counts<<<grid_for(next[i - 1].nodes), kBlock, 0, s()>>>(next[i - 1].first_child.data(), next[i - 1].nodes,
                                                                      l.nodes, next[i - 1].child_count.data());
      std::swap(node_id, node_id_above);
    }
    fill_u32<<<grid_for(n), kBlock, 0, s()>>>(next[m - 1].first_child.data(), n, 0);
    fill_u32<<<grid_for(n), kBlock, 0, s()>>>(next[m - 1].child_count.data(), n, 0);
    clock.stop();

    clock.start("rollup");
    next[m - 1].aggregate.grow(n);
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(next[m - 1].aggregate.data(), leaves.aggregate.data(), n * sizeof(DevAgg),
                                       cudaMemcpyDeviceToDevice, s()));
    for (int i = m - 2; i >= 0; --i) {
      next[i].aggregate.grow(next[i].nodes);
      roll_up<<<grid_for(next[i].nodes), kBlock, 0, s()>>>(next[i].first_child.data(), next[i].child_count.data(),
                                                          next[i].nodes, next[i + 1].aggregate.data(),
                                                          next[i].aggregate.data());
      GPUOLAP_CHECK_LAUNCH("roll_up");
    }
    root.grow(1);
    cub_call([&](void* t, std::size_t& b) {
      return cub::DeviceReduce::Reduce(t, b, next[0].aggregate.data(), root.data(), as_items(next[0].nodes), MergeAgg(),
                                       empty_agg(), s());
    });
    clock.stop();

    clock.start("htable");
    counters.grow(kMaxDimensions + 1);
    DeviceBuffer<int>& header_counts = counters;
    for (int i = 0; i < m; ++i) {
      DeviceLevel& l = next[i];
      const std::uint32_t card = std::max<std::uint32_t>(cardinalities[i], 1);
      const std::uint32_t bound = std::min<std::uint32_t>(card, l.nodes);
      const int bits = std::max(1, static_cast<int>(std::bit_width(card - 1)));
      l.side_links.grow(l.nodes);
      l.header_key.grow(bound);
      l.header_count.grow(bound);
      l.header_first.grow(bound);
      perm.grow(l.nodes);
      perm_alt.grow(l.nodes);
      iota<<<grid_for(l.nodes), kBlock, 0, s()>>>(perm.data(), l.nodes);
      cub_call([&](void* t, std::size_t& b) {
        return cub::DeviceRadixSort::SortPairs(t, b, l.key.data(), perm_alt.data(), perm.data(), l.side_links.data(),
                                               as_items(l.nodes), 0, bits, s());
      });
      cub_call([&](void* t, std::size_t& b) {
        return cub::DeviceRunLengthEncode::Encode(t, b, perm_alt.data(), l.header_key.data(), l.header_count.data(),
                                                  header_counts.data() + i, as_items(l.nodes), s());
      });
      cub_call([&](void* t, std::size_t& b) {
        return cub::DeviceScan::ExclusiveSum(t, b, l.header_count.data(), l.header_first.data(), as_items(bound), s());
      });
    }
    const auto headers = header_counts.download(m, s());
    for (int i = 0; i < m; ++i) next[i].headers = static_cast<std::uint32_t>(headers[i]);
    clock.stop();
    total = root.download(1, s())[0];
    std::swap(levels, spare);
    upload_views();
    keep_leaf_words(leaves.words.data(), n, p);
  }

  // The leaf rows the queries' leaf jump reads, kept with their packing.
  void keep_leaf_words(const std::uint64_t* words, std::size_t n, const KeyPacking& p) {
    leaf_words.grow(n * p.words);
    GPUOLAP_CUDA_CHECK(
        cudaMemcpyAsync(leaf_words.data(), words, n * p.words * sizeof(std::uint64_t), cudaMemcpyDeviceToDevice, s()));
    leaf_packing = p;
  }

  void upload_views() {
    std::vector<LevelView> v;
    for (const DeviceLevel& l : levels)
      v.push_back({l.key.data(), l.parent.data(), l.first_child.data(), l.child_count.data(), l.aggregate.data(),
                   l.side_links.data(), l.header_key.data(), l.header_count.data(), l.header_first.data(),
                   l.first_leaf.data(), l.nodes, l.headers});
    views.upload(v, s());
  }

  std::size_t leaf_count() const { return levels.empty() ? 0 : levels.back().nodes; }
};

bool gpu_available() { return gpu_status().device_count > 0; }

GpuHTree::GpuHTree(int device, GpuKnobs knobs) : impl_(std::make_unique<Impl>(device, knobs)) {}
GpuHTree::~GpuHTree() = default;

void GpuHTree::build(const std::vector<std::uint32_t>& cardinalities, const CodedTuples& tuples) {
  Impl& I = *impl_;
  I.ctx.bind();
  I.cardinalities = cardinalities;
  const KeyPacking p = make_packing(cardinalities, I.knobs.sort == SortKeys::PerDimension);
  gpu::StageClock clock(I.s(), I.ctx.events(), I.timing);
  // Every step after the sort reads codes through the packing, whichever it is.
  I.fold_tuples(tuples, p, clock, I.fresh);
  I.build_levels(I.fresh, p, clock);
  I.finish_stages(clock);
}

void GpuHTree::upload(const HTree& tree) {
  Impl& I = *impl_;
  I.ctx.bind();
  I.cardinalities = cardinalities(tree);
  // Each array with a quarter's headroom, as an update would size it, so
  // that the first update into them reallocates nothing.
  const auto put = [&](auto& buffer, const auto* host, std::size_t n) {
    buffer.grow(n);
    buffer.upload(host, n, I.s());
  };
  std::vector<DeviceLevel> next(tree.levels.size());
  for (std::size_t i = 0; i < tree.levels.size(); ++i) {
    const Level& h = tree.levels[i];
    DeviceLevel& l = next[i];
    l.nodes = static_cast<std::uint32_t>(h.size());
    l.headers = static_cast<std::uint32_t>(h.header_key.size());
    put(l.key, h.key.data(), h.key.size());
    put(l.parent, h.parent.data(), h.parent.size());
    put(l.first_child, h.first_child.data(), h.first_child.size());
    put(l.child_count, h.child_count.data(), h.child_count.size());
    put(l.side_links, h.side_links.data(), h.side_links.size());
    put(l.header_key, h.header_key.data(), h.header_key.size());
    put(l.header_count, h.header_count.data(), h.header_count.size());
    put(l.header_first, h.header_first.data(), h.header_first.size());
    put(l.aggregate, reinterpret_cast<const DevAgg*>(h.aggregate.data()), h.aggregate.size());
  }
  // The first leaf rows, from the leaves up, and the leaf rows packed.
  for (std::size_t i = next.size(); i-- > 0;) {
    DeviceLevel& l = next[i];
    l.first_leaf.grow(l.nodes);
    if (l.nodes)
      first_leaves<<<grid_for(l.nodes), kBlock, 0, I.s()>>>(
          l.first_child.data(), l.nodes, i + 1 < next.size() ? next[i + 1].first_leaf.data() : nullptr,
          l.first_leaf.data());
    GPUOLAP_CHECK_LAUNCH("first_leaves");
  }
  I.levels = std::move(next);
  std::memcpy(&I.total, &tree.total, sizeof I.total);
  I.upload_views();
  const KeyPacking p = make_packing(I.cardinalities, I.knobs.sort == SortKeys::PerDimension);
  const std::size_t leaves = I.leaf_count();
  I.leaf_words.grow(leaves * p.words);
  if (leaves) {
    old_leaf_words<<<grid_for(leaves), kBlock, 0, I.s()>>>(I.views.data(), p.dimensions, leaves, p, I.leaf_words.data());
    GPUOLAP_CHECK_LAUNCH("old_leaf_words");
  }
  I.leaf_packing = p;
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(I.s()));
}

void GpuHTree::reserve_for_updates() {
  Impl& I = *impl_;
  I.ctx.bind();
  const std::size_t n = I.leaf_count();
  const std::size_t w = make_packing(I.cardinalities, I.knobs.sort == SortKeys::PerDimension).words;
  // The levels the next update builds (they alternate with the current
  // ones), as big as the current ones.
  I.spare.resize(I.levels.size());
  for (std::size_t i = 0; i < I.levels.size(); ++i) {
    const DeviceLevel& l = I.levels[i];
    DeviceLevel& s = I.spare[i];
    for (auto* b : {&s.key, &s.parent, &s.first_child, &s.child_count, &s.side_links, &s.first_leaf}) b->grow(l.nodes);
    const std::uint32_t bound = std::min<std::uint32_t>(std::max<std::uint32_t>(I.cardinalities[i], 1), l.nodes);
    for (auto* b : {&s.header_key, &s.header_count, &s.header_first}) b->grow(bound);  // as build_levels sizes them
    s.aggregate.grow(l.nodes);
  }
  // The update's scratch over the old and the merged leaves. (A batch's own
  // scratch is the batch's size, made by the first append.)
  I.old.words.grow(n * w);
  I.merged.words.grow(n * w);
  I.merged.aggregate.grow(n);
  // The kept leaf rows, moved into room for the tree's growth (grow() would
  // drop them: they are what the next update and the queries read).
  const std::size_t kept = n * I.leaf_packing.words;
  if (I.leaf_words.size() < n * w + n * w / 4) {
    DeviceBuffer<std::uint64_t> room;
    room.grow(n * w);
    if (kept)
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(room.data(), I.leaf_words.data(), kept * sizeof(std::uint64_t),
                                         cudaMemcpyDeviceToDevice, I.s()));
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(I.s()));  // before the old buffer is freed
    std::swap(I.leaf_words, room);
  }
  for (auto* b : {&I.diff}) b->grow(n);
  for (auto* b : {&I.node_id, &I.node_id_above, &I.perm, &I.perm_alt}) b->grow(n);
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(I.s()));
}

void GpuHTree::update(const std::vector<std::uint32_t>& cardinalities, const CodedTuples& batch) {
  Impl& I = *impl_;
  I.ctx.bind();
  I.cardinalities = cardinalities;
  const KeyPacking p = make_packing(cardinalities, I.knobs.sort == SortKeys::PerDimension);
  const int m = p.dimensions, w = p.words;
  gpu::StageClock clock(I.s(), I.ctx.events(), I.timing);
  I.fold_tuples(batch, p, clock, I.fresh);
  const DeviceLeaves& fresh = I.fresh;
  const std::size_t old_n = I.leaf_count();
  if (fresh.n == 0) {
    I.finish_stages(clock);
    return;
  }
  clock.start("search");
  // The old leaf rows: those kept for the queries when the batch brought
  // no value that widens the packing, else made again from the levels.
  DeviceLeaves& old = I.old;
  old.n = old_n;
  const std::uint64_t* old_words = I.leaf_words.data();
  if (old_n && !same_packing(I.leaf_packing, p)) {
    old.words.grow(old_n * w);
    old_leaf_words<<<grid_for(old_n), kBlock, 0, I.s()>>>(I.views.data(), m, old_n, p, old.words.data());
    GPUOLAP_CHECK_LAUNCH("old_leaf_words");
    old_words = old.words.data();
  }
  DeviceBuffer<std::uint32_t>&rank = I.rank, &inserted_flag = I.inserted_flag, &inserted_row = I.inserted_row,
                               &inserted_rank = I.inserted_rank;
  for (auto* b : {&rank, &inserted_flag, &inserted_row, &inserted_rank}) b->grow(fresh.n);
  I.counters.grow(kMaxDimensions + 1);
  DeviceBuffer<int>& selected = I.counters;
  if (old_n) {
    search_tree<<<grid_for(fresh.n), kBlock, 0, I.s()>>>(fresh.words.data(), fresh.n, p, I.views.data(), m,
                                                         static_cast<std::uint32_t>(old_n), rank.data(),
                                                         inserted_flag.data());
    GPUOLAP_CHECK_LAUNCH("search_tree");
  } else {
    fill_u32<<<grid_for(fresh.n), kBlock, 0, I.s()>>>(rank.data(), fresh.n, 0);
    fill_u32<<<grid_for(fresh.n), kBlock, 0, I.s()>>>(inserted_flag.data(), fresh.n, 1);
  }
  const auto rows = thrust::counting_iterator<std::uint32_t>(0);
  I.cub_call([&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, rows, inserted_flag.data(), inserted_row.data(), selected.data(),
                                      as_items(fresh.n), I.s());
  });
  I.cub_call([&](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, rank.data(), inserted_flag.data(), inserted_rank.data(), selected.data(),
                                      as_items(fresh.n), I.s());
  });
  const std::uint32_t inserted = static_cast<std::uint32_t>(selected.download(1, I.s())[0]);
  const std::size_t merged_n = old_n + inserted;
  DeviceLeaves& merged = I.merged;
  merged.n = merged_n;
  merged.words.grow(merged_n * w);
  merged.aggregate.grow(merged_n);
  if (old_n) {
    // The old leaves' aggregates are the last level's.
    scatter_old_leaves<<<grid_for(old_n), kBlock, 0, I.s()>>>(old_words, I.levels.back().aggregate.data(), old_n,
                                                              w, inserted_rank.data(), inserted, merged_n,
                                                              merged.words.data(), merged.aggregate.data());
    GPUOLAP_CHECK_LAUNCH("scatter_old_leaves");
  }
  if (inserted)
    scatter_new_leaves<<<grid_for(inserted), kBlock, 0, I.s()>>>(fresh.words.data(), fresh.aggregate.data(), fresh.n, w,
                                                                 inserted_row.data(), inserted_rank.data(), inserted,
                                                                 merged_n, merged.words.data(), merged.aggregate.data());
  fold_found<<<grid_for(fresh.n), kBlock, 0, I.s()>>>(fresh.aggregate.data(), rank.data(), inserted_flag.data(), fresh.n,
                                                      inserted_rank.data(), inserted, merged.aggregate.data());
  GPUOLAP_CHECK_LAUNCH("fold_found");
  clock.stop();
  I.build_levels(merged, p, clock);
  I.finish_stages(clock);
}

Answers GpuHTree::query(const QueryBatch& batch, QueryStats* stats) {
  Impl& I = *impl_;
  I.ctx.bind();
  const std::size_t n = batch.size();
  const int m = static_cast<int>(batch.dimensions);
  Answers out(n, batch.codes.get_allocator().resource());
  QueryStats st;
  gpu::StageClock clock(I.s(), I.ctx.events(), I.timing);
  if (n == 0 || I.leaf_count() == 0) {
    out.fill(Aggregate{});
    if (stats) *stats = st;
    I.stages.clear();
    return out;
  }
  if (m != static_cast<int>(I.levels.size())) throw InputError("a query batch must name every dimension of the tree");
  as_items(n);
  const std::size_t code_bytes = batch.codes.size() * sizeof(std::uint32_t), answer_bytes = n * sizeof(DevAgg);
  // The batch and its answers in pinned host memory: the batch's own when
  // it was made there (query_memory()), else staged through the tree's.
  // (The kernels move 16-byte words: the resource's blocks are page-aligned.)
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  const bool in_place = gpu::is_pinned_memory(batch.codes.get_allocator().resource()) &&
                        aligned(batch.codes.data()) && aligned(out.data());
  const std::uint32_t* host_codes = batch.codes.data();
  DevAgg* host_answers = reinterpret_cast<DevAgg*>(out.data());
  if (!in_place) {
    I.query_in.reserve(code_bytes);
    std::memcpy(I.query_in.data(), batch.codes.data(), code_bytes);
    host_codes = static_cast<const std::uint32_t*>(I.query_in.device_data());
    I.query_out.reserve(answer_bytes);
    host_answers = static_cast<DevAgg*>(I.query_out.device_data());
  }
  I.query_counts.reserve(sizeof(QueryCounts));
  // Where the kernels read and write: the pinned memory itself (mapped), or
  // device copies (copied). balanced reads a query's codes at every visit,
  // so it reads them from device memory either way.
  const bool balanced = I.knobs.online == OnlineKernel::Balanced;
  const bool copy_codes = I.knobs.query_io == QueryIo::Copied || balanced;
  const std::uint32_t* codes = host_codes;
  DevAgg* answers = host_answers;
  clock.start("io");
  if (copy_codes) {
    I.query_codes.grow(batch.codes.size());
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(I.query_codes.data(), host_codes, code_bytes, cudaMemcpyHostToDevice, I.s()));
    codes = I.query_codes.data();
  }
  if (I.knobs.query_io == QueryIo::Copied) {
    I.query_answers.grow(n);
    answers = I.query_answers.data();
  }
  I.query_online.grow(n);
  if (!I.query_counters_zero)
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(I.query_counters.data(), 0, kQueryCounters * sizeof(unsigned long long), I.s()));
  I.query_counters_zero = false;  // until the batch has reported
  auto* counts = static_cast<QueryCounts*>(I.query_counts.data());
  counts->reported = 0;
  clock.stop();
  clock.start("query");
  // block-per-query's grid: enough blocks to fill every SM, or one a query
  // when there are fewer (launched from the device, and only when the
  // batch has online queries). balanced's grid is cut to the batch's
  // visits, which the host learns once the lookups have listed the queries.
  HybridQueries q{};
  q.codes = codes;
  q.m = m;
  q.n = n;
  q.levels = I.views.data();
  q.total = I.total;
  if (I.knobs.path_lookup == PathLookup::LeafJump) {
    q.leaf_words = I.leaf_words.data();
    q.packing = I.leaf_packing;
    q.leaves = static_cast<std::uint32_t>(I.leaf_count());
  }
  q.answers = answers;
  q.online = I.query_online.data();
  q.counters = I.query_counters.data();
  q.counts = static_cast<QueryCounts*>(I.query_counts.device_data());
  if (!balanced) {  // online_threads 0 (balanced): the lookups only list the online queries
    q.online_threads = I.knobs.block_threads;
    q.online_blocks = static_cast<unsigned>(I.ctx.multiprocessors()) * std::min(32u, 2048u / std::max(32u, q.online_threads));
  }
  launch_hybrid_queries(q, I.s());
  GPUOLAP_CHECK_LAUNCH("popular_path_queries");
  unsigned long long side_link_nodes = 0;
  if (balanced) {
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(I.s()));
    I.check_reported(*counts);
    const std::size_t k = counts->online;
    if (k) {
      const std::uint32_t* which = I.query_online.data();
      DeviceBuffer<SideLinkList> lists(k);
      DeviceBuffer<std::uint32_t> lengths(k + 1);
      DeviceBuffer<unsigned long long> offsets(k + 1);
      GPUOLAP_CUDA_CHECK(cudaMemsetAsync(lengths.data() + k, 0, sizeof(std::uint32_t), I.s()));
      online_lists<<<grid_for(k), kBlock, 0, I.s()>>>(codes, m, which, k, I.views.data(), lists.data(), lengths.data());
      GPUOLAP_CHECK_LAUNCH("online_lists");
      I.cub_call([&](void* t, std::size_t& b) {
        const auto wide = thrust::make_transform_iterator(lengths.data(), Widen{});
        return cub::DeviceScan::ExclusiveSum(t, b, wide, offsets.data(), as_items(k + 1), I.s());
      });
      const unsigned long long visits = offsets.download(k + 1, I.s())[k];
      side_link_nodes = visits;
      DeviceBuffer<unsigned long long> count(k), min_bits(k), max_bits(k);
      DeviceBuffer<double> sum(k);
      const OnlineSums sums{count.data(), sum.data(), min_bits.data(), max_bits.data()};
      init_online_sums<<<grid_for(k), kBlock, 0, I.s()>>>(sums, k);
      if (visits)
        online_balanced<<<grid_for((visits + kVisits - 1) / kVisits), kBlock, 0, I.s()>>>(
            codes, m, which, k, I.views.data(), lists.data(), offsets.data(), visits, sums);
      GPUOLAP_CHECK_LAUNCH("online_balanced");
      online_finish<<<grid_for(k), kBlock, 0, I.s()>>>(which, k, sums, answers);
      GPUOLAP_CHECK_LAUNCH("online_finish");
      GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(I.s()));  // before the scratch above is freed
    }
  }
  clock.stop();
  if (answers != host_answers) {
    clock.start("io");
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(host_answers, answers, answer_bytes, cudaMemcpyDeviceToHost, I.s()));
    clock.stop();
  }
  // Answers written across the bus are the host's once the batch has
  // reported (its last block writes the report after a system fence that
  // follows every answer): the host watches for it rather than for the
  // stream's end (measured: an empty kernel's launch and wait take 0.010 ms
  // with the stream's, of a 0.044 ms batch). Anything else needs the stream.
  if (!balanced && answers == host_answers && !I.timing) {
    I.wait_for_report(*counts);
    I.stages.clear();
  } else {
    I.finish_stages(clock);
  }
  if (!balanced) {
    I.check_reported(*counts);
    side_link_nodes = counts->side_link_nodes;
  }
  I.query_counters_zero = true;
  if (!in_place) std::memcpy(out.data(), I.query_out.data(), answer_bytes);
  st.online = counts->online;
  st.popular_path = n - st.online;
  st.side_link_nodes = side_link_nodes;
  if (stats) *stats = st;
  return out;
}

void GpuHTree::download(HTree& tree) const {
  Impl& I = *impl_;
  I.ctx.bind();
  tree.levels.assign(I.levels.size(), {});
  for (std::size_t i = 0; i < I.levels.size(); ++i) {
    const DeviceLevel& l = I.levels[i];
    Level& h = tree.levels[i];
    h.key = l.key.download(l.nodes, I.s());
    h.parent = l.parent.download(l.nodes, I.s());
    h.first_child = l.first_child.download(l.nodes, I.s());
    h.child_count = l.child_count.download(l.nodes, I.s());
    h.side_links = l.side_links.download(l.nodes, I.s());
    h.header_key = l.header_key.download(l.headers, I.s());
    h.header_count = l.header_count.download(l.headers, I.s());
    h.header_first = l.header_first.download(l.headers, I.s());
    h.aggregate.resize(l.nodes);
    if (l.nodes)
      GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(h.aggregate.data(), l.aggregate.data(), l.nodes * sizeof(DevAgg),
                                         cudaMemcpyDeviceToHost, I.s()));
  }
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(I.s()));
  std::memcpy(&tree.total, &I.total, sizeof I.total);
}

std::size_t GpuHTree::leaf_count() const { return impl_->leaf_count(); }
std::size_t GpuHTree::node_count() const {
  std::size_t n = 0;
  for (const DeviceLevel& l : impl_->levels) n += l.nodes;
  return n;
}
void GpuHTree::set_timing(bool on) { impl_->timing = on; }
std::vector<std::pair<std::string, double>> GpuHTree::stages() const { return impl_->stages; }
std::string GpuHTree::device_name() const { return impl_->ctx.props().name; }

}  // namespace gpuolap::htree
