#pragma once
// A whole file written so that a crash leaves the old one or the new one,
// never a mix: the bytes go to a temporary file beside it, are fsynced, and
// the temporary file is renamed over the path; the directory is synced so
// that the rename survives a power cut. Used by the files that are written
// whole (a placement, an H-tree snapshot and a new log's header).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "gpuolap/error.hpp"
#include "storage/fsync_directory.hpp"

namespace gpuolap {

// A failure is an InputError naming the path and the system's reason; the
// temporary file is removed and the old file left as it was.
inline void write_file_atomically(const std::filesystem::path& path, const char* data, std::size_t size) {
  std::string temp = path.string() + ".tmp-XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) throw InputError(fmt::format("{}: cannot create: {}", temp, std::strerror(errno)));
  ::fchmod(fd, 0644);
  std::size_t done = 0;
  while (done < size) {
    const ssize_t w = ::write(fd, data + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(temp.c_str());
      throw InputError(fmt::format("{}: cannot write: {}", temp, std::strerror(e)));
    }
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(temp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(temp.c_str());
    throw InputError(fmt::format("{}: cannot store: {}", path.string(), std::strerror(e)));
  }
  fsync_directory(path.has_parent_path() ? path.parent_path() : std::filesystem::path("."));
}

}  // namespace gpuolap
