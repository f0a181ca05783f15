#include "olap/over_limit.hpp"

#include <fmt/format.h>

namespace gpuolap::olap {

double target_cells(const AreaQuery& query) {
  double n = 1;
  for (const auto& list : query.area) n *= static_cast<double>(list.size());
  return n;
}

void check_area_cells(const AreaQuery& query, uint64_t max_cells) {
  const double n = target_cells(query);
  if (n > static_cast<double>(max_cells))
    throw OverLimit("too_many_cells", fmt::format("the area has {:.0f} target cells; the limit is {}", n, max_cells));
}

}  // namespace gpuolap::olap
