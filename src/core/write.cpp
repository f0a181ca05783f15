#include "gpuolap/write.hpp"

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

}  // namespace gpuolap
