#include "gpuolap/durable_cube.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>

#include "gpuolap/error.hpp"
#include "new_file.hpp"

namespace gpuolap {

namespace fs = std::filesystem;

namespace {

// Copies the bytes of a log from `from` on into `file` beside it; whether
// the whole copy reached the disk.
bool copy_log_tail(const fs::path& log, uint64_t from, int fd) {
  std::ifstream in(log, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(from));
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  bool whole = true;
  for (size_t at = 0; at < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + at, bytes.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      whole = false;
      break;
    }
    at += static_cast<size_t>(n);
  }
  whole = whole && ::fsync(fd) == 0;
  ::close(fd);
  return whole;
}

// Keeps the bytes of a log's bad tail beside the store, for a person to
// look at. A torn tail was never acknowledged: its copy, cube.wal.bad, is
// best effort and replaced by the next. Records discarded after corruption
// were acknowledged: each discard keeps them in a file of its own, never
// replaced, and is refused when that copy cannot be made.
void keep_bad_tail(const fs::path& dir, const fs::path& log, uint64_t from, bool acknowledged) {
  if (!acknowledged) {
    const int fd = create_new_file(dir / "cube.wal.bad");
    if (fd >= 0) copy_log_tail(log, from, fd);
    return;
  }
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(
                           std::chrono::system_clock::now().time_since_epoch()).count();
  for (int n = 0; n < 1000; ++n) {
    const fs::path kept = dir / fmt::format("cube.wal.discarded-{}-{}", seconds, n);
    const int fd = ::open(kept.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd >= 0 && copy_log_tail(log, from, fd)) return;
    throw InputError(fmt::format("{}: cannot keep the discarded records in {}: nothing was changed", log.string(),
                                 kept.string()));
  }
  throw InputError(fmt::format("{}: cannot find a free name for the discarded records", log.string()));
}

std::string describe(const LogContents& log, uint64_t snapshot_checksum) {
  if (!log.exists) return "";
  // A stale log is not replayed at all, whatever its tail looks like.
  if (log.is_stale(snapshot_checksum))
    return fmt::format("the log predates the snapshot (a checkpoint was cut short); its {} records are already in the snapshot",
                       log.records.size());
  if (log.problem.empty()) return "";
  return fmt::format("{}; {} valid records replayed, {} bytes after them ignored{}", log.problem, log.records.size(),
                     log.file_bytes - log.valid_bytes,
                     log.records_after_problem > 0
                         ? fmt::format(" ({} whole records among them, set aside as asked)", log.records_after_problem)
                         : "");
}

// Corruption inside the log, with acknowledged writes after it, loses them
// if the log is cut there: refused unless the operator said to discard them.
void refuse_lost_records(const fs::path& dir, const LogContents& log, uint64_t snapshot_checksum,
                         LogRecovery recovery) {
  if (recovery == LogRecovery::discard_after_corruption || log.is_stale(snapshot_checksum) ||
      log.records_after_problem == 0)
    return;
  throw InputError(fmt::format(
      "{}: {}, and {} whole records follow it: opening would discard acknowledged writes. Nothing was changed; "
      "`gpuolap check --cube {}` reports the log, and --recovery discard-after-corruption opens the store without "
      "them (their bytes kept in a cube.wal.discarded-* file of their own)",
      log_file(dir).string(), log.problem, log.records_after_problem, dir.string()));
}

// Applies the log's records in order, each checked first as a live write
// is: a record that would overflow a cell is corrupt, and reading stops
// there, as at any corrupt record (the records after it count as whole
// records that follow the problem).
void replay(FactStore& store, LogContents& log) {
  for (size_t r = 0; r < log.records.size(); ++r) {
    if (const auto overflow = first_overflow(store, log.records[r])) {
      log.problem = fmt::format("record {} at byte {} is corrupt: an add makes measure {} of cell key {:#x} overflow a double",
                                r + 1, log.record_starts[r], overflow->measure + 1, overflow->key);
      log.records_after_problem += log.records.size() - r - 1;
      log.valid_bytes = log.record_starts[r];
      log.records.resize(r);
      log.record_starts.resize(r);
      return;
    }
    apply_record(store, log.records[r]);
  }
}

// The lock of a store that must exist already: taking it must not create one.
StoreLock lock_existing_store(const fs::path& dir, const std::function<void()>& on_busy) {
  if (!store_exists(dir)) throw InputError(fmt::format("{}: no cube store here", dir.string()));
  return StoreLock(dir, on_busy);
}

}  // namespace

