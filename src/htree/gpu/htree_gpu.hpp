// The gpu H-tree: the paper's structure of arrays resident on one GPU,
// built, updated and queried there (htree_gpu.cu). Plain C++: no CUDA
// header; a build without CUDA links gpu_none.cpp, whose tree says it is
// not available.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "htree/htree.hpp"

namespace gpuolap::htree {

// How tuples are sorted: `packed` sorts tuples packed into 64-bit words
// (key_packing.hpp; D15C40 in 2 radix sorts, over 60 and 30 bits), `per-dimension`
// one stable radix sort per dimension, as the paper sorts a dimension at a
// time.
enum class SortKeys : std::uint8_t { Packed, PerDimension };
// How online-cubing queries spread over the GPU: `block-per-query` is
// Algorithm 4 (a block walks one query's side-link list); `balanced` cuts
// every query's list into equal pieces, one per thread of one grid, so a
// batch of uneven lists keeps every SM busy (the load imbalance the paper
// leaves open).
enum class OnlineKernel : std::uint8_t { BlockPerQuery, Balanced };
// Where the query kernels read a batch and write its answers: `mapped`
// reads the codes and writes the answers in pinned host memory across the
// bus (zero copy: the transfers overlap the lookups), `copied` copies the
// codes to device memory before the kernels and the answers back after.
enum class QueryIo : std::uint8_t { Mapped, Copied };
// How an on-popular-path query finds its node: `walk` goes down a level at
// a time to the query's deepest instantiated level (Algorithm 3);
// `leaf-jump` stops at the first node with a single leaf below it and
// compares the rest of the query with that leaf's codes (the tree's leaf
// rows stay on the device, packed), since every node between the two holds
// the same aggregate: below the first few levels most paths are chains of
// only children, each a memory latency on the way down.
enum class PathLookup : std::uint8_t { Walk, LeafJump };

std::string_view sort_keys_name(SortKeys s);
SortKeys parse_sort_keys(std::string_view name);
std::string_view online_kernel_name(OnlineKernel k);
OnlineKernel parse_online_kernel(std::string_view name);
std::string_view query_io_name(QueryIo io);
QueryIo parse_query_io(std::string_view name);
std::string_view path_lookup_name(PathLookup p);
PathLookup parse_path_lookup(std::string_view name);

struct GpuKnobs {
  SortKeys sort = SortKeys::Packed;
  OnlineKernel online = OnlineKernel::BlockPerQuery;  // measured faster (bench/results/h100-htree-*)
  unsigned block_threads = 128;  // block-per-query's threads (the paper found 32 best on a G80)
  QueryIo query_io = QueryIo::Mapped;
  PathLookup path_lookup = PathLookup::LeafJump;
};

// Whether this build has the gpu form and this machine a GPU.
bool gpu_available();

class GpuHTree {
 public:
  explicit GpuHTree(int device = -1, GpuKnobs knobs = {});
  ~GpuHTree();
  GpuHTree(const GpuHTree&) = delete;
  GpuHTree& operator=(const GpuHTree&) = delete;

  // A new tree over `tuples`, whose dimension d holds codes below
  // cardinalities[d] (Algorithm 1, with GCHILDREN and HTABLE).
  void build(const std::vector<std::uint32_t>& cardinalities, const CodedTuples& tuples);
  // The levels of a host tree, uploaded (each array with a quarter's
  // headroom for the tree's growth).
  void upload(const HTree& tree);
  // Makes now the room the next updates need, rather than in them: the
  // levels an update builds (double-buffered with the current ones) and its
  // scratch over the tree's leaves, each with a quarter's headroom (a
  // batch's own scratch, the batch's size, is made by the first update).
  // About doubles the tree's device memory, and fails when that does not
  // fit; a tree fed batches (the server's) calls it once after loading, so
  // that no append reallocates the tree.
  void reserve_for_updates();
  // Folds a batch into the tree (Algorithm 2): the batch sorted and folded,
  // each of its tuples searched down the tree, scattered among the leaves,
  // and the levels, roll-up and header tables made again.
  void update(const std::vector<std::uint32_t>& cardinalities, const CodedTuples& batch);
  // Answers a batch: on-popular-path queries a thread each (Algorithm 3),
  // the others by online cubing (Algorithm 4, or `balanced`), merged in
  // the batch's order (§5.3.3). A batch made in query_memory(Engine::Gpu)
  // is read where it lies and answered into the same memory; any other is
  // copied through the tree's own pinned buffers.
  Answers query(const QueryBatch& batch, QueryStats* stats = nullptr);
  // The levels, header tables and total into `tree` (which keeps its
  // dimensions, dictionaries and tuple count).
  void download(HTree& tree) const;

  std::size_t leaf_count() const;
  std::size_t node_count() const;
  // Stage times (ms) of the last operation, when timing is on: io, sort,
  // search, index, htable, rollup, query.
  void set_timing(bool on);
  std::vector<std::pair<std::string, double>> stages() const;
  std::string device_name() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuolap::htree
