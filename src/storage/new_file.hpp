#pragma once
// Files the store writes are created afresh: whatever the directory holds
// under the name (an old file, or a link someone planted there) is removed
// first, and the file is created exclusively without following a link, so
// that recovering or saving a store never writes through a link into a
// file elsewhere.
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>

namespace gpuolap {

// The new file open for writing, or -1 with errno set.
inline int create_new_file(const std::filesystem::path& path) {
  ::unlink(path.c_str());  // absent is fine; a link is removed, not its target
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

}  // namespace gpuolap
