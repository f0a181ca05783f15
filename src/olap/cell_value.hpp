#pragma once
// The value of one cell, base or consolidated, on a snapshot: a base cell is
// read from the facts, a consolidated one answered as an area of one target.
#include <optional>

#include "olap/cell_paths.hpp"
#include "olap/cube_service.hpp"

namespace gpuolap::olap {

// The aggregate of the cell at `path`, or nullopt when it is empty.
std::optional<double> cell_value(CubeService& service, const FactTable& facts, const CellPath& path, size_t measure,
                                 Aggregate aggregate);

}  // namespace gpuolap::olap
