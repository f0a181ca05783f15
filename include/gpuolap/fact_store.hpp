#pragma once
// The facts of a cube under writes. Writes (set / add / delete of base cells)
// go into a delta that overlays the sorted main table: for every touched cell
// the delta holds its new state. Reading through table() or snapshot() merges
// a pending delta first, so a read always sees every acknowledged write.
//
// Merged tables are immutable and shared: a snapshot stays valid, and
// unchanged, while later writes make new tables. Each merged table records
// its changes since a base table (TableChanges), so that a device copy of the
// base is patched rather than copied again; once the changes outgrow a
// fraction of the table, the next merged table becomes the new base.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "gpuolap/cell_write.hpp"
#include "gpuolap/fact_table.hpp"
#include "gpuolap/key_codec.hpp"

namespace gpuolap {

class FactStore {
 public:
  FactStore(KeyCodec codec, FactTable table);

  // Writes one row as write_cell (cell_write.hpp) says.
  void apply(WriteMode mode, const CellWrite& write);
  // The same for many rows at once, in row order: the rows are sorted and
  // merged with the main table in one pass, where the per-cell delta would
  // cost a tree node per row. values[m][i] and present[m] as in CellWrite.
  void apply(WriteMode mode, std::span<const uint64_t> keys, const std::vector<std::vector<double>>& values,
             const std::vector<bool>& present);

  size_t pending_writes() const { return delta_.size(); }
  // Folds the delta into a new sorted main table.
  void merge();
  // The merged facts (merges a pending delta first).
  const FactTable& table() { return *snapshot(); }
  // The same, shared: valid and unchanged however the store changes later.
  std::shared_ptr<const FactTable> snapshot();
  const KeyCodec& codec() const { return codec_; }

  // Changes since the base after which the next merge starts a new base.
  size_t rebase_threshold() const;

  // The values of a base cell with every write applied (NaN where empty),
  // or nullopt when it is not filled.
  std::optional<std::vector<double>> current(uint64_t key) const;

 private:
  // Makes `table` the main table, recording the cells `written` (their new
  // values, nullopt when deleted).
  struct Written {
    uint64_t key;
    std::optional<std::vector<double>> values;
  };
  void install(FactTable table, const std::vector<Written>& written);

  struct Change {
    uint64_t generation;
    std::vector<double> values;  // all NaN: deleted
  };

  KeyCodec codec_;
  std::shared_ptr<const FactTable> main_;
  uint64_t base_id_ = 0;
  uint64_t generation_ = 0;
  std::map<uint64_t, Change> since_base_;
  // nullopt: the cell is deleted.
  std::map<uint64_t, std::optional<std::vector<double>>> delta_;
};

}  // namespace gpuolap
