#include "sql/cached_tables.hpp"

namespace gpuolap::sql {

std::shared_ptr<const table::Table> CachedTables::load(const std::string& name) const {
  // Stamped before reading: a file replaced while it is read is read again
  // by the next query, never kept stale.
  const std::filesystem::path path = db_.table_path(name);
  std::error_code ec;
  const auto modified = std::filesystem::last_write_time(path, ec);
  const auto bytes = ec ? 0 : std::filesystem::file_size(path, ec);
  {
    std::lock_guard lock(mutex_);
    const auto it = loaded_.find(name);
    if (!ec && it != loaded_.end() && it->second.modified == modified && it->second.bytes == bytes)
      return it->second.table;
  }
  // Read outside the lock: a large table must not hold up the queries of others.
  std::shared_ptr<const table::Table> table = db_.load(name);
  if (!ec) {
    std::lock_guard lock(mutex_);
    loaded_[name] = Loaded{modified, bytes, table};
  }
  return table;
}

}  // namespace gpuolap::sql