DurableCube::DurableCube(const fs::path& dir, const ProgressFn& progress, const std::function<void()>& on_busy,
                         LogRecovery recovery)
    : dir_(dir),
      lock_(lock_existing_store(dir, on_busy)),
      snapshot_checksum_(store_checksum(dir)),
      snapshot_(load_store(dir, progress)),
      store_(snapshot_.schema.codec(), std::move(snapshot_.facts)) {
  const fs::path path = log_file(dir);
  LogContents log = read_log(path, snapshot_.schema);
  const bool replayable = log.exists && !log.is_stale(snapshot_checksum_) && log.valid_bytes > 0;
  if (replayable) replay(store_, log);  // in memory only: a refusal below leaves the store as it was
  refuse_lost_records(dir, log, snapshot_checksum_, recovery);
  // A checkpoint cut short leaves its temporary files; under the lock no one else is writing them.
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("cube.gpuolap.tmp-", 0) == 0 || name == "cube.wal.tmp") fs::remove(entry.path());
  }
  const bool acknowledged = log.records_after_problem > 0;  // discarded after corruption, as asked
  recovery_.problem = describe(log, snapshot_checksum_);
  if (!replayable) {
    recovery_.bytes_dropped = log.file_bytes;
    if (log.exists && log.file_bytes > 0) keep_bad_tail(dir, path, 0, acknowledged);
    WriteAheadLog::create(path, snapshot_checksum_);
    log_ = std::make_unique<WriteAheadLog>(path, fs::file_size(path), 1);
    return;
  }
  recovery_.records_replayed = log.records.size();
  recovery_.bytes_dropped = log.file_bytes - log.valid_bytes;
  recovery_.records_discarded = log.records_after_problem;
  if (recovery_.bytes_dropped > 0) keep_bad_tail(dir, path, log.valid_bytes, acknowledged);
  log_ = std::make_unique<WriteAheadLog>(path, log.valid_bytes, log.records.size() + 1);
}

DurableCube::~DurableCube() = default;

void DurableCube::checkpoint(const ProgressFn& progress) {
  save_store(dir_, snapshot_.schema, store_.table(), progress);
  snapshot_checksum_ = store_checksum(dir_);
  // A crash here leaves the old log, which names the old snapshot: opening
  // recognises it as stale and does not apply it again.
  // If no new log can be started, appending to the old one would lose the
  // writes (it is stale now): refuse further appends instead.
  const fs::path path = log_file(dir_);
  try {
    WriteAheadLog::create(path, snapshot_checksum_);
    log_ = std::make_unique<WriteAheadLog>(path, fs::file_size(path), 1);
  } catch (...) {
    log_.reset();
    throw;
  }
}

uint64_t DurableCube::append(LogRecord& record) {
  if (!log_) throw std::runtime_error(fmt::format("{}: no usable write-ahead log since a failed checkpoint", dir_.string()));
  return log_->append(record);
}

LogContents check_log(const fs::path& dir, const Schema& schema, FactTable facts, uint64_t snapshot_checksum) {
  LogContents log = read_log(log_file(dir), schema);
  if (log.is_stale(snapshot_checksum) || log.records.empty()) return log;
  FactStore store(schema.codec(), std::move(facts));
  replay(store, log);
  return log;
}

Cube load_cube_with_log(const fs::path& dir, const ProgressFn& progress,
                        const std::function<void(const std::string&)>& warn, LogRecovery recovery) {
  // A writer may checkpoint while we read: retry until the snapshot we
  // loaded is still the current one after reading its log.
  for (int attempt = 0;; ++attempt) {
    const uint64_t before = store_checksum(dir);
    Cube cube = load_store(dir, progress);
    LogContents log = read_log(log_file(dir), cube.schema);
    if (store_checksum(dir) != before && attempt < 10) continue;
    if (!log.is_stale(before) && !log.records.empty()) {
      FactStore store(cube.schema.codec(), std::move(cube.facts));
      replay(store, log);
      cube.facts = store.table();
    }
    refuse_lost_records(dir, log, before, recovery);
    if (const std::string problem = describe(log, before); !problem.empty() && warn) warn(problem);
    return cube;
  }
}

}  // namespace gpuolap
