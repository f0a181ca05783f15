#pragma once
// The lock of a cube store: an exclusive flock on DIR/lock. Whoever writes a
// store holds it from reading the store to saving it (create, generate into
// a store, a durable cube while it is open), so concurrent writers neither
// lose updates nor tear the file. Closing gives it up, as does the end of
// the process that holds it.
#include <filesystem>
#include <functional>

namespace gpuolap {

class StoreLock {
 public:
  // Creates the directory if needed (`created()` says whether it did) and
  // waits for the lock. `on_busy` is called (once) when another process
  // holds it, before waiting; it may throw to give up instead.
  explicit StoreLock(const std::filesystem::path& dir, const std::function<void()>& on_busy = {});
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;
  bool created() const { return created_; }

 private:
  int fd_ = -1;
  bool created_ = false;
};

}  // namespace gpuolap
