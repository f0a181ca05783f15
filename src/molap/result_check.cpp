#include "molap/result_check.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdint>

namespace gpuolap {

std::string compare_results(const AreaResult& oracle, const AreaResult& other) {
  if (oracle.targets.size() != other.targets.size())
    return fmt::format("{} non-empty cells, the oracle has {}", other.targets.size(), oracle.targets.size());
  for (size_t i = 0; i < oracle.targets.size(); ++i) {
    if (oracle.targets[i] != other.targets[i])
      return fmt::format("cell {} is target {}, the oracle's is {}", i, other.targets[i], oracle.targets[i]);
    const double want = oracle.values[i], got = other.values[i];
    if (std::bit_cast<uint64_t>(want) != std::bit_cast<uint64_t>(got))
      return fmt::format("target {}: {:.17g}, the oracle says {:.17g}", oracle.targets[i], got, want);
  }
  return "";
}

}  // namespace gpuolap
