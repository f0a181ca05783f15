#pragma once

#include <cstddef>
// What the GPU can do at most, measured in the bench's run (limits.cu).
struct Limits {
  double bandwidth_gbs = 0;    // streaming read, GB/s
  double random_reads_gs = 0;  // dependent random 4-byte reads, 10^9 a second
};
Limits measure_limits();
// The floor of a batch of n queries answered in place (the gpu engine's
// query memory: pinned, mapped): one launch of the lookup grid's shape
// (32 queries a block) that only moves the batch's bytes, each block's
// codes read across the bus in 16-byte words and its answers written back
// the same way, and the host's wait for it, timed on the host as a query
// is (median of 101). code_bytes and answer_bytes are a query's.
double in_place_floor_ms(std::size_t n, std::size_t code_bytes, std::size_t answer_bytes);
// A launch of an empty kernel and the host's wait for the stream (median of 101).
double empty_launch_ms();
// A launch of a kernel that raises a flag in mapped memory, and the host's
// watch for the flag (median of 101): how the query path waits.
double flagged_launch_ms();
