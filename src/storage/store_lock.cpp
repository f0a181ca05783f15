#include "gpuolap/store_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fsync_directory.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap {

namespace fs = std::filesystem;

StoreLock::StoreLock(const fs::path& dir, const std::function<void()>& on_busy) {
  std::error_code ec;
  created_ = create_directories_durably(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create directory: {}", dir.string(), ec.message()));
  fd_ = ::open((dir / "lock").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InputError(fmt::format("{}: cannot open the lock file: {}", dir.string(), std::strerror(errno)));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  try {
    if (errno != EWOULDBLOCK) throw InputError(fmt::format("{}: cannot lock the store: {}", dir.string(), std::strerror(errno)));
    if (on_busy) on_busy();
    while (::flock(fd_, LOCK_EX) != 0)
      if (errno != EINTR) throw InputError(fmt::format("{}: cannot lock the store: {}", dir.string(), std::strerror(errno)));
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

StoreLock::~StoreLock() { ::close(fd_); }  // closing releases the lock

}  // namespace gpuolap
