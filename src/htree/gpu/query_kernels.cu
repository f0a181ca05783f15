// A hybrid query batch on the gpu H-tree (§5.3.3), launched once from the
// host. The lookup grid answers the on-popular-path queries (Algorithm 3)
// and lists the others; its last block launches the online grid
// (Algorithm 4) into the tail of the stream only when it listed any, and
// the batch's last block reports the counts into mapped host memory and
// sets the counters back to zero. A batch of popular-path queries thus
// costs one launch, with no memset before it, no empty online grid, and no
// copy of the counts after it (each a few microseconds of a 50 µs batch).
//
// Relocatable device code (a kernel launches a kernel), device-linked in
// its own library with the device runtime, so that htree_gpu.cu stays
// whole-program code.
#include <cub/block/block_reduce.cuh>

#include "htree/child_search.hpp"
#include "htree/gpu/query_kernels.cuh"

namespace gpuolap::htree {
namespace {

// The batch's counts into the host's memory and the counters back to zero,
// by the batch's last block once every other has finished.
__device__ void report(const HybridQueries& q, int launch_error) {
  volatile unsigned long long* counters = q.counters;
  volatile QueryCounts* counts = q.counts;
  counts->online = counters[kListed];
  counts->side_link_nodes = counters[kVisited];
  counts->launch_error = launch_error;
  for (int k = 0; k < kQueryCounters; ++k) counters[k] = 0;
  __threadfence_system();
  counts->reported = 1;
}

// Whether this block is the last of its grid to finish (called by one
// thread, after the block's own writes). The fence is the system's: the
// host may read the answers, across the bus, as soon as it sees the report.
__device__ bool last_block(unsigned long long* done) {
  __threadfence_system();  // this block's writes before its count
  const bool last = atomicAdd(done, 1ull) + 1 == gridDim.x;
  if (last) __threadfence();  // and every block's before what the last one reads
  return last;
}

// Algorithm 4: a block per online query, its threads over the side-link
// list. The grid fills the GPU rather than having a block a query: each
// block takes the next listed query from a queue (kTaken) until none is
// left, so that a block done with a short list takes another while a long
// one is walked. A query's codes are read once into shared memory (from
// pinned host memory, when the batch lies there).
template <int kThreads>
__global__ void online_block_per_query(HybridQueries q) {
  using Reduce = cub::BlockReduce<DevAgg, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  __shared__ SideLinkList list;
  __shared__ std::uint32_t c[kMaxDimensions];
  __shared__ unsigned long long taken;
  const unsigned long long listed = q.counters[kListed];
  const int m = q.m;
  while (true) {
    if (threadIdx.x == 0) taken = atomicAdd(&q.counters[kTaken], 1ull);
    __syncthreads();
    const unsigned long long t = taken;
    if (t >= listed) break;
    const std::uint32_t query = q.online[t];
    for (int d = threadIdx.x; d < m; d += kThreads) c[d] = q.codes[std::size_t{query} * m + d];
    __syncthreads();
    if (threadIdx.x == 0) {
      list = side_link_list(c, m, q.levels);
      atomicAdd(&q.counters[kVisited], static_cast<unsigned long long>(list.count));
    }
    __syncthreads();
    const LevelView& l = q.levels[list.deepest];
    DevAgg a = empty_agg();
    for (std::uint32_t s = threadIdx.x; s < list.count; s += kThreads) {
      const std::uint32_t node = l.side_links[list.first + s];
      if (matches_above(c, q.levels, list.deepest, list.shallowest, node)) a = MergeAgg()(a, l.aggregate[node]);
    }
    const DevAgg total = Reduce(temp).Reduce(a, MergeAgg());
    if (threadIdx.x == 0) q.answers[query] = total;
    __syncthreads();  // c, list, taken and temp are the next query's
  }
  if (threadIdx.x == 0 && last_block(&q.counters[kOnlineBlocksDone])) report(q, 0);
}

// The online grid, from the lookup grid's last block: into the stream's
// tail, so it starts once the lookup grid has finished (its list whole).
__device__ void launch_online(const HybridQueries& q, unsigned long long listed) {
  const unsigned blocks = listed < q.online_blocks ? static_cast<unsigned>(listed) : q.online_blocks;
  switch (q.online_threads) {
    case 32: online_block_per_query<32><<<blocks, 32, 0, cudaStreamTailLaunch>>>(q); break;
    case 64: online_block_per_query<64><<<blocks, 64, 0, cudaStreamTailLaunch>>>(q); break;
    case 256: online_block_per_query<256><<<blocks, 256, 0, cudaStreamTailLaunch>>>(q); break;
    default: online_block_per_query<128><<<blocks, 128, 0, cudaStreamTailLaunch>>>(q);
  }
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) report(q, static_cast<int>(e));  // no online grid will report
}

// Dimension d's code of leaf row r.
__device__ __forceinline__ std::uint32_t leaf_code(const HybridQueries& q, std::uint32_t r, int d) {
  const KeyPacking& p = q.packing;
  if (p.bits[d] == 0) return 0;
  return static_cast<std::uint32_t>((q.leaf_words[std::size_t{p.word[d]} * q.leaves + r] >> p.shift[d]) &
                                    ((std::uint64_t{1} << p.bits[d]) - 1));
}

// Algorithm 3's walk for the query c of `depth` instantiated dimensions:
// its deepest node's aggregate, or nothing when the tree has no such path.
// At each level the node with the query's code among the children found
// above: an only child (as most nodes below the first levels are) has its
// key read together with what the walk needs next, one round of reads a
// level instead of two; more children are searched by probes
// (child_search.hpp). With leaf rows (leaf-jump), a node with a single
// leaf below ends the walk: every node under it down to that leaf holds
// its aggregate, so the rest of the query is compared with the leaf's
// codes, read together, instead of walked a level at a time.
__device__ DevAgg popular_path(const HybridQueries& q, const std::uint32_t* c, int depth) {
  std::uint32_t lo = 0, hi = q.levels[0].nodes;
  for (int i = 0;; ++i) {
    const LevelView& l = q.levels[i];
    const bool only_child = hi - lo == 1;
    const std::uint32_t s = only_child ? lo : find_child(l.key, lo, hi, c[i]);
    if (!only_child && s == hi) return empty_agg();
    const std::uint32_t key = only_child ? l.key[s] : c[i];
    if (i + 1 == depth) {
      const DevAgg a = l.aggregate[s];
      return key == c[i] ? a : empty_agg();
    }
    const std::uint32_t first_child = l.first_child[s], children = l.child_count[s];
    if (q.leaf_words) {
      const std::uint32_t first = l.first_leaf[s], end = s + 1 < l.nodes ? l.first_leaf[s + 1] : q.leaves;
      if (key != c[i]) return empty_agg();
      if (end - first == 1) {
        const DevAgg a = l.aggregate[s];
        bool same = true;  // every code read, none waiting on another
        for (int j = i + 1; j < depth; ++j) same &= leaf_code(q, first, j) == c[j];
        return same ? a : empty_agg();
      }
    } else if (key != c[i]) {
      return empty_agg();
    }
    lo = first_child;
    hi = first_child + children;
  }
}

// Algorithm 3 over a hybrid batch (§5.3.3), a thread per query. The block's
// queries come into shared memory and its answers leave it in 16-byte
// words, so that each warp moves whole 128-byte lines: when the batch and
// its answers lie in pinned host memory these are the bus's transactions
// (a thread's own 8-byte fields, 32 bytes apart, would each be one). A
// query on the popular path walks down the tree (popular_path) and answers
// with the deepest node's aggregate; any other is listed for online cubing
// (kListed counts them), its place in the answers written by that grid.
static_assert(sizeof(DevAgg) % 16 == 0, "the answers leave a block in 16-byte words");
constexpr int kQueryBlock = 32;  // a warp a block: a 10K batch over every SM (measured 0.050 ms, 0.053 with 128)
// A block's shared memory: its queries' codes in 16-byte words, then its answers.
__host__ __device__ constexpr int staged_code_words(int m) { return (kQueryBlock * m + 3) / 4; }

__global__ void popular_path_queries(HybridQueries q) {
  extern __shared__ uint4 shared_words[];
  const int m = q.m;
  const std::size_t n = q.n;
  std::uint32_t* staged = reinterpret_cast<std::uint32_t*>(shared_words);
  DevAgg* answered = reinterpret_cast<DevAgg*>(shared_words + staged_code_words(m));
  const std::size_t first = blockIdx.x * std::size_t{kQueryBlock};
  const std::size_t here = n - first < kQueryBlock ? n - first : kQueryBlock;
  const std::size_t words = here * m;
  // The block's codes start 4 * kQueryBlock * m bytes into the batch: 16-byte aligned.
  const uint4* from = reinterpret_cast<const uint4*>(q.codes + first * m);
#pragma unroll 4
  for (std::size_t v = threadIdx.x; v < words / 4; v += kQueryBlock) shared_words[v] = from[v];
  for (std::size_t i = words / 4 * 4 + threadIdx.x; i < words; i += kQueryBlock) staged[i] = q.codes[first * m + i];
  __syncthreads();
  if (threadIdx.x < here) {
    const std::uint32_t* c = staged + threadIdx.x * m;
    DevAgg a = q.total;
    int depth = 0;
    while (depth < m && c[depth] != kAny) ++depth;
    bool popular = true;
    for (int i = depth + 1; i < m; ++i) popular = popular && c[i] == kAny;
    if (!popular) {
      q.online[atomicAdd(&q.counters[kListed], 1ull)] = static_cast<std::uint32_t>(first + threadIdx.x);
    } else if (depth > 0) {
      a = popular_path(q, c, depth);
    }
    answered[threadIdx.x] = a;
  }
  __syncthreads();
  const uint4* tile = reinterpret_cast<const uint4*>(answered);
  uint4* to = reinterpret_cast<uint4*>(q.answers + first);
  for (std::size_t v = threadIdx.x; v < here * (sizeof(DevAgg) / 16); v += kQueryBlock) to[v] = tile[v];
  __threadfence_system();  // every thread's answers before the block's count
  __syncthreads();
  if (threadIdx.x == 0 && last_block(&q.counters[kLookupBlocksDone])) {
    const unsigned long long listed = *static_cast<volatile unsigned long long*>(&q.counters[kListed]);
    if (listed > 0 && q.online_threads > 0) launch_online(q, listed);
    else report(q, 0);
  }
}

}  // namespace

std::size_t popular_path_shared_bytes(int m) {
  return staged_code_words(m) * sizeof(uint4) + kQueryBlock * sizeof(DevAgg);
}

void launch_hybrid_queries(const HybridQueries& q, cudaStream_t stream) {
  const unsigned blocks = static_cast<unsigned>((q.n + kQueryBlock - 1) / kQueryBlock);
  popular_path_queries<<<blocks, kQueryBlock, popular_path_shared_bytes(q.m), stream>>>(q);
}

}  // namespace gpuolap::htree
