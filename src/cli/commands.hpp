#pragma once
// The subcommands of `gpuolap`. Each returns the process exit status and
// throws InputError for bad input (exit 2).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpuolap/durable_cube.hpp"
#include "gpuolap/engine.hpp"

namespace gpuolap::cli {

struct CreateOptions {
  std::string schema, facts, out;
  bool force = false;
};
int run_create(const CreateOptions& o);

struct QueryOptions {
  std::string cube, schema, facts, query;
  uint64_t max_cells = 1000000;  // target cells of the area; 0: no limit
  LogRecovery recovery = LogRecovery::refuse_corruption;
  std::string engine = "auto";
  GpuOptions gpu;
  bool timing = false;
};
int run_query(const QueryOptions& o);

struct WriteOptions {
  std::string cube, facts, mode;
  LogRecovery recovery = LogRecovery::refuse_corruption;
};
int run_write(const WriteOptions& o);

struct InfoOptions {
  std::string cube;
  LogRecovery recovery = LogRecovery::refuse_corruption;
};
int run_info(const InfoOptions& o);

// Reports the snapshot and the log of a store, changing nothing: exit 0
// when opening it loses no acknowledged write, 2 when it would.
struct CheckOptions {
  std::string cube;
};
int run_check(const CheckOptions& o);

// A cube kind writes into `out`; a table kind (sales-flat, lineitem, zipf,
// ssb) into the database `db`.
struct GenerateOptions {
  std::string kind = "demo", out, db, format = "csv";
  std::optional<double> theta;  // unset: 1 for zipf, 0 (uniform) for htree
  uint64_t cardinality = 1024;
  std::string shape = "D15C40T600K";
  bool force = false;
  double scale = 1.0;
  uint64_t seed = 42;
};
int run_generate(const GenerateOptions& o);

struct BenchOptions {
  std::string kind = "all";
  double scale = 0.01;
  uint64_t seed = 42;
  std::vector<std::string> engines{"cpu-serial", "cpu-parallel"};
  GpuOptions gpu;
  bool sweep = false;  // time the gpu engine under every main knob setting too
  bool pair_kernels = false;  // and the work list, CDP and hybrid kernels (thesis tables 5.5-5.8)
  bool copies_sweep = false;  // and hash and dense stores at 1, 2, ..., 64 copies and the model's
  bool gpus_sweep = false;    // and each gpu row again over GPUs 0-1, 0-3, ... and over every GPU
  int repeat = 3;
  std::vector<std::string> queries;  // empty: all of the kind
};
int run_bench(const BenchOptions& o);

struct CalibrateOptions {
  double scale = 0.1;  // of the Machines cube
  uint64_t seed = 42;
  int repeat = 3;
  std::string out;     // default: calibration_path()
};
int run_calibrate(const CalibrateOptions& o);

struct SelfCheckOptions {
  std::string engine = "auto";  // gpu where there is a GPU, else cpu-parallel
  std::string configs = "grid";  // grid: every knob combination; given: the options on the command line
  GpuOptions gpu;
  int cubes = 30;
  int queries = 8;
  uint64_t seed = 1;
};
int run_selfcheck(const SelfCheckOptions& o);

struct ServeOptions {
  std::string cube, db, host = "127.0.0.1", engine = "auto", token_file;
  std::string htree, htree_engine = "auto", htree_online = "block-per-query";
  uint64_t max_rows = 10'000'000;  // of a POST /sql result
  int port = 7777;
  int threads = 64;
  double request_timeout_s = 10;
  double idle_timeout_s = 5;
  int max_connections = 4096;
  uint64_t max_cells = 1000000;
  uint64_t max_body_bytes = uint64_t{64} << 20;
  uint64_t checkpoint_bytes = uint64_t{64} << 20;
  LogRecovery recovery = LogRecovery::refuse_corruption;
  GpuSet gpus;
};
int run_serve(const ServeOptions& o);

struct ShellOptions {
  std::string cube, engine = "auto";
  LogRecovery recovery = LogRecovery::refuse_corruption;
};
int run_shell(const ShellOptions& o);

// One SELECT or EXPLAIN SELECT over the tables of a database directory;
// the result on stdout, the plan and operator times on stderr (--timing).
struct SqlCommandOptions {
  std::string db, engine = "cpu-serial", grouping_sets = "auto", format = "csv", query, file;
  uint64_t max_rows = 10'000'000;
  // Runs of the query after a warm-up run, tables in memory; 0: one run, tables read from disk.
  uint64_t repeat = 0;
  bool timing = false;
};
int run_sql(const SqlCommandOptions& o);

// Ordered aggregation over a table sorted on the grouping keys; the result
// CSV on stdout, the plan and kernel times on stderr (--timing).
struct GroupbyOrderedOptions {
  std::string db, table, by, aggregates, engine = "auto", arch = "auto", variant = "auto";
  int local_size = 0, intent = 0;  // 0: auto
  int device = -1;
  int repeat = 1;
  bool timing = false, selfcheck = false;
};
int run_groupby_ordered(const GroupbyOrderedOptions& o);

// The memory-contention paper's operators over a table (README, "Shared-
// memory grouped aggregation and FK join"): the placement optimizer, whose
// result is stored beside the table, grouped aggregation (Q2) and the
// foreign-key join (Q1). One option set: optimize reads db, table, column,
// goal, budget, window, threads and the shape; the operators the rest.
struct SharedCommandOptions {
  std::string db, table, column, goal = "write", budget = "4";
  int window = 16, threads = 0;
  int block_threads = 0;           // 0: 512
  std::uint64_t rows_per_block = 0;  // 0: 2^18
  int word_bytes = 0;              // 0: 8 for writes, 4 for reads
  std::string by, sum, fk, dim, id, value, engine = "auto", variant = "auto";
  bool min_max = false;
  int copies = 0, device = -1, repeat = 1;
  bool timing = false, selfcheck = false, show = false;
};
using OptimizeOptions = SharedCommandOptions;
int run_optimize(const OptimizeOptions& o);
int run_groupby_shared(const SharedCommandOptions& o);
int run_join_shared(const SharedCommandOptions& o);

// Full cube creation over a table: the cells as CSV on stdout or stored as
// a table (--out), the stages on stderr (--timing).
struct CubeBuildOptions {
  std::string db, table, dims, sets, measure, algorithm = "auto", out;
  int threads = 0;
  int device = -1;
  GpuSet gpus;  // several: the rows in a slice per GPU
  int repeat = 1;
  int upload_chunks = 0;
  std::string gpu_split = "auto";  // with several GPUs: auto, rows or keys
  std::string sorted_runs;  // how the GPU reduces sorted rows' runs: cub or one-pass (empty: BuildOptions' default)
  bool timing = false, selfcheck = false, not_resident = false;
};
int run_cube_build(const CubeBuildOptions& o);

}  // namespace gpuolap::cli
