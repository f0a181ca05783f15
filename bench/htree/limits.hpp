#pragma once
// What the GPU can do at most, measured in the bench's run (limits.cu).
struct Limits {
  double bandwidth_gbs = 0;    // streaming read, GB/s
  double random_reads_gs = 0;  // dependent random 4-byte reads, 10^9 a second
};
Limits measure_limits();
