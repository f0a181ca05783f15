#pragma once
// A model of what a file system keeps through a power cut, fed the events
// of a trace (trace_format.hpp) in order. It holds two views of the
// watched tree: what the process saw (every operation applied: the page
// cache) and what is durable. Following POSIX, not one file system's
// habits:
//   - a file's bytes and size are durable after fsync or fdatasync of it;
//   - a name (a create, rename, unlink, link, mkdir, rmdir) is durable
//     after fsync of the directory that holds it, and not before, even when
//     the file itself was synced;
//   - sync() makes everything durable.
// crash_states() lists the trees a cut at this point may leave: the names
// not yet durable applied in trace order up to each point (none, some,
// all), each with the files' unsynced bytes lost or kept, and with all
// names applied, the last unsynced write of each file torn in its middle,
// or every unsynced write reaching the disk as zeros (the size grew, the
// data did not), or the writes reaching it out of order (the first
// unsynced write of each file zeros, the later ones there: a disk's write
// cache need not keep the order of writes nobody flushed). Not every subset: a deterministic set of cuts that holds
// each way an unsynced operation can be lost.
#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "trace_format.hpp"

namespace gpuolap::power_loss {

struct Event {
  EventKind kind;
  int fd = -1;
  int64_t offset = 0;
  int flags = 0;
  std::string path, path2, data;
};

// The events of a trace file, in order; throws on a truncated trace.
std::vector<Event> read_trace(const std::filesystem::path& trace);

// A tree of files below the watched directory: relative path -> entry.
struct Entry {
  bool directory = false;
  std::string contents;
  bool operator==(const Entry&) const = default;
};
using Tree = std::map<std::string, Entry>;

struct CrashState {
  std::string name;  // which cut, in words
  Tree tree;
};

class DiskModel {
 public:
  // `root`: the watched directory, which exists (durably) before the trace
  // starts, holding `initial`, durable too.
  explicit DiskModel(std::string root, const Tree& initial = {});

  // Applies one event; throws std::runtime_error for one the model cannot
  // follow (a file it never saw created: the trace missed an operation).
  void apply(const Event& event);
  // Whether the event can change what a cut leaves on the disk.
  static bool changes_disk(const Event& event);

  // The tree as the process sees it now.
  Tree current() const;
  std::vector<CrashState> crash_states() const;

 private:
  struct DataOp {
    bool truncate = false;
    uint64_t offset = 0;  // a write's offset, or a truncate's new size
    std::string bytes;
  };
  struct Inode {
    bool directory = false;
    std::string durable;  // contents as of the last sync
    std::string current;
    std::vector<DataOp> unsynced;
  };
  enum class NameKind { add, remove, rename };
  struct NameOp {
    NameKind kind;
    std::string path, path2;  // relative; path2: a rename's target
    int inode = -1;           // of add
    bool from_synced = false;  // the directory of path was fsynced after it
    bool to_synced = false;    // the directory of path2 (of path, but for a rename)
    bool durable() const { return from_synced && to_synced; }
  };
  using Names = std::map<std::string, int>;  // relative path -> inode
  struct OpenFile {
    int inode;
    std::string path;  // as opened (relative)
  };
  enum class DataView { durable, current, torn, zeros, reordered };

  std::string relative(const std::string& absolute) const;
  int new_inode(bool directory);
  void add_name_op(NameOp op);
  static void apply_name_op(Names& names, const NameOp& op);
  void sync_directory(const std::string& dir);
  void fold_durable_prefix();
  std::string contents(const Inode& inode, DataView view) const;
  Tree tree(const Names& names, DataView view) const;

  std::string root_;
  std::vector<Inode> inodes_;
  Names names_;                  // as the process sees them
  Names durable_base_;           // the names after the leading run of durable operations
  std::deque<NameOp> pending_;  // name operations after that run, durable or not
  std::map<int, OpenFile> open_;
};

}  // namespace gpuolap::power_loss
