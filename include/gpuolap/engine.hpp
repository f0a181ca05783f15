#pragma once
// Engines compute an area query over a fact table. They all take the same
// aggregation map and must give the same answers as cpu-serial, the oracle.
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/area_query.hpp"
#include "gpuolap/exact_sum.hpp"
#include "gpuolap/fact_table.hpp"
#include "gpuolap/gpu_options.hpp"

namespace gpuolap {

// What a target cell accumulates; every aggregate is derived from it. The
// sum is exact on the query's grid (exact_sum.hpp), so it has the same bits
// whatever order the contributions come in.
struct CellAccumulator {
  ExactSum sum;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  uint64_t count = 0;

  // Adds the contribution value × weight.
  void add(double value, double weight, const SumGrid& g) {
    sum.add_product(value, weight, g);
    const double contribution = weight * value;
    if (contribution < min) min = contribution;
    if (contribution > max) max = contribution;
    ++count;
  }
  // Adds a value of weight 1.
  void add(double value, const SumGrid& g) {
    sum.add(value, g);
    if (value < min) min = value;
    if (value > max) max = value;
    ++count;
  }
  void merge(const CellAccumulator& o) {
    sum.merge(o.sum);
    if (o.min < min) min = o.min;
    if (o.max > max) max = o.max;
    count += o.count;
  }
  double finish(Aggregate a, const SumGrid& g) const;
};

// Named stage times of the last run, in milliseconds, in pipeline order.
using StageTimes = std::vector<std::pair<std::string, double>>;

class Engine {
 public:
  virtual ~Engine() = default;
  virtual std::string name() const = 0;
  virtual AreaResult run(const FactTable& facts, const AggregationMap& map,
                         const AreaQuery& query) = 0;
  // What the last run spent where, and what it chose (engines with stages).
  // Timing the stages costs time too (on a GPU, two events recorded on the
  // stream per stage and read back after it), so it is off until asked
  // for; time_stages returns whether this engine has stages to time.
  virtual bool time_stages(bool /*on*/) { return false; }
  virtual StageTimes stages() const { return {}; }
  virtual std::string last_plan() const { return {}; }
  // Updates of the target store (atomic adds, after warp pre-aggregation;
  // thesis table 5.2). Counting costs time, so it is off until asked for;
  // count_target_updates returns whether this engine counts them.
  virtual bool count_target_updates(bool /*on*/) { return false; }
  virtual uint64_t last_target_updates() const { return 0; }
  // Why this engine cannot answer this map over these facts, or "" if it
  // can: a GPU engine's limits, which `auto` answers from the CPU instead.
  virtual std::string limit(const FactTable& /*facts*/, const AggregationMap& /*map*/) const { return {}; }
};

// Engine names a user can ask for, in the order --help lists them.
const std::vector<std::string>& engine_names();

struct EngineChoice {
  std::unique_ptr<Engine> engine;
  std::string reason;  // why `auto` chose it (empty when asked for by name)
};

// Creates the named engine; `auto` picks the best one available for the
// table's size. An engine this build or machine lacks is an InputError.
EngineChoice make_engine(const std::string& name, size_t fact_count, const GpuOptions& gpu = {});

}  // namespace gpuolap
