// An H-tree kept durable, as the cube store keeps a cube: a snapshot written
// atomically (TREE/htree.snapshot: the dictionaries and the sorted leaf rows
// with their aggregates, from which the levels are rebuilt without a sort)
// and a log of the batches appended since (TREE/htree.log), each record
// fsynced before the batch is acknowledged and replayed on open. A log names
// the snapshot it follows by that snapshot's checksum, so a log left from
// before a newer snapshot is never replayed twice. TREE/lock is held while
// the tree is open: one process at a time.
//
// Snapshot (little-endian): "GPUOLAPH", u32 version 1, u32 dimensions,
//   the measure's name, u64 tuples, per dimension its name, u8 type, u64
//   values and each value; u64 leaves, per dimension the leaves' u32 codes,
//   the leaves' aggregates (u64 count, f64 sum, min, max); u64 XXH3-64 of
//   all the bytes before. A name or value: u32 bytes, then the bytes.
// Log: "GPUOLAPB", u32 version 1, u32 0, u64 the snapshot's checksum, u64
//   XXH3-64 of the 24 bytes before; then records: u64 payload bytes, u64
//   sequence (1, 2, ...), the payload, u64 XXH3-64 of the 16 bytes before
//   and the payload. A batch's payload: u32 dimensions, per dimension u64
//   values before the batch, u32 values it adds and each; u64 rows, per
//   dimension u8 the bytes of a code (1, 2 or 4: the fewest that hold the
//   dictionary's size) and the rows' codes in that width, the rows' f64
//   measures, u8 1 when NULL flags follow (a byte per row).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "table/table.hpp"

namespace gpuolap {
class StoreLock;
}

namespace gpuolap::htree {

// What opening a tree found (for `htree info` and the server's log line).
// Where the last append's time went.
struct AppendTimes {
  double code_ms = 0;   // the batch coded by the dictionaries
  double log_ms = 0;    // written to the log and synced
  double apply_ms = 0;  // folded into the tree
};

struct OpenReport {
  std::uint64_t snapshot_bytes = 0;
  std::uint64_t log_bytes = 0;
  std::uint64_t replayed_batches = 0;
  std::uint64_t replayed_tuples = 0;
  std::string log_problem;  // a torn tail cut off, or a stale log ignored ("" when none)
};

class DurableHTree {
 public:
  // Writes `tree` (its leaves, dictionaries, tuples) as a new durable tree
  // in `dir`; an existing tree there is an InputError unless `replace`.
  static void create(const std::filesystem::path& dir, const HTree& tree, bool replace);

  // Opens the tree in `dir` (waiting for its lock), replays its log and
  // keeps the tree on `engine`'s side: gpu keeps it resident on the device.
  DurableHTree(const std::filesystem::path& dir, Engine engine, GpuKnobs knobs = {});
  ~DurableHTree();
  DurableHTree(const DurableHTree&) = delete;
  DurableHTree& operator=(const DurableHTree&) = delete;

  // The tree's dimensions, measure, dictionaries and counts. Its levels are
  // current on the CPU engines; on gpu, call host_tree() for them.
  const HTree& meta() const { return tree_; }
  const HTree& host_tree();
  Engine engine() const { return engine_; }
  const OpenReport& report() const { return report_; }
  std::size_t node_count() const;
  std::size_t leaf_count() const;

  // Codes `batch` (a table with every dimension and the measure; new values
  // join the dictionaries), appends it to the log and syncs it, then folds
  // it into the tree: when this returns the batch is durable and visible.
  // `what` names the batch in errors. A failed append leaves the tree as it
  // was.
  void append(const table::Table& batch, const std::string& what);

  // Answers in the batch's memory; a batch made in query_memory() is read
  // and answered in place by the gpu engine.
  Answers query(const QueryBatch& batch, QueryStats* stats = nullptr);
  std::pmr::memory_resource* query_memory() const { return htree::query_memory(engine_); }
  // A new snapshot and an empty log.
  void checkpoint();
  // On gpu, the device memory the next appends need, made now (a server
  // calls it once, so that no append pays for allocations); else nothing.
  void reserve_for_updates();
  std::vector<std::pair<std::string, double>> gpu_stages() const;
  const AppendTimes& last_append() const { return last_append_; }
  void set_gpu_timing(bool on);

 private:
  void apply(const CodedTuples& batch);
  // Logs a batch coded by the dictionaries, which hold the values it added
  // after `sizes_before`, then applies it.
  void append_coded(const CodedTuples& batch, const std::vector<std::uint32_t>& sizes_before);
  void forget_values_after(const std::vector<std::uint32_t>& sizes_before);

  std::filesystem::path dir_;
  std::unique_ptr<StoreLock> lock_;
  Engine engine_;
  HTree tree_;
  bool host_levels_current_ = true;
  std::unique_ptr<GpuHTree> gpu_;
  OpenReport report_;
  AppendTimes last_append_;
  std::uint64_t snapshot_checksum_ = 0;
  std::uint64_t next_sequence_ = 1;
  int log_fd_ = -1;
  std::uint64_t log_bytes_ = 0;
};

}  // namespace gpuolap::htree
