// The placement optimizer of the memory-contention paper
// (../shared/papers/memory-contention-olap-operators.md, section 3).
//
// A grouping column (or a foreign key) holds dense codes 0..C-1. On the GPU
// each code addresses a slot of an array in shared memory: a group's running
// aggregates, or a dimension row's value. Slot s lies in bank s mod B. Two
// lanes of a warp that touch different slots of one bank are served one
// after the other (a bank conflict); two lanes that update one slot
// atomically are too (a value conflict), and so are updates to a slot still
// in flight from an earlier warp of the block (an inter-warp value conflict).
//
// The optimizer spends spare shared memory on copies: copy 0 of value v is
// slot v, further copies lie at the end of the array, each in a bank chosen
// for it. It then rewrites the column once, row by row, so that each row
// names one copy of its own value, chosen so that the rows a warp processes
// together (a chunk) touch distinct banks and, for writes, distinct slots
// not used by the previous `window` chunks of the same block. Per chunk it
// first assigns greedily, then for each row left over searches (BFS) for
// the shortest sequence of moves of already assigned rows that frees a
// bank; where none exists it creates a new copy in an empty bank, while the
// space budget allows; past the budget it retries without the window, and
// last accepts a conflict. Copies are tried least recently used first (a
// rotating cursor per value), and a new copy goes to the empty bank with the
// fewest copies so far, so that the array stays a rectangle of B-slot rows.
//
// The rows of a chunk are those of the kernel's static partitioning: a
// block of `block_threads` threads owns `rows_per_block` consecutive rows
// and processes them `block_threads` at a time, warp w taking 32
// consecutive ones. The window never crosses a block's rows. A placement
// made for one shape is still correct for another (every row names a copy
// of its own value); it is only less well placed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuolap::groupby {

// What the column's slots are used for: `read` (a dimension column in
// shared memory; lanes that read one slot are served at once, so only
// banks matter), `write` (running aggregates updated atomically: banks and
// slots both matter, and the window).
enum class PlacementGoal : std::uint8_t { Read, Write };
std::string_view placement_goal_name(PlacementGoal goal);
PlacementGoal parse_placement_goal(std::string_view name);  // InputError if unknown

// The kernel's static row-to-thread partitioning (see above), and the size
// of a slot's word: 4 bytes (32 banks, a warp served at once) or 8 bytes (a
// 64-bit access is served a half-warp at a time: 16 banks of 8 bytes for
// each half).
struct LaunchShape {
  int block_threads = 512;
  std::uint64_t rows_per_block = std::uint64_t{1} << 18;
  int word_bytes = 8;
  bool operator==(const LaunchShape&) const = default;
};
std::string describe(const LaunchShape& shape);
void check_shape(const LaunchShape& shape);  // InputError naming the bad field
// Whether two shapes cut the rows into the same chunks and blocks (rows a
// block and the word; a block's thread count does not change which rows a
// warp takes together, so a placement serves any).
bool same_chunks(const LaunchShape& a, const LaunchShape& b);

constexpr int kChunkRows = 32;  // a warp's rows
constexpr std::uint32_t kNoValue = 0xFFFFFFFFu;  // a hole in the slot array

struct PlacementOptions {
  PlacementGoal goal = PlacementGoal::Write;
  LaunchShape shape;
  // The space budget: at most budget x C slots in all (copies per value on
  // average, holes included). 1: no copy.
  double budget = 4;
  // Chunks before the current one, in the same block, whose slots a write
  // avoids (0: ignore inter-warp conflicts). Reads ignore it.
  int window = 16;  // at most 1,024
  int threads = 0;  // 0: every core; 1 gives the same placement every run
  // false: writes avoid value conflicts only, not bank conflicts (the
  // paper's fig. 7, which measures what avoiding bank conflicts adds).
  bool banks = true;
};

// Table 1 of the paper, averaged over chunks: distinct banks a chunk
// touches, and its serialization rounds for reads (per bank, the distinct
// slots in it) and for writes (per bank, the lanes in it), the maximum over
// banks summed over the chunk's wavefronts (one for 4-byte words, the two
// half-warps for 8-byte words: 2 is then conflict-free).
struct ChunkStats {
  double distinct_banks = 0;
  double read_rounds = 0;
  double write_rounds = 0;
  std::uint64_t read_conflicted_chunks = 0;   // chunks with more read rounds than wavefronts
  std::uint64_t write_conflicted_chunks = 0;  // the same for write rounds
  std::uint64_t window_conflicts = 0;   // write rows whose slot an earlier chunk of the window used
};

struct PlacementStats {
  ChunkStats before;  // the original column (slot = value)
  ChunkStats after;
  std::uint64_t chunks = 0;
  std::uint64_t slots = 0;              // the slot array, holes included
  std::uint64_t replicated_values = 0;  // copies beyond the first
  std::uint32_t max_copies = 0;         // of one value
  double copies_per_value = 0;          // copies / C
  std::uint64_t budget_refusals = 0;    // attempts to make a copy that the budget (or one value's
                                        // most copies, 32 x (window + 2) + 32) refused
  double seconds = 0;                   // the optimization (not the statistics)
  int threads = 0;
};

struct Placement {
  PlacementGoal goal = PlacementGoal::Write;
  LaunchShape shape;
  double budget = 0;
  int window = 0;
  std::uint32_t cardinality = 0;         // C: the codes are 0..C-1
  std::vector<std::uint32_t> slot_value; // slot -> its value, kNoValue for a hole
  std::vector<std::uint32_t> column;     // row -> slot
  PlacementStats stats;

  int banks() const { return 128 / shape.word_bytes; }
};

// The optimizer over `codes` (each in 0..cardinality-1; an InputError names
// the first row that is not). `cardinality` at most 2^24.
Placement optimize_placement(const std::vector<std::uint32_t>& codes, std::uint32_t cardinality,
                             const PlacementOptions& options);

// Table 1 of `column` (slots) read as chunks of `shape`; slot_value gives
// the distinct values (for the write rounds of a slot reused in a window).
ChunkStats chunk_stats(const std::vector<std::uint32_t>& column, const LaunchShape& shape, int window);

// The placement's invariants, for tests and for a placement loaded from a
// file: every row names a slot of its own value in `codes`, every slot
// value is < C or a hole, copy 0 of v is slot v, the slot array is whole
// rows of banks. An InputError names the first row or slot that breaks one.
void check_placement(const Placement& placement, const std::vector<std::uint32_t>& codes);

}  // namespace gpuolap::groupby
