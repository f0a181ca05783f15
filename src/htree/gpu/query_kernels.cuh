// A hybrid query batch on the gpu H-tree in one launch from the host
// (query_kernels.cu): on-popular-path queries a thread each (Algorithm 3),
// the others listed and then, when there are any, answered a block each
// (Algorithm 4) by a grid the lookup grid launches from the device. Device
// code: included by .cu files only.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "htree/gpu/device_tree.cuh"
#include "htree/key_packing.hpp"

namespace gpuolap::htree {

// The kernels' counters in device memory: zero between batches (the last
// block of the batch's last grid sets them back), so that a batch needs no
// memset before it.
enum QueryCounter : int {
  kListed,             // online queries listed by the lookup grid
  kVisited,            // side-link nodes visited by the online grid
  kTaken,              // listed queries taken by online blocks
  kLookupBlocksDone,   // lookup blocks finished
  kOnlineBlocksDone,   // online blocks finished
  kQueryCounters
};

// What a batch reports to the host, written by its last block into mapped
// pinned memory (no copy back after the kernels).
struct QueryCounts {
  unsigned long long online;
  unsigned long long side_link_nodes;
  int launch_error;  // a cudaError_t of the device-side launch, 0 when none
  int reported;      // 1 once written, after every answer (the host sets 0 before the launch)
};

struct HybridQueries {
  const std::uint32_t* codes;  // n queries of m codes (kAny: not instantiated)
  int m;
  std::size_t n;
  const LevelView* levels;
  DevAgg total;                // the answer to a query of no instantiated dimension
  // The leaf rows sorted and packed, word-major (null: walk every level).
  const std::uint64_t* leaf_words;
  KeyPacking packing;
  std::uint32_t leaves;
  DevAgg* answers;
  std::uint32_t* online;       // room for n listed online queries
  unsigned long long* counters;  // kQueryCounters, zero
  QueryCounts* counts;         // mapped pinned memory (device address)
  // Threads a block of the online grid (32, 64, 128 or 256), or 0 to only
  // list the online queries (the host then runs the balanced kernels).
  unsigned online_threads;
  unsigned online_blocks;      // the online grid's most blocks (those resident at once)
};

// The lookup grid's shared memory for m dimensions.
std::size_t popular_path_shared_bytes(int m);

// Launches the batch on `stream`; the counts are in q.counts once the
// stream has finished.
void launch_hybrid_queries(const HybridQueries& q, cudaStream_t stream);

}  // namespace gpuolap::htree
