#pragma once
// A durable cube served to many readers and writers at once.
//
// Readers take the current snapshot (an immutable fact table, shared) under a
// brief lock and query it without one: a query sees every write acknowledged
// before it started and nothing half-applied. Writers hand their request to
// one committer thread, which resolves each against the facts as they will
// be after the writes queued before it, logs the whole group, syncs once
// (group commit), applies it and publishes a new snapshot; only then are the
// writes acknowledged.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "olap/cell_overlay.hpp"
#include "gpuolap/durable_cube.hpp"
#include "gpuolap/engine.hpp"

namespace gpuolap::olap {

struct WriteOutcome {
  uint64_t sequence = 0;  // of the log record; 0 when nothing was written
  size_t cells = 0;       // base cell writes in the record
};

struct ServiceStats {
  uint64_t writes = 0, groups = 0, checkpoints = 0, log_bytes = 0;
  uint64_t last_sequence = 0;  // of the current log's last record; 0 when it is empty
};

class CubeService {
 public:
  // Turns a write request into a log record, reading current values through
  // the reader; throws InputError to refuse it (nothing of it is applied).
  using Resolver = std::function<LogRecord(const CellReader&)>;

  // `gpu`: the gpu engines' options (--gpus), for engines that use them.
  CubeService(std::unique_ptr<DurableCube> cube, std::string engine, uint64_t checkpoint_log_bytes,
              GpuOptions gpu = {});
  ~CubeService();
  CubeService(const CubeService&) = delete;
  CubeService& operator=(const CubeService&) = delete;

  const Schema& schema() const { return cube_->schema(); }
  const Recovery& recovery() const { return cube_->recovery(); }
  const std::string& engine_name() const { return engine_name_; }
  std::shared_ptr<const FactTable> snapshot() const;
  ServiceStats stats() const;

  // The query's aggregation map, its dimensions' maps kept for the next
  // query that asks the same element lists.
  AggregationMap map(const AreaQuery& query) const { return AggregationMap(schema(), query, &map_cache_); }
  DimensionMapCache::Stats map_cache_stats() const { return map_cache_.stats(); }

  // Runs an area query on a snapshot with the configured engine.
  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query);

  // Returns once the write is durable and visible; rethrows its InputError.
  WriteOutcome write(Resolver resolve);
  // Writes a snapshot now and truncates the log (after queued writes).
  void save();

 private:
  struct Request {
    Resolver resolve;  // empty: a checkpoint
    std::promise<WriteOutcome> done;
  };
  void commit_loop();
  void commit_group(std::vector<Request>& group);

  std::unique_ptr<DurableCube> cube_;
  std::string engine_name_;
  GpuOptions gpu_;
  uint64_t checkpoint_log_bytes_;
  std::unique_ptr<Engine> shared_engine_;  // engines that keep device state are shared
  mutable DimensionMapCache map_cache_;
  std::mutex engine_mutex_;

  mutable std::mutex snapshot_mutex_;
  std::shared_ptr<const FactTable> snapshot_;
  ServiceStats stats_;

  std::mutex queue_mutex_;
  std::condition_variable queue_cv_;
  std::deque<Request> queue_;
  bool stopping_ = false;
  std::string broken_;  // set when the log could not be written: no more writes
  std::thread committer_;
};

}  // namespace gpuolap::olap
