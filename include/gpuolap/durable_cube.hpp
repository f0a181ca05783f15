#pragma once
// A cube store with its write-ahead log: the last snapshot (cube.gpuolap)
// plus every write logged since. Opening loads the snapshot and replays the
// log; a torn or corrupt tail is reported and never applied, not even in
// part. Writers append a record, sync it, then apply it; a checkpoint writes
// a new snapshot atomically and starts an empty log.
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "gpuolap/cube_store.hpp"
#include "gpuolap/fact_store.hpp"
#include "gpuolap/progress.hpp"
#include "gpuolap/store_lock.hpp"
#include "gpuolap/write_ahead_log.hpp"

namespace gpuolap {

// Writers checkpoint when the log has grown past this.
inline constexpr uint64_t kCheckpointLogBytes = uint64_t{64} << 20;

// What opening found in the log.
struct Recovery {
  uint64_t records_replayed = 0;
  uint64_t bytes_dropped = 0;  // of a torn or corrupt tail, or of a stale log
  uint64_t records_discarded = 0;  // whole records after corruption, set aside (discard_after_corruption)
  std::string problem;         // what was wrong with the log, in words; "" when nothing
};

// What opening does with a log that is corrupt before its end while whole
// records follow the corruption (not a torn tail): refuse to open the store,
// changing nothing (the default), or replay up to the corruption and set
// the rest aside (--recovery discard-after-corruption).
enum class LogRecovery { refuse_corruption, discard_after_corruption };

// A cube store open for writing: holds the store lock while it lives.
class DurableCube {
 public:
  // `on_busy` is called (once) when another process holds the store lock,
  // before waiting for it; it may throw to give up instead. Opening repairs
  // the log: a bad tail is cut off (its bytes kept in cube.wal.bad) and a
  // missing or stale log is replaced by an empty one.
  explicit DurableCube(const std::filesystem::path& dir, const ProgressFn& progress = {},
                       const std::function<void()>& on_busy = {},
                       LogRecovery recovery = LogRecovery::refuse_corruption);
  ~DurableCube();
  DurableCube(const DurableCube&) = delete;
  DurableCube& operator=(const DurableCube&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const Schema& schema() const { return snapshot_.schema; }
  FactStore& store() { return store_; }
  const Recovery& recovery() const { return recovery_; }

  // Appends a record (numbering it) without syncing.
  uint64_t append(LogRecord& record);
  // Makes appended records durable: call before acknowledging them.
  void sync() { log_->sync(); }
  uint64_t log_bytes() const { return log_ ? log_->bytes() : 0; }
  // Saves the store's table as the new snapshot (write, fsync, rename) and
  // starts an empty log after it.
  void checkpoint(const ProgressFn& progress = {});

 private:
  std::filesystem::path dir_;
  StoreLock lock_;
  uint64_t snapshot_checksum_;
  Cube snapshot_;  // the schema, and the facts until the store takes them
  FactStore store_;
  std::unique_ptr<WriteAheadLog> log_;
  Recovery recovery_;
};

// The log of a store as opening it would find it, changing nothing: read,
// and its records checked as replay checks them, over a copy of `facts`
// (the snapshot whose checksum is `snapshot_checksum`), which it takes.
LogContents check_log(const std::filesystem::path& dir, const Schema& schema, FactTable facts,
                      uint64_t snapshot_checksum);

// The schema and merged facts of a store with its log replayed, for commands
// that only read; `warn` gets the log's problem, if any.
Cube load_cube_with_log(const std::filesystem::path& dir, const ProgressFn& progress = {},
                        const std::function<void(const std::string&)>& warn = {},
                        LogRecovery recovery = LogRecovery::refuse_corruption);

}  // namespace gpuolap
