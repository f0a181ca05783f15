#include "gpuolap/fact_store.hpp"

#include <algorithm>

namespace gpuolap {

FactStore::FactStore(KeyCodec codec, FactTable table)
    : codec_(std::move(codec)), main_(std::move(table)) {}

std::optional<std::vector<double>> FactStore::current(uint64_t key) const {
  if (auto it = delta_.find(key); it != delta_.end()) return it->second;
  const size_t i = main_.find(key);
  if (i == main_.size()) return std::nullopt;
  std::vector<double> values(main_.measure_count());
  for (size_t m = 0; m < values.size(); ++m) values[m] = main_.values(m)[i];
  return values;
}

namespace {

// Applies one row (value_of(m) for the measures it names) to a cell's
// values, NaN meaning absent; returns whether the cell keeps any value.
template <class ValueOf>
bool write_cell(WriteMode mode, std::vector<double>& cell, const std::vector<bool>& present, ValueOf value_of) {
  if (mode == WriteMode::remove) return false;
  for (size_t m = 0; m < cell.size(); ++m) {
    if (!present[m]) continue;
    const double v = value_of(m);
    if (mode == WriteMode::set) {
      cell[m] = v;
    } else if (has_value(v)) {
      cell[m] = (has_value(cell[m]) ? cell[m] : 0.0) + v;
    }
  }
  return std::any_of(cell.begin(), cell.end(), has_value);
}

}  // namespace

void FactStore::apply(WriteMode mode, const CellWrite& write) {
  std::vector<double> cell = current(write.key).value_or(std::vector<double>(main_.measure_count(), kNoValue));
  const bool keep = write_cell(mode, cell, write.present, [&](size_t m) { return write.values[m]; });
  delta_[write.key] = keep ? std::optional(std::move(cell)) : std::nullopt;
}

void FactStore::apply(WriteMode mode, std::span<const uint64_t> keys, const std::vector<std::vector<double>>& values,
                      const std::vector<bool>& present) {
  merge();  // single writes first: they came before
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });

  const size_t measures = main_.measure_count();
  const auto main_keys = main_.keys();
  std::vector<uint64_t> out_keys;
  std::vector<std::vector<double>> out_values(measures);
  out_keys.reserve(main_keys.size() + keys.size());
  auto emit = [&](uint64_t key, const std::vector<double>& cell) {
    out_keys.push_back(key);
    for (size_t m = 0; m < measures; ++m) out_values[m].push_back(cell[m]);
  };
  std::vector<double> cell(measures);
  size_t at = 0;  // next main cell
  for (size_t g = 0; g < order.size();) {
    const uint64_t key = keys[order[g]];
    while (at < main_keys.size() && main_keys[at] < key) {
      for (size_t m = 0; m < measures; ++m) cell[m] = main_.values(m)[at];
      emit(main_keys[at++], cell);
    }
    bool keep = at < main_keys.size() && main_keys[at] == key;
    for (size_t m = 0; m < measures; ++m) cell[m] = keep ? main_.values(m)[at] : kNoValue;
    if (keep) ++at;
    // The rows of this cell, in row order.
    for (; g < order.size() && keys[order[g]] == key; ++g) {
      keep = write_cell(mode, cell, present, [&](size_t m) { return values[m][order[g]]; });
      if (!keep) std::fill(cell.begin(), cell.end(), kNoValue);  // deleted, or emptied
    }
    if (keep) emit(key, cell);
  }
  for (; at < main_keys.size(); ++at) {
    for (size_t m = 0; m < measures; ++m) cell[m] = main_.values(m)[at];
    emit(main_keys[at], cell);
  }
  main_ = FactTable(codec_, std::move(out_keys), std::move(out_values), main_.page_size());
}

void FactStore::merge() {
  if (delta_.empty()) return;
  const size_t measures = main_.measure_count();
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(measures);
  keys.reserve(main_.size() + delta_.size());
  for (auto& column : values) column.reserve(main_.size() + delta_.size());

  auto take_main = [&](size_t i) {
    keys.push_back(main_.keys()[i]);
    for (size_t m = 0; m < measures; ++m) values[m].push_back(main_.values(m)[i]);
  };
  size_t i = 0;
  const auto main_keys = main_.keys();
  for (const auto& [key, state] : delta_) {
    while (i < main_keys.size() && main_keys[i] < key) take_main(i++);
    if (i < main_keys.size() && main_keys[i] == key) ++i;  // replaced or deleted
    if (!state) continue;
    keys.push_back(key);
    for (size_t m = 0; m < measures; ++m) values[m].push_back((*state)[m]);
  }
  while (i < main_keys.size()) take_main(i++);

  main_ = FactTable(codec_, std::move(keys), std::move(values), main_.page_size());
  delta_.clear();
}

const FactTable& FactStore::table() {
  merge();
  return main_;
}

}  // namespace gpuolap
