#pragma once
// After a rename or a new file, the directory entry itself must reach the
// disk for the change to survive a crash: fsync the directory. Best effort:
// a directory that cannot be opened is left as it is.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <vector>

namespace gpuolap {

inline void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

// Creates `dir` and whatever parents it lacks, and syncs each new
// directory's entry in its parent: a store created in a new directory must
// not vanish with it in a power cut after its creation returned. Whether
// `dir` was created; `ec` says why not when it could not be.
inline bool create_directories_durably(const std::filesystem::path& dir, std::error_code& ec) {
  std::vector<std::filesystem::path> created;  // innermost first
  for (std::filesystem::path p = dir; !p.empty() && !std::filesystem::exists(p); p = p.parent_path())
    created.push_back(p);
  std::filesystem::create_directories(dir, ec);
  if (ec) return false;
  for (const std::filesystem::path& d : created)
    fsync_directory(d.has_parent_path() ? d.parent_path() : std::filesystem::path("."));
  return !created.empty();
}

}  // namespace gpuolap
