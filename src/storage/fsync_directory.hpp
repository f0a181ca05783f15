#pragma once
// After a rename or a new file, the directory entry itself must reach the
// disk for the change to survive a crash: fsync the directory. Best effort:
// a directory that cannot be opened is left as it is.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

namespace gpuolap {

inline void fsync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

}  // namespace gpuolap
