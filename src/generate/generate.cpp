#include <fmt/format.h>

#include <cmath>

#include "gpuolap/error.hpp"
#include "gpuolap/generate.hpp"

namespace gpuolap {

GeneratedCube generate_cube(const std::string& kind, double scale, uint64_t seed,
                            const ProgressFn& progress) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw InputError(fmt::format("--scale must be a positive number, not {}", scale));
  if (kind == "demo") return generate_demo(seed);
  if (kind == "biker") return generate_biker(scale, seed, progress);
  if (kind == "machines") return generate_machines(scale, seed, progress);
  if (kind == "machines-skewed") return generate_machines_skewed(scale, seed, progress);
  throw InputError(fmt::format(
      "unknown cube kind '{}' (expected demo, biker, machines or machines-skewed)", kind));
}

}  // namespace gpuolap
