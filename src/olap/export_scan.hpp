#pragma once
// Exporting the cells of an area a page at a time (Palo's cell/export),
// either the filled base cells under the area, in key order, or the area's
// non-empty cells aggregated, in area order. A page holds at most a block
// of cells whose value meets a condition, and names the cell the next page
// resumes after: a client pages through a large cube without holding it.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/area_query.hpp"
#include "gpuolap/fact_table.hpp"
#include "gpuolap/schema.hpp"
#include "olap/cell_paths.hpp"
#include "olap/value_condition.hpp"

namespace gpuolap::olap {

// Runs an area query (an engine, or a service's).
using AreaRunner = std::function<AreaResult(const FactTable&, const AggregationMap&, const AreaQuery&)>;

struct ExportedCell {
  std::vector<ElementId> path;  // one element per dimension
  double value;                 // the base cell's value, or the aggregate
};

struct ExportPage {
  std::vector<ExportedCell> cells;
  std::optional<CellPath> next;  // the page's last cell, to resume after; nullopt when the scan is done
  uint64_t scanned = 0;          // cells looked at up to the end of this page
  uint64_t total = 0;            // cells to look at in all
  bool done() const { return !next; }
};

class ExportScan {
 public:
  // Base cells (`base_only`): the filled base cells under the area, of the
  // query's measure. Aggregated: runs the query here with `run`; an area
  // over `max_cells` target cells is refused (OverLimit), and so is one
  // that lists an element twice (a page resumes after a path, which must
  // name one cell). `facts` must outlive the scan; errors name `where`.
  ExportScan(const Schema& schema, const FactTable& facts, AreaQuery query, bool base_only, uint64_t max_cells,
             const AreaRunner& run, std::string where);

  // The page after the cell `after` (from the start when nullopt): the
  // next `block_size` (at least 1) cells whose value meets `condition`.
  // Throws InputError for a path it cannot resume after.
  ExportPage page(const std::optional<CellPath>& after, uint64_t block_size, const ValueCondition& condition) const;

 private:
  void prepare_base_cells();
  void run_aggregation(uint64_t max_cells, const AreaRunner& run);
  ExportPage base_page(const std::optional<CellPath>& after, uint64_t block_size, const ValueCondition& condition) const;
  ExportPage aggregated_page(const std::optional<CellPath>& after, uint64_t block_size,
                             const ValueCondition& condition) const;

  const Schema& schema_;
  const FactTable& facts_;
  AreaQuery query_;
  bool base_only_;
  std::string where_;
  std::vector<std::vector<bool>> allowed_;  // base cells: per dimension, the base ids under the area
  std::optional<AggregationMap> map_;       // aggregated: the query's map and answer
  AreaResult result_;
};

}  // namespace gpuolap::olap
