// Grouped aggregation and the foreign-key join with their state in shared
// memory (../shared/papers/memory-contention-olap-operators.md, its Q2 and
// Q1), over dense integer codes 0..C-1:
//
//   Q2  SELECT a, COUNT(*), SUM(x), MIN(x), MAX(x) FROM f GROUP BY a
//   Q1  SELECT COUNT(*), SUM(d1.b) FROM f JOIN d1 ON f.fk = d1.id
//
// A block keeps the running aggregates of every group (Q2) or the
// dimension's column (Q1) in shared memory, possibly several copies of
// each, and scans its own contiguous rows (the static partitioning of
// placement.hpp); at its end it merges its copies into global memory. The
// variants differ in where the state lives and which copy a row uses; all
// give the same answer, and the CPU form (cpu-serial) is their oracle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "groupby/shared_memory/placement.hpp"

namespace gpuolap::groupby {

enum class SharedVariant : std::uint8_t {
  GlobalAtomics,    // no shared memory: an atomic per row on the global result
  OneCopy,          // one copy of each group in shared memory, row -> its code's slot
  NaiveReplicas,    // k copies; lane l of a warp uses copy l mod k
  Placement,        // the paper's: the re-mapped column names the copy (placement.hpp)
  WarpAggregation,  // one copy; a warp's equal keys combined first (__match_any_sync)
  SortReduce,       // CUB: radix sort of (code, value), then reduce-by-key (Q2 only)
  TargetStore,      // the MOLAP engine's shared store (gpu/primitives/target_store.cuh): a
                    // replica per warp, __match_any_sync pre-aggregation (Q2; double sums)
};
std::string_view shared_variant_name(SharedVariant v);
SharedVariant parse_shared_variant(std::string_view name);  // InputError listing the valid names
const std::vector<SharedVariant>& all_shared_variants();
// Whether the FK join has the variant (it has no atomics to aggregate: the
// first four are its forms, read from global memory in the first).
bool join_has_variant(SharedVariant v);

// A value column of 4 or 8 bytes. Int32 sums are exact in int64.
enum class SharedValueType : std::uint8_t { Int32, Double };

// Q2's input: `rows` codes below `groups` and, unless `values` is null, a
// value column. Pointers are host memory, or the device's when
// SharedGpuOptions::input_on_device. For the Placement variant, `codes` is
// the placement's column (slots) and `placement` its layout.
struct GroupedInput {
  std::size_t rows = 0;
  std::uint32_t groups = 0;
  const std::uint32_t* codes = nullptr;
  SharedValueType value_type = SharedValueType::Double;
  const void* values = nullptr;
  bool min_max = false;  // also MIN(x) and MAX(x)
  const Placement* placement = nullptr;
};

// One entry per code 0..groups-1 (a group with count 0 has no row in the
// answer); `ints` for Int32 values, `doubles` for Double.
struct GroupedResult {
  SharedValueType value_type = SharedValueType::Double;
  std::vector<std::int64_t> count;
  std::vector<std::int64_t> sum_ints, min_ints, max_ints;
  std::vector<double> sum_doubles, min_doubles, max_doubles;
  std::vector<std::pair<std::string, double>> stage_ms;
  std::string plan;  // what ran: variant, copies, shape, shared bytes
};

// Q1's input: the fact table's foreign keys and the dimension's value
// column indexed by id (row i has id i). A key outside 0..dim_rows-1 has no
// match and is not counted (an inner join).
struct JoinInput {
  std::size_t rows = 0;
  const std::uint32_t* keys = nullptr;
  std::uint32_t dim_rows = 0;
  SharedValueType value_type = SharedValueType::Int32;
  const void* dim_values = nullptr;  // always host memory (it is small)
  const Placement* placement = nullptr;
};

struct JoinResult {
  SharedValueType value_type = SharedValueType::Int32;
  std::int64_t matched = 0;
  std::int64_t sum_int = 0;
  double sum_double = 0;
  std::vector<std::pair<std::string, double>> stage_ms;
  std::string plan;
};

struct SharedGpuOptions {
  SharedVariant variant = SharedVariant::Placement;
  // Rows a block, and threads a block: 0 picks them by the state's shared
  // memory (kAutoBlockThreads). word_bytes is the state's own.
  LaunchShape shape{0, std::uint64_t{1} << 18, 8};
  int copies = 0;           // naive replicas: 0 = as many as fit, at most 32
  int device = -1;          // -1: the current device
  bool input_on_device = false;
  bool timing = false;
};

// Threads a block when the options leave them 0: 1,024 where a block's
// state takes more than a quarter of an SM's shared memory (fewer than four
// blocks fit, so each brings as many warps as it can), else 512. Measured
// on an H100 at 2^28 rows (bench/results/h100-shared-memory-*.md).
int auto_block_threads(std::size_t shared_bytes, std::size_t sm_shared_bytes);

// The variant `auto` runs: for COUNT alone (a native 32-bit shared atomic,
// which value conflicts do not slow on Hopper) one copy; for sums (64-bit
// accumulators, a double's a compare-and-swap loop) the placement when
// there is one, else one copy when the rows of a warp rarely share a code
// (estimated from sampled chunks) and warp aggregation when they often do.
// `why` says which and why.
SharedVariant choose_shared_variant(const GroupedInput& input, bool has_placement, std::string& why);

// cpu-serial: one thread, row after row (the oracle).
GroupedResult grouped_cpu(const GroupedInput& input);
JoinResult join_cpu(const JoinInput& input);

// Checks the input's shape; an InputError names what is wrong.
void check_grouped_input(const GroupedInput& input, SharedVariant variant);
void check_join_input(const JoinInput& input, SharedVariant variant);

// The word the state uses (8 when any 8-byte aggregate or value is kept),
// which a placement for this query should be made with.
int grouped_word_bytes(const GroupedInput& input);
int join_word_bytes(const JoinInput& input);

// A code column and, optionally, a value column kept on a GPU between
// queries (SQL's route over tables held in memory): uploaded once; pass
// codes() and values() with SharedGpuOptions::input_on_device.
class SharedResidentColumns {
 public:
  SharedResidentColumns(const std::uint32_t* codes, std::size_t rows, const void* values, SharedValueType type,
                        int device = -1);
  ~SharedResidentColumns();
  SharedResidentColumns(const SharedResidentColumns&) = delete;
  SharedResidentColumns& operator=(const SharedResidentColumns&) = delete;
  const std::uint32_t* codes() const;  // device memory
  const void* values() const;          // device memory, or null
  int device() const;

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
};

bool shared_gpu_available();
// Why shared_gpu_available() is false, in words (gpu_status()'s problem):
// no driver, no device, a GPU this build's kernels do not fit, no CUDA.
std::string shared_gpu_problem();
GroupedResult grouped_gpu(const GroupedInput& input, const SharedGpuOptions& options);
JoinResult join_gpu(const JoinInput& input, const SharedGpuOptions& options);

}  // namespace gpuolap::groupby
