#include "gpuolap/write.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "gpuolap/cell_write.hpp"

namespace gpuolap {

namespace {
// Batches this small go through the store's per-cell delta; larger ones are
// merged with the table in one pass. Both apply rows in order, alike.
constexpr size_t kRowByRowBelow = 4096;
}  // namespace

void apply_record(FactStore& store, const LogRecord& record) {
  for (const WriteBatch& b : record.batches) {
    if (b.size() >= kRowByRowBelow) {
      std::vector<std::vector<double>> values(b.present.size());
      for (size_t m = 0; m < values.size(); ++m)
        values[m] = b.present[m] ? b.values[m] : std::vector<double>(b.size(), kNoValue);
      store.apply(b.mode, b.keys, values, b.present);
      continue;
    }
    CellWrite w{0, std::vector<double>(b.present.size(), kNoValue), b.present};
    for (size_t i = 0; i < b.size(); ++i) {
      w.key = b.keys[i];
      for (size_t m = 0; m < b.present.size(); ++m)
        if (b.present[m]) w.values[m] = b.values[m][i];
      store.apply(b.mode, w);
    }
  }
}

std::optional<WriteOverflow> first_overflow(const FactStore& store, const LogRecord& record) {
  if (std::none_of(record.batches.begin(), record.batches.end(),
                   [](const WriteBatch& b) { return b.mode == WriteMode::add; }))
    return std::nullopt;
  std::unordered_map<uint64_t, std::vector<double>> cells;  // as the record's earlier rows leave them
  for (size_t bi = 0; bi < record.batches.size(); ++bi) {
    const WriteBatch& b = record.batches[bi];
    std::vector<double> row(b.present.size(), kNoValue);
    for (size_t i = 0; i < b.size(); ++i) {
      const uint64_t key = b.keys[i];
      auto it = cells.find(key);
      if (it == cells.end())
        it = cells.emplace(key, store.current(key).value_or(std::vector<double>(b.present.size(), kNoValue))).first;
      for (size_t m = 0; m < row.size(); ++m)
        if (b.present[m]) row[m] = b.values[m][i];
      write_cell(b.mode, it->second, row, b.present);
      for (size_t m = 0; m < it->second.size(); ++m)
        if (std::isinf(it->second[m])) return WriteOverflow{bi, i, m, key};
    }
  }
  return std::nullopt;
}

}  // namespace gpuolap
