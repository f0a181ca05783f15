#pragma once
// Writes resolved ahead of the fact store. A write to a served cube is
// turned into base-cell writes by reading current values (a splash reads
// the cells under it), and those reads must see the writes resolved before
// it in the same group commit or bulk write, which the store does not hold
// yet. An overlay holds their effect, by the store's own rule (write_cell),
// and a CellReader reads a snapshot through it.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "gpuolap/fact_table.hpp"
#include "gpuolap/write.hpp"

namespace gpuolap::olap {

// Cells a write has touched: key -> values (NaN where empty), or nullopt
// when deleted.
using Overlay = std::map<uint64_t, std::optional<std::vector<double>>>;

// The facts a write is resolved against: a snapshot with the writes resolved
// before it laid over it (the group's, and a bulk write's earlier cells).
class CellReader {
 public:
  CellReader(const FactTable& table, const Overlay& overlay) : table_(&table), overlay_(overlay) {}
  // This reader with `top` laid over it.
  CellReader layered(const Overlay& top) const { return CellReader(*this, top); }
  // The values of a base cell (NaN where empty), or nullopt when not filled.
  std::optional<std::vector<double>> cell(uint64_t key) const;
  // Visits every filled cell (key, values) for which `wanted(key)` holds.
  void for_each(const std::function<bool(uint64_t)>& wanted,
                const std::function<void(uint64_t, const double*)>& visit) const;

 private:
  CellReader(const CellReader& below, const Overlay& top) : below_(&below), overlay_(top) {}
  const FactTable* table_ = nullptr;  // the bottom layer, or
  const CellReader* below_ = nullptr;
  const Overlay& overlay_;
};

// Records in `overlay` what a record does to the cells it touches, as
// FactStore::apply does it; `reader` must read through `overlay`.
void lay_over(Overlay& overlay, const CellReader& reader, const LogRecord& record, size_t measures);

}  // namespace gpuolap::olap
