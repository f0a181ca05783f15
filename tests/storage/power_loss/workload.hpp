#pragma once
// The writes of the power-loss check, the same in the workload that makes
// them and in the check that recomputes what they leave: a small cube and
// a numbered sequence of records (single- and multi-cell, set, add and
// remove), each drawn from the seed and its own number alone.
#include <cstdint>

#include "gpuolap/cube.hpp"
#include "gpuolap/write.hpp"

namespace gpuolap::power_loss {

struct WorkloadShape {
  uint64_t writes = 300;           // records written and acknowledged
  uint64_t checkpoint_every = 50;  // a checkpoint after the group commit that reaches this many records since the last
  uint64_t seed = 1;
};

// The cube the workload starts from: three dimensions (8 x 6 x 5 base
// cells), two measures, a few cells filled.
Cube workload_cube();

// Record n (1, 2, ...) of the workload.
LogRecord workload_record(const Schema& schema, uint64_t seed, uint64_t n);

// How many records the group commit that starts with record n appends
// before its one sync (1 to 3), as the cube service groups concurrent writes.
uint64_t group_size(uint64_t seed, uint64_t n);

}  // namespace gpuolap::power_loss
