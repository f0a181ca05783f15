// The few most recently used entries of something costly to make from a
// table (its cube coded, its columns on the GPU, its columns' facts), so
// that a query repeated over tables held in memory (the server, `sql
// --repeat`) finds them made. An entry keeps what it was made from alive
// (its table), so that its key cannot come to mean another table.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>

namespace gpuolap::sql {

template <class Entry>
class RecentCache {
 public:
  explicit RecentCache(std::size_t capacity) : capacity_(capacity) {}

  // The entry `matches` accepts, most recently used first; else make()'s,
  // which then becomes the most recent. make() runs under the lock: two
  // queries of one table make its entry once.
  template <class Matches, class Make>
  std::shared_ptr<const Entry> get(Matches&& matches, Make&& make) {
    std::lock_guard lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (matches(**it)) {
        entries_.splice(entries_.begin(), entries_, it);
        return entries_.front();
      }
    std::shared_ptr<const Entry> made = make();
    entries_.push_front(made);
    if (entries_.size() > capacity_) entries_.pop_back();
    return made;
  }

 private:
  std::size_t capacity_;
  std::mutex mutex_;
  std::list<std::shared_ptr<const Entry>> entries_;
};

}  // namespace gpuolap::sql
