#pragma once
// The unit of a write: rows written in one mode, and a record of batches
// applied together. The write-ahead log stores records; apply_record applies
// one to a fact store (as the write that logged it did, and as replay does).
#include <cstddef>
#include <cstdint>
#include <optional>
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

// Where applying a record would first leave a cell infinite — an add that
// overflows a double, which no cell may hold.
struct WriteOverflow {
  size_t batch = 0;    // in record.batches
  size_t row = 0;      // in that batch
  size_t measure = 0;  // index into the schema's measures
  uint64_t key = 0;
};
// The first overflow of `record` over `store`, its cells followed through
// every earlier row of the record; nullopt when it has none (a record
// without an add never has one). The live write path (the CLI, the server)
// and the log's replay both ask, so they refuse the same records.
std::optional<WriteOverflow> first_overflow(const FactStore& store, const LogRecord& record);

}  // namespace gpuolap
