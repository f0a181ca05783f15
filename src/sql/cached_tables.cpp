#include "sql/cached_tables.hpp"

namespace gpuolap::sql {

std::shared_ptr<const table::Table> CachedTables::load(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = loaded_.find(name);
  if (it != loaded_.end()) return it->second;
  auto table = db_.load(name);
  loaded_.emplace(name, table);
  return table;
}

}  // namespace gpuolap::sql
