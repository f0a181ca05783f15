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
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpuolap/durable_cube.hpp"
#include "gpuolap/engine.hpp"

namespace gpuolap::server {

// Cells a write has touched: key -> values (NaN where empty), or nullopt
// when deleted.
using Overlay = std::map<uint64_t, std::optional<std::vector<double>>>;

// The facts a write is resolved against: a snapshot with the writes resolved
// before it laid over it (the group's, and a bulk write's earlier cells).
class CellReader {
 public:
  CellReader(const FactTable& table, const Overlay& overlay) : table_(&table), overlay_(overlay) {}
  // This reader with `top` laid over it.
  CellReader layered(const Overlay& top) const { return CellReader(*this, top); }
  // The values of a base cell (NaN where empty), or nullopt when not filled.
  std::optional<std::vector<double>> cell(uint64_t key) const;
  // Visits every filled cell (key, values) for which `wanted(key)` holds.
  void for_each(const std::function<bool(uint64_t)>& wanted,
                const std::function<void(uint64_t, const double*)>& visit) const;

 private:
  CellReader(const CellReader& below, const Overlay& top) : below_(&below), overlay_(top) {}
  const FactTable* table_ = nullptr;  // the bottom layer, or
  const CellReader* below_ = nullptr;
  const Overlay& overlay_;
};

// Records in `overlay` what a record does to the cells it touches, as
// FactStore::apply does it; `reader` must read through `overlay`.
void lay_over(Overlay& overlay, const CellReader& reader, const LogRecord& record, size_t measures);

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

  CubeService(std::unique_ptr<DurableCube> cube, std::string engine, uint64_t checkpoint_log_bytes);
  ~CubeService();
  CubeService(const CubeService&) = delete;
  CubeService& operator=(const CubeService&) = delete;

  const Schema& schema() const { return cube_->schema(); }
  const Recovery& recovery() const { return cube_->recovery(); }
  const std::string& engine_name() const { return engine_name_; }
  std::shared_ptr<const FactTable> snapshot() const;
  ServiceStats stats() const;

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
  uint64_t checkpoint_log_bytes_;
  std::unique_ptr<Engine> shared_engine_;  // engines that keep device state are shared
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

}  // namespace gpuolap::server
