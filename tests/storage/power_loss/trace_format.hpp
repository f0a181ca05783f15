#pragma once
// The trace the recording shim (trace_shim.cpp) writes and the power-loss
// check reads: one event per file operation that changes a watched
// directory tree or makes it durable, in the order the process made them.
//
// Each event is an EventHeader, then path_bytes of path, path2_bytes of a
// second path (a rename's or link's target), then data_bytes of data (the
// bytes a write wrote, or the text of a mark). Paths are absolute.
#include <cstdint>

namespace gpuolap::power_loss {

enum class EventKind : uint32_t {
  open = 1,       // fd, path, flags (O_CREAT, O_TRUNC, O_EXCL, O_APPEND, O_DIRECTORY as given)
  close = 2,      // fd
  write = 3,      // fd, offset (-1: appended at the end), data
  truncate = 4,   // fd, offset = the new size
  fsync = 5,      // fd: the file's data and metadata are durable (a directory: its entries)
  fdatasync = 6,  // fd: the file's data is durable
  rename = 7,     // path -> path2
  unlink = 8,     // path
  mkdir = 9,      // path
  rmdir = 10,     // path
  link = 11,      // path -> path2 (a new name for the same file)
  sync_all = 12,  // sync() or syncfs(): everything is durable
  mark = 13,      // data: a line the workload wrote to its marks file (an acknowledgment)
};

struct EventHeader {
  EventKind kind;
  int32_t fd;
  int64_t offset;
  int32_t flags;
  uint32_t path_bytes;
  uint32_t path2_bytes;
  uint32_t reserved;
  uint64_t data_bytes;
};
static_assert(sizeof(EventHeader) == 40);

// The environment the shim reads.
inline constexpr const char* kWatchedDirVariable = "POWER_LOSS_WATCH";  // the tree to record
inline constexpr const char* kTraceVariable = "POWER_LOSS_TRACE";       // where the trace goes
inline constexpr const char* kMarksVariable = "POWER_LOSS_MARKS";       // writes to this file are marks
// Syncs of one class the shim performs but leaves out of the trace, so that
// the check sees a store without them: "directory-fsync", "file-fsync"
// (fsync of a file) or "fdatasync" (how the log syncs its appends). The
// check's own test uses it to show that a missing sync is caught.
inline constexpr const char* kHideVariable = "POWER_LOSS_HIDE";

}  // namespace gpuolap::power_loss
