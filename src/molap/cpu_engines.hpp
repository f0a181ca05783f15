#pragma once
// The CPU engines. cpu-serial is the oracle: the source-based algorithm of
// thesis §4.1 in its simplest correct form. cpu-parallel spreads the same
// work over all cores with TBB.
#include <cstdint>
#include <string>
#include <vector>

#include "gpuolap/engine.hpp"

namespace gpuolap {

class CpuSerialEngine final : public Engine {
 public:
  std::string name() const override { return "cpu-serial"; }
  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) override;
};

class CpuParallelEngine final : public Engine {
 public:
  // Target areas up to this many cells are accumulated in a dense array per
  // thread; larger ones in a hash map per thread.
  static constexpr uint64_t kDenseTargetLimit = uint64_t{1} << 18;

  std::string name() const override { return "cpu-parallel"; }
  // Two-phase aggregation over class tuples where the gpu engine would
  // take it (cpu_parallel.cpp), else every target of every fact.
  AreaResult run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) override;
  std::string last_plan() const override { return plan_; }

 private:
  std::string plan_;
};

// Turns accumulated cells, ascending by target, into a result, the sums
// rounded from the grid they were added on.
AreaResult finish_cells(const std::vector<std::pair<uint64_t, CellAccumulator>>& cells, Aggregate a,
                        const SumGrid& g);

}  // namespace gpuolap
