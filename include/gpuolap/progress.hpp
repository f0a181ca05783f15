#pragma once
// Progress of long work (loading, saving, generating), for a terminal's
// progress line.
#include <cstdint>
#include <functional>

namespace gpuolap {

// Reports progress of long work; called with (done, total) in any unit.
using ProgressFn = std::function<void(uint64_t done, uint64_t total)>;

}  // namespace gpuolap
