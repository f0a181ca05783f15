// Full cube creation (../shared/papers/gpu-cpu-olap-cube-creation.md): every
// grouping set of a flat table's grouping columns aggregated in one build —
// SQL's GROUP BY CUBE / ROLLUP / GROUPING SETS, and the navigation levels of
// hierarchies (Year > Month > Day) above the finest granularity.
//
// This header is the operator's plain C++ face: what to build (CubeSpec),
// the algorithms (the paper's four and two past it), their options, and the
// result, a table. The CPU forms are cpu_cube.cpp; the GPU forms gpu/.
//
// The aggregates are ordered aggregation's (groupby/ordered_aggregation.hpp:
// COUNT(*), COUNT, SUM, MIN, MAX, AVG with PostgreSQL's meaning), and so are
// their states (groupby/aggregate_state.hpp), shared by every algorithm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "groupby/ordered_aggregation.hpp"
#include "table/table.hpp"

namespace gpuolap::cube {

// At most this many grouping columns (2^12 sets for a CUBE of all of them).
constexpr std::size_t kMaxColumns = 12;
// At most this many rows: row numbers are 32-bit on the GPU.
constexpr std::size_t kMaxRows = (std::size_t{1} << 32) - 1;

// A grouping set: bit i set when grouping column i is kept.
using SetMask = std::uint32_t;

// What to build: the grouping columns, the grouping sets over them, and the
// aggregates (by column name; an empty name is COUNT(*)).
struct CubeSpec {
  std::vector<std::string> columns;
  std::vector<SetMask> sets;
  struct Measure {
    groupby::AggregateKind kind = groupby::AggregateKind::CountStar;
    std::string column;
  };
  std::vector<Measure> measures;
};

// 'Year>Month>Day, Group>Product': dimensions separated by commas, each a
// rollup of its columns from coarse to fine; the sets are the product of the
// rollups (every prefix of each, 4 x 3 = 12 sets here), finest first. A
// one-column dimension is CUBE's: kept or not.
CubeSpec parse_dims(std::string_view text);
// GROUPING SETS over spec.columns: '(a, b), (c), ()' replaces spec.sets.
// A column outside spec.columns or a malformed list is an InputError.
void parse_sets(std::string_view text, CubeSpec& spec);
// 'sum(amount),count(*)' into spec.measures, against the table's columns;
// an unknown function, form or column is an InputError.
void parse_measures(std::string_view text, CubeSpec& spec, const table::Table& table);
// The set's columns as SQL writes them: "(year, month)", "()" for the total.
std::string set_text(const CubeSpec& spec, SetMask set);
// A measure's result column: "sum_amount", "count_star" (a table column's
// name, so that the cube can be stored as a table).
std::string measure_name(const CubeSpec::Measure& m);
// Checks the spec against the table: columns exist and are unique, at most
// kMaxColumns, sets inside the columns and distinct, at least one set and
// one measure, SUM/AVG only of int64 or double columns. An InputError names
// what is wrong.
void check_spec(const CubeSpec& spec, const table::Table& table);

// How the cube is built.
enum class Algorithm : std::uint8_t {
  CpuSequential,   // the paper's fig. 1: one thread, each row into every set's intersection
  CpuPartitioned,  // its fig. 4: the rows sorted, cut at intersection borders, one range a thread
  GpuNaive,        // its fig. 2: a thread per row, atomics into every set's dense cube
  GpuSorted,       // its fig. 3: per set, rows sorted by the set's key, borders found through
                   // shared memory; each intersection's run then aggregated by threads over
                   // chunks of it (the paper's thread per intersection, its loop made parallel)
  GpuLattice,      // the finest set once, each coarser one from its smallest computed parent
  GpuExpand,       // a virtual row per (row, set), one sort-based aggregation (Spark RAPIDS' way)
};
std::string_view algorithm_name(Algorithm a);
// The inverse; "auto" is not an algorithm (BuildOptions leaves it empty).
Algorithm parse_algorithm(std::string_view name);
const std::vector<Algorithm>& all_algorithms();
bool runs_on_gpu(Algorithm a);

// How several GPU contexts share a build's rows.
enum class GpuSplit : std::uint8_t {
  Auto,  // keys where the key ranges hold about equal rows (at most 1.25x an even share), else rows
  Rows,  // by position: each context a run of rows; their cells merged (gpu-lattice's finest on the
         // first context's GPU, then its coarser sets there; the other algorithms' on the host)
  Keys,  // by ranges of the finest key: each context every row of its cells, so the finest set is the
         // contexts' cells one after the other; the coarser sets' parts merged on the host
};
std::string_view split_name(GpuSplit s);
// The inverse of split_name ("auto", "rows", "keys"); else an InputError.
GpuSplit parse_split(std::string_view name);

// How gpu-lattice and gpu-expand reduce rows sorted by key into their runs.
// The hand-written kernels, which read the keys once and each aggregate's
// values once, are the default: CUB's unique-by-key and reduce-by-key per
// state word took 258 us of kernels for the 25 M sorted rows of sales-flat
// on an H200, the one-pass kernels 169 us
// (bench/results/h200-cube-one-pass-split-2026-11-29.md).
enum class SortedRuns : std::uint8_t {
  Cub,      // CUB: unique-by-key for the runs' starts, then a reduce-by-key per word of each state
  OnePass,  // keys read once, then each aggregate's values (groupby/gpu/sorted_runs_one_pass.cuh)
};
std::string_view sorted_runs_name(SortedRuns r);
// The inverse of sorted_runs_name ("one-pass", "cub"); else an InputError.
SortedRuns parse_sorted_runs(std::string_view name);

struct BuildOptions {
  std::optional<Algorithm> algorithm;  // empty: auto
  int threads = 0;                     // cpu-partitioned's threads; 0: all
  int device = -1;                     // the GPU; -1: the current one
  // Several GPU contexts (device ids, one may repeat: two contexts on one
  // GPU): the rows cut into as many slices, each built on its context at
  // once, the parts merged on the host. Empty: `device` alone.
  std::vector<int> devices;
  bool timing = false;                 // time each stage (the GPU's with CUDA events)
  // The GPU keeps the coded table on the device for the next build; false:
  // every build uploads it (to measure a table that does not stay there).
  bool keep_resident = true;
  // How a GPU build that uploads the rows copies them: in this many chunks,
  // each aggregated while the next is copied (gpu-lattice's finest set when
  // the rows are sorted or its dense cube fits, and gpu-naive; the other
  // paths wait for every row). 1: one copy, then the kernels; 0: chunks of
  // about 32 MB, at most 64.
  int upload_chunks = 0;
  // How several contexts (`devices`) share the rows; one context takes them all.
  GpuSplit gpu_split = GpuSplit::Auto;
  SortedRuns sorted_runs = SortedRuns::OnePass;
};

// The result: one row per non-empty intersection of every set, sets in the
// spec's order, each set's rows in ascending order of its columns (NULL
// first). Columns: `grouping` (PostgreSQL's GROUPING(c1, ..., cn): bit n-1-i
// set when column i is rolled up), the grouping columns (NULL where rolled
// up), then one column per measure, named by measure_name.
struct CubeResult {
  table::Table table;
  Algorithm algorithm = Algorithm::CpuSequential;
  std::string why;  // why this algorithm (auto) or "asked for"
  // Named stage times in milliseconds, in order (with options.timing).
  std::vector<std::pair<std::string, double>> stage_ms;
  std::vector<std::size_t> cells_per_set;  // in the spec's order
};

// Which algorithm `auto` runs, and why.
std::pair<Algorithm, std::string> choose_algorithm(const CubeSpec& spec, const BuildOptions& options);

struct CodedTable;

// A table coded for a spec once (each row's intersection packed into a key;
// timed as encode_ms), then built as often as asked: the GPU forms keep the
// coded table resident on the device between builds, as the MOLAP engine
// keeps its facts. The table must outlive it.
class PreparedCube {
 public:
  PreparedCube(const table::Table& table, CubeSpec spec);
  ~PreparedCube();
  PreparedCube(const PreparedCube&) = delete;
  PreparedCube& operator=(const PreparedCube&) = delete;

  // Throws InputError for what the algorithm cannot take (a dense cube that
  // does not fit, a GPU algorithm without a GPU).
  CubeResult build(const BuildOptions& options) const;
  double encode_ms() const { return encode_ms_; }
  const CubeSpec& spec() const { return spec_; }

 private:
  CubeSpec spec_;
  std::unique_ptr<CodedTable> coded_;
  double encode_ms_ = 0;
};

// PreparedCube(table, spec).build(options), the encoding its first stage.
CubeResult build_cube(const table::Table& table, const CubeSpec& spec, const BuildOptions& options);

// Where two results differ ("" when they agree): the same rows in the same
// order, integers and strings exactly, doubles within 1e-9 relative (sums
// added in another order differ in the last bits).
std::string compare_results(const table::Table& want, const table::Table& got);

// Whether this build has the GPU forms and a GPU is present.
bool gpu_available();
// How many GPUs the GPU forms can use (0 without them).
int gpu_count();

}  // namespace gpuolap::cube
