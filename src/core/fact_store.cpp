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

void FactStore::apply(WriteMode mode, const CellWrite& write) {
  if (mode == WriteMode::remove) {
    delta_[write.key] = std::nullopt;
    return;
  }
  std::vector<double> values =
      current(write.key).value_or(std::vector<double>(main_.measure_count(), kNoValue));
  for (size_t m = 0; m < values.size(); ++m) {
    if (!write.present[m]) continue;
    if (mode == WriteMode::set) {
      values[m] = write.values[m];
    } else if (has_value(write.values[m])) {
      values[m] = (has_value(values[m]) ? values[m] : 0.0) + write.values[m];
    }
  }
  const bool any = std::any_of(values.begin(), values.end(), has_value);
  delta_[write.key] = any ? std::optional(std::move(values)) : std::nullopt;
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
