#pragma once
// The write-ahead log of a cube store (DIR/cube.wal): every acknowledged write
// since the last snapshot, as checksummed records appended and fsynced before
// the write is acknowledged. A log names the snapshot it follows by that
// snapshot's checksum, so a log left over from before a newer snapshot is
// recognised and never applied twice. Reading stops at the first record that
// is torn or fails its checksum: what follows is reported, never applied.
//
// Records appended together before one sync (a group commit) can reach the
// disk in any order when the power is cut before the sync: a later record
// whole, an earlier one not. None of them was acknowledged, so that is a
// torn tail, not corruption. Each record says how many records were
// appended after the last sync and before it (its place in its group):
// whole records after a bad one prove it was acknowledged, and hide
// acknowledged writes, only when their group started after it.
//
// File layout (little-endian):
//   header (32 bytes): magic "GPUOLAPL", u32 version, u32 zero,
//                      u64 checksum of the snapshot it follows, u64 XXH3-64 of the 24 bytes before
//   records: u32 payload bytes, u16 kind (1 = write), u16 records appended
//            since the last sync before this one (at most 65535; always 0 in
//            a version 1 log), u64 sequence (1, 2, ...), payload,
//            u64 XXH3-64 of the record's header and payload
//   payload of a write: u32 batch count, then per batch:
//            u8 mode (0 set, 1 add, 2 delete), u32 measure count,
//            one u8 per measure (1: the batch names it), u64 row count n,
//            n u64 cell keys, then per named measure n f64 values (NaN: empty)
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuolap/schema.hpp"
#include "gpuolap/write.hpp"

namespace gpuolap {

// The version new logs are written in. Version 1 (records without their
// place in a group: read as each its own group) is read too.
inline constexpr uint32_t kLogVersion = 2;

// What reading a log found.
struct LogContents {
  bool exists = false;
  uint64_t base_checksum = 0;       // the snapshot the log follows
  std::vector<LogRecord> records;   // the valid prefix
  std::vector<uint64_t> record_starts;  // the byte offset of each
  uint64_t valid_bytes = 0;         // header and valid records
  uint64_t file_bytes = 0;
  std::string problem;              // why reading stopped before the end ("" when it did not)
  // Whole records with good checksums after the point where reading
  // stopped, when they prove that it hides acknowledged writes (a record
  // of a group that started after the bad one); 0 for a torn tail (a crash
  // mid-append, or a group commit that reached the disk in part).
  uint64_t records_after_problem = 0;

  // Whether the log follows an older snapshot than the one with
  // `snapshot_checksum` (a checkpoint cut short after its rename): its
  // records are in the snapshot already and are never replayed.
  bool is_stale(uint64_t snapshot_checksum) const {
    return exists && valid_bytes > 0 && base_checksum != snapshot_checksum;
  }
};

std::filesystem::path log_file(const std::filesystem::path& dir);
// Reads the log of a store whose schema is `schema`; a record that does not
// fit the schema counts as corrupt. A missing log reads as empty.
LogContents read_log(const std::filesystem::path& path, const Schema& schema);

// Appends records to a log; one writer at a time (the store lock).
class WriteAheadLog {
 public:
  // Starts a new, empty log following the snapshot with `base_checksum`:
  // written to a temporary file, fsynced and renamed over any old log.
  static void create(const std::filesystem::path& path, uint64_t base_checksum);

  // Opens an existing log for appending after its first `valid_bytes`
  // (anything after them is cut off); the next record gets `next_sequence`.
  WriteAheadLog(const std::filesystem::path& path, uint64_t valid_bytes, uint64_t next_sequence);
  ~WriteAheadLog();
  WriteAheadLog(const WriteAheadLog&) = delete;
  WriteAheadLog& operator=(const WriteAheadLog&) = delete;

  // Writes a record (giving it the next sequence number) without syncing.
  uint64_t append(LogRecord& record);
  // Makes every appended record durable (fdatasync): call before acknowledging.
  void sync();
  uint64_t bytes() const { return bytes_; }
  uint64_t next_sequence() const { return next_sequence_; }

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  uint64_t bytes_ = 0;
  uint64_t next_sequence_ = 1;
  uint32_t version_ = kLogVersion;  // of the file's header: a version 1 log gets version 1 records
  uint64_t unsynced_ = 0;           // records appended since the last sync
};

}  // namespace gpuolap
