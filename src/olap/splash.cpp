#include "olap/splash.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "olap/over_limit.hpp"

namespace gpuolap::olap {

namespace {

// The base elements under each element of a path, with their weights.
std::vector<std::vector<std::pair<BaseId, double>>> bases_under(const Schema& schema, const CellPath& path) {
  std::vector<std::vector<std::pair<BaseId, double>>> out;
  for (size_t d = 0; d < schema.dimension_count(); ++d) out.push_back(schema.dimension(d).base_weights(path.elements[d]));
  return out;
}

WriteBatch one_measure_batch(WriteMode mode, size_t measures, size_t measure) {
  WriteBatch b;
  b.mode = mode;
  b.present.assign(measures, false);
  b.values.resize(measures);
  if (mode != WriteMode::remove) b.present[measure] = true;
  return b;
}

std::string describe(const Schema& schema, const CellPath& path) {
  return path_names(schema, path.elements).dump();
}

// Every base cell under the path, with the product of its weights.
void for_each_base_cell(const Schema& schema, const std::vector<std::vector<std::pair<BaseId, double>>>& under,
                        const std::function<void(uint64_t, double)>& visit) {
  const size_t k = under.size();
  std::vector<size_t> at(k, 0);
  std::vector<uint32_t> ids(k);
  for (size_t d = 0; d < k; ++d)
    if (under[d].empty()) return;
  for (;;) {
    double w = 1.0;
    for (size_t d = 0; d < k; ++d) {
      ids[d] = under[d][at[d]].first;
      w *= under[d][at[d]].second;
    }
    visit(schema.codec().encode(ids), w);
    size_t d = k;
    for (;;) {
      if (d == 0) return;
      --d;
      if (++at[d] < under[d].size()) break;
      at[d] = 0;
    }
  }
}

// No cell may hold an infinity (the facts CSV refuses them too): refuses an
// add that would overflow the cell's value.
void check_add(const Schema& schema, const CellReader& reader, uint64_t key, size_t measure, double value) {
  const auto cell = reader.cell(key);
  const double current = cell && has_value((*cell)[measure]) ? (*cell)[measure] : 0.0;
  if (!std::isfinite(current + value))
    throw InputError(fmt::format("cell {}: adding {} to {} overflows a double", key_names(schema, key).dump(), value, current));
}

}  // namespace

Splash parse_splash(const std::string& name, const std::string& where) {
  if (name == "none") return Splash::none;
  if (name == "proportional" || name.empty()) return Splash::proportional;
  if (name == "add") return Splash::add;
  if (name == "set") return Splash::set;
  throw InputError(fmt::format("{}: unknown splash '{}' (expected none, proportional, add or set)", where, name));
}

void resolve_assignment(const Schema& schema, const CellReader& reader, const CellAssignment& a, uint64_t max_cells,
                        LogRecord& record) {
  const size_t measures = schema.measures().size();
  if (a.path.base) {
    WriteBatch b = one_measure_batch(a.mode, measures, a.measure);
    b.keys.push_back(a.path.key);
    if (a.mode == WriteMode::add) check_add(schema, reader, a.path.key, a.measure, a.value);
    if (a.mode != WriteMode::remove) b.values[a.measure].push_back(a.value);
    record.batches.push_back(std::move(b));
    return;
  }
  if (a.splash == Splash::none)
    throw InputError(fmt::format("cell {} is consolidated; writing it needs a splash mode (proportional, add or set)",
                                 describe(schema, a.path)));
  const auto under = bases_under(schema, a.path);
  // Dense weights per dimension, to test whether a filled cell lies under the path.
  std::vector<std::vector<double>> weight(schema.dimension_count());
  double cells = 1, weight_sum = 1;
  for (size_t d = 0; d < under.size(); ++d) {
    weight[d].assign(schema.dimension(d).base_count(), 0.0);
    double sum = 0;
    for (const auto& [b, w] : under[d]) {
      weight[d][b] = w;
      sum += w;
    }
    cells *= static_cast<double>(under[d].size());
    weight_sum *= sum;
  }
  const KeyCodec& codec = schema.codec();
  auto weight_of = [&](uint64_t key) {
    double w = 1.0;
    for (size_t d = 0; d < weight.size(); ++d) w *= weight[d][codec.decode(key, d)];
    return w;
  };
  auto under_path = [&](uint64_t key) { return weight_of(key) != 0.0; };
  auto check_size = [&](double n) {
    if (n > static_cast<double>(max_cells))
      throw OverLimit("too_many_cells",
                     fmt::format("splashing cell {} would write {:.0f} base cells; the limit is {}", describe(schema, a.path),
                                 n, max_cells));
  };

  if (a.mode == WriteMode::remove) {
    WriteBatch b = one_measure_batch(WriteMode::remove, measures, a.measure);
    reader.for_each(under_path, [&](uint64_t key, const double*) { b.keys.push_back(key); });
    check_size(static_cast<double>(b.size()));
    record.batches.push_back(std::move(b));
    return;
  }
  if (!has_value(a.value)) throw InputError("a consolidated cell cannot be cleared by set; use mode delete");
  if (a.splash == Splash::add || a.splash == Splash::set) {
    check_size(cells);
    WriteBatch b = one_measure_batch(a.splash == Splash::add ? WriteMode::add : WriteMode::set, measures, a.measure);
    for_each_base_cell(schema, under, [&](uint64_t key, double) {
      if (a.splash == Splash::add) check_add(schema, reader, key, a.measure, a.value);
      b.keys.push_back(key);
      b.values[a.measure].push_back(a.value);
    });
    record.batches.push_back(std::move(b));
    return;
  }
  // Proportional: scale the filled cells, or spread evenly over all of them.
  std::vector<std::pair<uint64_t, double>> filled;
  double current = 0;
  reader.for_each(under_path, [&](uint64_t key, const double* v) {
    if (!has_value(v[a.measure])) return;
    filled.emplace_back(key, v[a.measure]);
    current += weight_of(key) * v[a.measure];
  });
  const double target = a.mode == WriteMode::add ? current + a.value : a.value;
  WriteBatch b = one_measure_batch(WriteMode::set, measures, a.measure);
  if (current != 0.0) {
    check_size(static_cast<double>(filled.size()));
    const double factor = target / current;
    std::sort(filled.begin(), filled.end());
    for (const auto& [key, v] : filled) {
      if (!std::isfinite(v * factor))
        throw InputError(fmt::format("cell {}: splashing {} overflows a base value", describe(schema, a.path), target));
      b.keys.push_back(key);
      b.values[a.measure].push_back(v * factor);
    }
  } else {
    check_size(cells);
    if (weight_sum == 0.0 || !std::isfinite(target / weight_sum))
      throw InputError(fmt::format("cell {}: the weights of its base cells sum to 0, so no values under it can make {}",
                                   describe(schema, a.path), target));
    const double each = target / weight_sum;
    for_each_base_cell(schema, under, [&](uint64_t key, double) {
      b.keys.push_back(key);
      b.values[a.measure].push_back(each);
    });
  }
  record.batches.push_back(std::move(b));
}

}  // namespace gpuolap::olap
