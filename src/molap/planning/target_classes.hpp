#pragma once
// Two-phase aggregation (past the thesis): the bases of a dimension whose
// target lists — positions and weights — are equal form a class. Phase 1
// aggregates the raw values of the facts per tuple of classes, one update
// per fact into a small dense space; phase 2 expands each class tuple to its
// targets. Sums differ from direct aggregation only by rounding; counts,
// mins and maxes are exact, because every fact of a class tuple has the same
// weight w, and w·min(v) (w·max(v) for negative w) is the minimum of w·v.
#include <cstdint>
#include <vector>

#include "gpuolap/aggregation_map.hpp"

namespace gpuolap::gpu {

inline constexpr uint32_t kNoClass = UINT32_MAX;

// A class's list is not copied: it is the map's list of the class's
// representative, a base of that class.
struct DimensionClasses {
  std::vector<uint32_t> class_of_base;   // kNoClass where the base has no target
  std::vector<uint32_t> representative;  // class c's list: the map's list of base representative[c]
  uint32_t count() const { return static_cast<uint32_t>(representative.size()); }
};

struct TargetClasses {
  std::vector<DimensionClasses> dims;
  std::vector<uint64_t> strides;  // of a class tuple number, last dimension fastest
  uint64_t cells = 0;             // class tuples: the phase-1 space
};

// Whether a dimension's map is a weight-1 total over every base: it changes
// neither target nor weight (kernels need not look at it), and its bases
// form one class.
bool is_total(const std::vector<uint32_t>& offsets, const std::vector<uint32_t>& positions,
              const std::vector<double>& weights);

// The classes of a map; `cells` is 0 when the class-tuple space would exceed
// `max_cells` (two-phase aggregation then gains nothing).
TargetClasses target_classes(const AggregationMap& map, uint64_t max_cells);

}  // namespace gpuolap::gpu
