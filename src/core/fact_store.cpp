#include "gpuolap/fact_store.hpp"

#include <algorithm>

namespace gpuolap {

namespace {
// The store's first base: the table under an id of its own. A copy of it
// elsewhere (another store's) must not pass for the same base, or a device
// copy patched with one store's changes would be taken for the other's.
std::shared_ptr<const FactTable> first_base(FactTable table) {
  table.renew_id();
  return std::make_shared<const FactTable>(std::move(table));
}
}  // namespace

FactStore::FactStore(KeyCodec codec, FactTable table)
    : codec_(std::move(codec)), main_(first_base(std::move(table))), base_id_(main_->id()) {}

std::optional<std::vector<double>> FactStore::current(uint64_t key) const {
  if (auto it = delta_.find(key); it != delta_.end()) return it->second;
  const size_t i = main_->find(key);
  if (i == main_->size()) return std::nullopt;
  std::vector<double> values(main_->measure_count());
  for (size_t m = 0; m < values.size(); ++m) values[m] = main_->values(m)[i];
  return values;
}

size_t FactStore::rebase_threshold() const {
  // Patching costs per changed cell what copying costs per cell, and more
  // (a search, a scatter): past a thirty-second of the table, copy it anew.
  return std::max<size_t>(4096, main_->size() / 32);
}

void FactStore::install(FactTable table, const std::vector<Written>& written) {
  ++generation_;
  if (since_base_.size() + written.size() > rebase_threshold()) {
    since_base_.clear();
    base_id_ = table.id();
    main_ = std::make_shared<const FactTable>(std::move(table));
    return;
  }
  const size_t measures = table.measure_count();
  // A cell added and then deleted stays recorded: a copy that holds it
  // must learn of the deletion.
  for (const Written& w : written)
    since_base_[w.key] = Change{generation_, w.values.value_or(std::vector<double>(measures, kNoValue))};
  auto changes = std::make_shared<TableChanges>();
  changes->base_id = base_id_;
  changes->generation = generation_;
  changes->values.resize(measures);
  for (const auto& [key, c] : since_base_) {
    changes->keys.push_back(key);
    changes->generations.push_back(c.generation);
    for (size_t m = 0; m < measures; ++m) changes->values[m].push_back(c.values[m]);
  }
  table.set_changes(std::move(changes));
  main_ = std::make_shared<const FactTable>(std::move(table));
}

void FactStore::apply(WriteMode mode, const CellWrite& write) {
  std::vector<double> cell = current(write.key).value_or(std::vector<double>(main_->measure_count(), kNoValue));
  const bool keep = write_cell(mode, cell, write.values, write.present);
  delta_[write.key] = keep ? std::optional(std::move(cell)) : std::nullopt;
}

void FactStore::apply(WriteMode mode, std::span<const uint64_t> keys, const std::vector<std::vector<double>>& values,
                      const std::vector<bool>& present) {
  merge();  // single writes first: they came before
  std::vector<size_t> order(keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });

  const FactTable& main = *main_;
  const size_t measures = main.measure_count();
  const auto main_keys = main.keys();
  std::vector<Written> written;
  std::vector<uint64_t> out_keys;
  std::vector<std::vector<double>> out_values(measures);
  out_keys.reserve(main_keys.size() + keys.size());
  auto emit = [&](uint64_t key, const std::vector<double>& cell) {
    out_keys.push_back(key);
    for (size_t m = 0; m < measures; ++m) out_values[m].push_back(cell[m]);
  };
  std::vector<double> cell(measures);
  std::vector<double> row(measures, kNoValue);
  size_t at = 0;  // next main cell
  for (size_t g = 0; g < order.size();) {
    const uint64_t key = keys[order[g]];
    while (at < main_keys.size() && main_keys[at] < key) {
      for (size_t m = 0; m < measures; ++m) cell[m] = main.values(m)[at];
      emit(main_keys[at++], cell);
    }
    bool keep = at < main_keys.size() && main_keys[at] == key;
    for (size_t m = 0; m < measures; ++m) cell[m] = keep ? main.values(m)[at] : kNoValue;
    if (keep) ++at;
    // The rows of this cell, in row order.
    for (; g < order.size() && keys[order[g]] == key; ++g) {
      for (size_t m = 0; m < measures; ++m)
        if (present[m]) row[m] = values[m][order[g]];
      keep = write_cell(mode, cell, row, present);
    }
    if (keep) emit(key, cell);
    written.push_back({key, keep ? std::optional(cell) : std::nullopt});
  }
  for (; at < main_keys.size(); ++at) {
    for (size_t m = 0; m < measures; ++m) cell[m] = main.values(m)[at];
    emit(main_keys[at], cell);
  }
  install(FactTable(codec_, std::move(out_keys), std::move(out_values), main.page_size()), written);
}

void FactStore::merge() {
  if (delta_.empty()) return;
  const FactTable& main = *main_;
  const size_t measures = main.measure_count();
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(measures);
  std::vector<Written> written;
  keys.reserve(main.size() + delta_.size());
  for (auto& column : values) column.reserve(main.size() + delta_.size());
  written.reserve(delta_.size());

  auto take_main = [&](size_t i) {
    keys.push_back(main.keys()[i]);
    for (size_t m = 0; m < measures; ++m) values[m].push_back(main.values(m)[i]);
  };
  size_t i = 0;
  const auto main_keys = main.keys();
  for (const auto& [key, state] : delta_) {
    while (i < main_keys.size() && main_keys[i] < key) take_main(i++);
    if (i < main_keys.size() && main_keys[i] == key) ++i;  // replaced or deleted
    written.push_back({key, state});
    if (!state) continue;
    keys.push_back(key);
    for (size_t m = 0; m < measures; ++m) values[m].push_back((*state)[m]);
  }
  while (i < main_keys.size()) take_main(i++);

  const size_t page_size = main.page_size();
  delta_.clear();
  install(FactTable(codec_, std::move(keys), std::move(values), page_size), written);
}

std::shared_ptr<const FactTable> FactStore::snapshot() {
  merge();
  return main_;
}

}  // namespace gpuolap
