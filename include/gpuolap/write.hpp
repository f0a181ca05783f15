#pragma once
// The unit of a write: rows written in one mode, and a record of batches
// applied together. The write-ahead log stores records; apply_record applies
// one to a fact store (as the write that logged it did, and as replay does).
#include <cstdint>
#include <vector>

#include "gpuolap/fact_store.hpp"

namespace gpuolap {

// Rows written in one mode, applied in row order (FactStore::apply).
// values[m] is empty for a measure the batch does not name.
struct WriteBatch {
  WriteMode mode = WriteMode::set;
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values;
  std::vector<bool> present;

  size_t size() const { return keys.size(); }
};

// One acknowledged write: its batches are applied in order, all or none.
struct LogRecord {
  uint64_t sequence = 0;
  std::vector<WriteBatch> batches;
};

// Applies a record's batches to a store, as the write that logged it did.
void apply_record(FactStore& store, const LogRecord& record);

}  // namespace gpuolap
