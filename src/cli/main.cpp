// gpuolap: define a cube, load its facts, answer area queries.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <malloc.h>

#include <cstdio>
#include <exception>
#include <optional>

#include "commands.hpp"
#include "table_commands.hpp"
#include "htree_command.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/generate.hpp"
#include "gpuolap/gpu_options.hpp"
#include "server/shell.hpp"

namespace {

// A typed knob from its name: an unknown name is refused while the command
// line is parsed, listing the valid ones. A knob the engine may choose
// (std::optional) also takes "auto"; one with a fixed default does not.
template <class Parse>
void add_named_option(CLI::App* app, const std::string& flag, Parse parse, const std::string& help,
                      const std::string& names, const std::string& default_name) {
  app->add_option_function<std::string>(
         flag,
         [parse, flag](const std::string& name) {
           try {
             parse(name, flag);
           } catch (const gpuolap::InputError& e) {
             throw CLI::ValidationError(e.what());
           }
         },
         help + " (" + names + ")")
      ->default_str(default_name);
}

template <class Knob>
void add_knob(CLI::App* app, const std::string& flag, std::optional<Knob>& knob, const std::string& help) {
  add_named_option(
      app, flag, [&knob](const std::string& name, const std::string& where) { knob = gpuolap::parse_auto_knob<Knob>(name, where); },
      help, gpuolap::knob_names<Knob>(true), "auto");
}

template <class Knob>
void add_knob(CLI::App* app, const std::string& flag, Knob& knob, const std::string& help) {
  add_named_option(
      app, flag, [&knob](const std::string& name, const std::string& where) { knob = gpuolap::parse_knob<Knob>(name, where); },
      help, gpuolap::knob_names<Knob>(false), std::string(gpuolap::knob_name(knob)));
}

// --gpus, on every command that runs engines.
void add_gpus_option(CLI::App* app, gpuolap::GpuSet& gpus) {
  add_named_option(
      app, "--gpus", [&gpus](const std::string& text, const std::string& where) { gpus = gpuolap::parse_gpu_set(text, where); },
      "gpu: the GPUs a query runs on, its facts split over them by pages (auto: one; engine auto: every GPU when that "
      "is faster)",
      "all, or device numbers such as 0,1", "auto");
}

// The gpu engine's knobs, on every command that runs engines.
void add_gpu_options(CLI::App* app, gpuolap::GpuOptions& o) {
  using namespace gpuolap;
  add_gpus_option(app, o.gpus);
  add_knob(app, "--variant", o.variant, "gpu: target store");
  app->add_option("--phf", o.phf, "gpu: parallel hash functions (copies per target); 0 chooses")->capture_default_str();
  add_knob(app, "--preagg", o.preagg, "gpu: warp pre-aggregation (run: thread runs, then lane0)");
  add_knob(app, "--prefilter", o.prefilter, "gpu: compact (CUB select first) or fused");
  add_knob(app, "--map-memory", o.map_memory, "gpu: where the aggregation map lives");
  add_knob(app, "--two-phase", o.two_phase, "gpu: aggregate per class of bases, then expand");
  add_knob(app, "--kernel", o.kernel,
           "gpu: kernel over the facts: source (a thread per cell), work-list (a thread per (cell, target) pair), "
           "cdp (parents launch child grids) or hybrid (children only for uneven pages)");
  add_knob(app, "--child-grid", o.child_grid, "gpu-cdp: a child grid sized to its pairs, or one block");
  app->add_option("--sync-every", o.sync_every,
                  "gpu-cdp: let parents wait for their children every k pages (a tail launch), bounding D and the "
                  "pending launches; 0: never")
      ->capture_default_str();
  app->add_option("--block", o.block, "gpu: threads per block; 0 chooses")->capture_default_str();
  app->add_option("--grid", o.grid, "gpu: blocks; 0 chooses")->capture_default_str();
  app->add_option("--store-memory", o.store_memory_mb,
                  "gpu: MiB of device memory a query's target store may take; larger areas are aggregated in chunks "
                  "(0: what the GPU has free)")
      ->capture_default_str();
}

// --recovery, on every command that opens a store.
void add_recovery_option(CLI::App* app, gpuolap::LogRecovery& recovery) {
  app->add_option_function<std::string>(
         "--recovery",
         [&recovery](const std::string& name) {
           if (name == "refuse") recovery = gpuolap::LogRecovery::refuse_corruption;
           else if (name == "discard-after-corruption") recovery = gpuolap::LogRecovery::discard_after_corruption;
           else throw CLI::ValidationError("--recovery " + name + ": expected one of refuse, discard-after-corruption");
         },
         "A log corrupt before whole records: refuse to open the store, or replay up to the corruption and set the "
         "rest aside (discard-after-corruption)")
      ->default_str("refuse");
}

std::string engine_list() {
  std::string s;
  for (const auto& n : gpuolap::engine_names()) s += (s.empty() ? "" : "|") + n;
  return s;
}

// Every gpu query builds and frees the same host buffers (maps, class
// lists, results: on M3 about 300 KB), and glibc handed blocks of that size
// back to the kernel, so each query page-faulted them in again: in a harness
// on a 2-core VM, M3's plan took 70 faults and 0.25 ms, against 0.085 ms with
// glibc told the same through its environment (MALLOC_MMAP_THRESHOLD_ ...).
// Blocks up to 64 MB now come from the heap, which keeps up to 256 MB free.
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();
  using namespace gpuolap::cli;
  CLI::App app{"gpuolap: an in-memory OLAP engine; area queries on CPU cores or an NVIDIA GPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "gpuolap 0.1.0");

  CreateOptions create;
  auto* c = app.add_subcommand("create", "Build a binary cube store from a schema and a facts CSV");
  c->add_option("--schema", create.schema, "Schema JSON file")->required();
  c->add_option("--facts", create.facts, "Facts CSV file")->required();
  c->add_option("--out", create.out, "Directory of the new cube store")->required();
  c->add_flag("--force", create.force, "Replace a cube store that is already there");

  QueryOptions query;
  auto* q = app.add_subcommand("query", "Answer an area query; the result CSV goes to stdout");
  auto* q_cube = q->add_option("--cube", query.cube, "Cube store directory");
  auto* q_schema = q->add_option("--schema", query.schema, "Schema JSON (with --facts, instead of --cube)");
  auto* q_facts = q->add_option("--facts", query.facts, "Facts CSV (with --schema)");
  q_cube->excludes(q_schema)->excludes(q_facts);
  q_schema->needs(q_facts);
  q_facts->needs(q_schema);
  q->add_option("--query", query.query, "Query JSON file")->required();
  q->add_option("--engine", query.engine, "Engine: " + engine_list())->capture_default_str();
  q->add_flag("--timing", query.timing, "Print the chosen engine and stage times on stderr");
  q->add_option("--max-cells", query.max_cells, "Most target cells of the area (as serve's); 0: no limit")
      ->capture_default_str();
  add_gpu_options(q, query.gpu);
  add_recovery_option(q, query.recovery);

  WriteOptions write;
  auto* w = app.add_subcommand("write", "Write base cells from a facts CSV into a cube store");
  w->add_option("--cube", write.cube, "Cube store directory")->required();
  w->add_option("--facts", write.facts, "Facts CSV file")->required();
  w->add_option("--mode", write.mode, "set, add or delete")
      ->required()
      ->check(CLI::IsMember({"set", "add", "delete"}));
  add_recovery_option(w, write.recovery);

  InfoOptions info;
  auto* i = app.add_subcommand("info", "Describe a cube store");
  i->add_option("--cube", info.cube, "Cube store directory")->required();
  add_recovery_option(i, info.recovery);

  CheckOptions check_store;
  auto* ck = app.add_subcommand("check", "Report a store's snapshot and log (torn tail or corruption), changing nothing");
  ck->add_option("--cube", check_store.cube, "Cube store directory")->required();

  GenerateOptions gen;
  auto* g = app.add_subcommand("generate",
                                "Write a generated cube (schema, facts and sample queries) into --out, or generated "
                                "tables into the database --db");
  g->add_option("kind,--kind", gen.kind,
                "Cubes: demo, biker, machines or machines-skewed; tables: sales-flat, lineitem, zipf, ssb or htree")
      ->capture_default_str();
  g->add_option("--scale", gen.scale,
                "Fraction of the thesis' fact count (biker, machines); the scale factor of tables (sales-flat: 25 M "
                "rows, lineitem and ssb: SF, zipf: 10 M rows of f)")
      ->capture_default_str();
  g->add_option("--seed", gen.seed, "Random seed")->capture_default_str();
  g->add_option("--out", gen.out, "Output directory of a cube");
  g->add_option("--db", gen.db, "Database directory of generated tables (created if missing)");
  g->add_option("--theta", gen.theta, "zipf: skew of f.a and f.fk (0: uniform; default 1); htree: of every dimension (default 0)");
  g->add_option("--shape", gen.shape, "htree: DxCyTz, x dimensions of y values each, z tuples (K, M)")->capture_default_str();
  g->add_option("--cardinality", gen.cardinality, "zipf: distinct values of f.a, rows of d1")->capture_default_str();
  g->add_flag("--force", gen.force,
              "Replace a generated cube already in --out (schema.json, facts.csv or a cube store, the queries)");
  g->add_option("--format", gen.format, "csv (schema.json + facts.csv) or store (a cube store)")
      ->check(CLI::IsMember({"csv", "store"}))
      ->capture_default_str();

  BenchOptions bench;
  auto* b = app.add_subcommand("bench",
                               "Time the engines on the thesis' queries over generated cubes; prints a markdown report "
                               "on stdout (the committed ones are in bench/results/)");
  b->add_option("--kind", bench.kind, "biker, machines, machines-skewed or all (biker and machines)")
      ->check(CLI::IsMember({"biker", "machines", "machines-skewed", "all"}))->capture_default_str();
  b->add_option("--scale", bench.scale, "Fraction of the thesis' fact count")->capture_default_str();
  b->add_option("--seed", bench.seed, "Random seed")->capture_default_str();
  b->add_option("--engines", bench.engines, "Engines to time")->delimiter(',')->capture_default_str();
  b->add_option("--repeat", bench.repeat, "Timed runs per query (the median is reported)")->capture_default_str();
  b->add_option("--queries", bench.queries, "Only these queries, e.g. B1,M3")->delimiter(',');
  add_gpu_options(b, bench.gpu);
  b->add_flag("--sweep", bench.sweep,
              "gpu: also time the one-phase kernel under every store x pre-aggregation x {1, 8, 64} hash functions, "
              "and two-phase aggregation under each pre-aggregation");
  b->add_flag("--pair-kernels", bench.pair_kernels,
              "gpu: also time the kernels that give each (fact, target) pair a thread: the work list, the CDP kernel "
              "(dynamic or fixed child grid, with or without synchronisation every 2048 pages) and the hybrid, beside "
              "the source kernel, without and with strided pre-aggregation (thesis tables 5.5-5.8)");
  b->add_flag("--gpus-sweep", bench.gpus_sweep,
              "Time each gpu row again over GPUs 0-1, 0-3, ... (powers of two below the count) and over every GPU (--gpus all)");
  b->add_flag("--copies-sweep", bench.copies_sweep,
              "gpu: also time the one-phase source kernel without pre-aggregation under the hash and dense stores at "
              "1, 2, 4, ..., 64 copies per target (the thesis' parallel hash functions) and at the copies the cost "
              "model picks, and list the model's pick against the fastest");

  SelfCheckOptions check;
  auto* sc = app.add_subcommand("selfcheck", "Compare an engine with cpu-serial on random cubes, on this machine");
  sc->add_option("--engine", check.engine,
                 "Engine to check: " + engine_list() + " (auto: gpu where there is a GPU, else cpu-parallel)")
      ->capture_default_str();
  sc->add_option("--configs", check.configs, "gpu: grid (every knob combination) or given (the options below)")
      ->check(CLI::IsMember({"grid", "given"}))
      ->capture_default_str();
  sc->add_option("--cubes", check.cubes, "Random cubes")->capture_default_str()->check(CLI::PositiveNumber);
  sc->add_option("--queries", check.queries, "Random queries per cube")->capture_default_str()->check(CLI::PositiveNumber);
  sc->add_option("--seed", check.seed, "Random seed")->capture_default_str();
  add_gpu_options(sc, check.gpu);

  CalibrateOptions calibrate;
  auto* cal = app.add_subcommand("calibrate",
                                 "Measure what each gpu kernel costs on this GPU, for `auto` to choose kernels by");
  cal->add_option("--scale", calibrate.scale, "Scale of the Machines and Biker cubes it measures on")
      ->capture_default_str();
  cal->add_option("--seed", calibrate.seed, "Random seed")->capture_default_str();
  cal->add_option("--repeat", calibrate.repeat, "Timed runs per measurement (the fastest counts)")->capture_default_str();
  cal->add_option("--out", calibrate.out,
                  "Where to write it (default: $GPUOLAP_CALIBRATION, else $XDG_CONFIG_HOME/gpuolap/calibration.json, "
                  "else ~/.config/gpuolap/calibration.json, where `auto` reads it)");

  ServeOptions serve;
  auto* sv = app.add_subcommand("serve", "Serve a cube store (an API modelled on Palo's) and/or a database's SQL over HTTP");
  sv->add_option("--cube", serve.cube, "Cube store directory");
  sv->add_option("--db", serve.db, "Database directory, queried by POST /sql (read-only)");
  sv->add_option("--htree", serve.htree, "An H-tree (gpuolap htree build --out), fed by POST /htree/append and queried by "
                                         "POST /htree/query");
  sv->add_option("--htree-engine", serve.htree_engine, "The H-tree's engine: cpu-serial, cpu-parallel, gpu or auto")
      ->capture_default_str();
  sv->add_option("--htree-online", serve.htree_online, "gpu online cubing: block-per-query or balanced")->capture_default_str();
  sv->add_option("--max-rows", serve.max_rows, "Most rows of a /sql result, its groups and the rows it sorts")->capture_default_str();
  sv->add_option("--host", serve.host, "Address to listen on")->capture_default_str();
  sv->add_option("--port", serve.port, "Port to listen on; 0 picks a free one")->capture_default_str()->check(CLI::Range(0, 65535));
  sv->add_option("--engine", serve.engine, "Engine: " + engine_list())->capture_default_str();
  add_gpus_option(sv, serve.gpus);
  sv->add_option("--token-file", serve.token_file, "File holding the bearer token that writes must carry");
  sv->add_option("--threads", serve.threads, "Requests answered at once (worker threads)")->capture_default_str()->check(CLI::Range(1, 4096));
  sv->add_option("--max-connections", serve.max_connections, "Connections open at once; past it, new ones get a 503")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  sv->add_option("--request-timeout", serve.request_timeout_s,
                 "Seconds a request may take to arrive whole, from its first byte (and an answer to be taken)")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  sv->add_option("--idle-timeout", serve.idle_timeout_s, "Seconds a kept-alive connection may wait for its next request")
      ->capture_default_str()
      ->check(CLI::Range(0.001, 86400.0));
  sv->add_option("--max-cells", serve.max_cells, "Most target cells of an area, base-cell writes of one write")->capture_default_str();
  sv->add_option("--max-body-bytes", serve.max_body_bytes, "Largest request body")->capture_default_str();
  sv->add_option("--checkpoint-bytes", serve.checkpoint_bytes, "Write a snapshot when the log grows past this")
      ->capture_default_str();
  add_recovery_option(sv, serve.recovery);

  ShellOptions shell;
  auto* sh = app.add_subcommand(
      "shell", std::string("Answer commands on stdin (") + gpuolap::server::shell_commands() + "), one JSON line each");
  sh->add_option("--cube", shell.cube, "Cube store directory")->required();
  sh->add_option("--engine", shell.engine, "Engine: " + engine_list())->capture_default_str();
  add_recovery_option(sh, shell.recovery);

  SqlCommandOptions sql;
  auto* sq = app.add_subcommand("sql", "Answer a SQL SELECT over a database directory of tables (README, \"SQL\")");
  sq->add_option("--db", sql.db, "Database directory (tables written by `gpuolap table load`)")->required();
  sq->add_option("--engine", sql.engine,
                 "Engine: cpu-serial (the oracle), cpu-parallel (all cores), or gpu (GROUP BY ROLLUP/CUBE/GROUPING SETS "
                 "of one table, by the cube operator)")
      ->check(CLI::IsMember({"cpu-serial", "cpu-parallel", "gpu"}))
      ->capture_default_str();
  sq->add_option("--grouping-sets", sql.grouping_sets,
                 "Grouping sets: per-set (each from the rows), lattice (the finest from the rows, each other from its "
                 "smallest computed parent), cube (cpu-parallel: the full-cube operator's cpu-partitioned) or auto "
                 "(cpu-parallel: cube for several sets of one table's columns, else the lattice for several sets)")
      ->check(CLI::IsMember({"per-set", "lattice", "cube", "auto"}))
      ->capture_default_str();
  sq->add_option("--format", sql.format, "csv, json or table")
      ->check(CLI::IsMember({"csv", "json", "table"}))
      ->capture_default_str();
  sq->add_flag("--timing", sql.timing, "Print the plan, its choices and each operator's time on stderr");
  sq->add_option("--max-rows", sql.max_rows, "Most rows of a result (and of its groups, and of the rows sorted)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sq->add_option("-f,--file", sql.file, "Read the query from this file");
  sq->add_option("--repeat", sql.repeat,
                 "Read the tables once, run the query once to warm up and then N times; with --timing, print the "
                 "median and minimum time of the N runs (tables in memory)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sq->add_option("query", sql.query, "The query (SELECT ... or EXPLAIN SELECT ...)");
  GroupbyOrderedOptions gbo;
  auto* go = app.add_subcommand("groupby-ordered",
                                "GROUP BY over a table sorted on its keys, by the prefix-sum kernels of the ordered-aggregation "
                                "paper or past them (README, \"Ordered aggregation\")");
  go->add_option("--db", gbo.db, "Database directory")->required();
  go->add_option("--table", gbo.table, "The table, sorted on the --by columns")->required();
  go->add_option("--by", gbo.by, "Grouping columns, c1[,c2...] (the table's sort order or a prefix of it)")->required();
  go->add_option("--agg", gbo.aggregates, "Aggregates: 'sum(x),count(*),min(y),max(y),avg(x),count(x)'")->required();
  go->add_option("--engine", gbo.engine, "gpu, cpu-serial (the oracle), cpu-parallel, or auto (gpu when there is one)")
      ->check(CLI::IsMember({"auto", "gpu", "cpu-serial", "cpu-parallel"}))
      ->capture_default_str();
  go->add_option("--arch", gbo.arch,
                 "GPU architecture: 5-kernel, 3-kernel, 2-kernel, 1-kernel (the paper's), block-cooperative, "
                 "cub-reduce-by-key, cub-run-length, or auto")
      ->capture_default_str();
  go->add_option("--variant", gbo.variant,
                 "Aggregation variant of 5/3/2/1-kernel: direct-atomics, chunked-atomics, private-variable, private-array, or auto")
      ->capture_default_str();
  go->add_option("--local-size", gbo.local_size, "Threads per block (the paper's local size), 1..1024; 0: auto")
      ->capture_default_str();
  go->add_option("--intent", gbo.intent, "Rows per thread (the paper's intent or chunk size), 1..4096; 0: auto")
      ->capture_default_str();
  go->add_option("--device", gbo.device, "GPU to run on (-1: the first)")->capture_default_str();
  go->add_option("--repeat", gbo.repeat, "Run N times (--timing: the last run's stages, the mean wall time)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  go->add_flag("--timing", gbo.timing, "Print the plan and each kernel's time on stderr");
  go->add_flag("--selfcheck", gbo.selfcheck,
               "Run every architecture and variant on the table and compare each with cpu-serial");
  // The memory-contention paper's optimizer and operators.
  SharedCommandOptions opt, gbs, js;
  js.id = "id";
  auto add_shape = [](CLI::App* a, SharedCommandOptions& o) {
    a->add_option("--block-threads", o.block_threads,
                  "Threads a block, a multiple of 32 (0: optimize records 512; the operators take 1,024 where "
                  "their state fills over a quarter of an SM's shared memory, else 512)")
        ->capture_default_str();
    a->add_option("--rows-per-block", o.rows_per_block,
                  "Consecutive rows a block owns, a multiple of its threads (0: 262,144); a placement serves the "
                  "rows a block and word it was made for")
        ->capture_default_str();
  };
  auto* op = app.add_subcommand("optimize",
                                "Place copies of a column's values against shared-memory bank and value conflicts and "
                                "re-map the column, stored beside the table (README, \"Shared-memory grouped "
                                "aggregation and FK join\")");
  op->add_option("--db", opt.db, "Database directory")->required();
  op->add_option("--table", opt.table, "The fact table")->required();
  op->add_option("--column", opt.column, "The grouping column (for write) or foreign key (for read): codes 0..C-1")
      ->required();
  op->add_option("--for", opt.goal, "write: running aggregates updated atomically; read: a dimension column")
      ->check(CLI::IsMember({"read", "write"}))
      ->capture_default_str();
  op->add_option("--budget", opt.budget, "Slots in all at most B x C (copies a value on average, >= 1), or 'unbounded'")
      ->capture_default_str();
  op->add_option("--window", opt.window, "Earlier chunks of a block whose slots a write avoids (0: none; at most 1,024)")
      ->capture_default_str();
  op->add_option("--threads", opt.threads, "CPU threads (0: all; 1: the same placement every run)")->capture_default_str();
  op->add_option("--word-bytes", opt.word_bytes,
                 "Bytes of a slot's widest word: 8 (SUM of a double, 16 banks a half-warp) or 4 (COUNT, a 4-byte "
                 "dimension column; 32 banks); 0: 8 for write, 4 for read")
      ->check(CLI::IsMember({0, 4, 8}))
      ->capture_default_str();
  op->add_flag("--show", opt.show,
               "Print the stored placement's statistics and whether the table changed since, instead of optimizing");
  add_shape(op, opt);
  auto add_operator = [&](CLI::App* a, SharedCommandOptions& o) {
    a->add_option("--db", o.db, "Database directory")->required();
    a->add_option("--engine", o.engine, "gpu, cpu-serial (the oracle), or auto (gpu when there is one)")
        ->check(CLI::IsMember({"auto", "gpu", "cpu-serial"}))
        ->capture_default_str();
    a->add_option("--variant", o.variant,
                  "global-atomics, shared (one copy), naive-replicas, placement (gpuolap optimize's), "
                  "warp-aggregation, sort-reduce (CUB; GROUP BY only), target-store (the MOLAP engine's shared store; GROUP BY "
                  "of doubles or COUNT), or auto")
        ->capture_default_str();
    a->add_option("--copies", o.copies, "naive-replicas: copies (0: as many as fit, at most 32)")->capture_default_str();
    add_shape(a, o);
    a->add_option("--device", o.device, "GPU to run on (-1: the first)")->capture_default_str();
    a->add_option("--repeat", o.repeat, "Run N times (--timing: the last run's stages, the mean wall time)")
        ->check(CLI::PositiveNumber)
        ->capture_default_str();
    a->add_flag("--timing", o.timing, "Print the plan and each stage's time on stderr");
    a->add_flag("--selfcheck", o.selfcheck, "Run every variant and compare each with cpu-serial");
  };
  auto* gs = app.add_subcommand("groupby-shared",
                                "SELECT a, COUNT(*)[, SUM(x), MIN(x), MAX(x)] FROM t GROUP BY a with the groups in "
                                "shared memory (the memory-contention paper's Q2)");
  gs->add_option("--table", gbs.table, "The table")->required();
  gs->add_option("--by", gbs.by, "The grouping column: codes 0..C-1 (integers, strings or dates)")->required();
  gs->add_option("--sum", gbs.sum, "A value column to sum (double, or integers that fit 4 bytes)");
  gs->add_flag("--min-max", gbs.min_max, "Also MIN and MAX of the --sum column");
  add_operator(gs, gbs);
  auto* jn = app.add_subcommand("join-shared",
                                "SELECT COUNT(*), SUM(d.b) FROM f JOIN d ON f.fk = d.id with d.b in shared memory "
                                "(the memory-contention paper's Q1)");
  jn->add_option("--table", js.table, "The fact table")->required();
  jn->add_option("--fk", js.fk, "Its foreign key: codes 0..n-1")->required();
  jn->add_option("--dim", js.dim, "The dimension table")->required();
  jn->add_option("--id", js.id, "Its key: the integers 0..n-1, each once")->capture_default_str();
  jn->add_option("--value", js.value, "The dimension column to sum")->required();
  add_operator(jn, js);
  CubeBuildOptions cube_build;
  auto* cube = app.add_subcommand("cube", "Full cubes of a table: every grouping set of its columns (README, \"Full cubes\")");
  cube->require_subcommand(1);
  auto* cb = cube->add_subcommand("build", "Build every grouping set of a table's columns (hierarchies as rollups)");
  cb->add_option("--db", cube_build.db, "Database directory")->required();
  cb->add_option("--table", cube_build.table, "The table")->required();
  cb->add_option("--dims", cube_build.dims,
                 "Dimensions, each a rollup from coarse to fine: 'year>month>day, product_group>product'; the sets are "
                 "the product of the rollups (a one-column dimension: kept or not, as CUBE)")
      ->required();
  cb->add_option("--sets", cube_build.sets,
                 "GROUPING SETS over the --dims columns instead of the rollups' product: '(year, month), (product), ()'");
  cb->add_option("--measure", cube_build.measure, "Aggregates: 'sum(amount),count(*),min(x),max(x),avg(x),count(x)'")
      ->required();
  cb->add_option("--algorithm", cube_build.algorithm,
                 "cpu-sequential, cpu-partitioned, gpu-naive, gpu-sorted, gpu-lattice, gpu-expand, or auto")
      ->capture_default_str();
  cb->add_option("--out", cube_build.out, "Store the cells as this table of the database instead of printing them");
  cb->add_option("--threads", cube_build.threads, "cpu-partitioned's threads (0: all cores)")->capture_default_str();
  cb->add_option("--device", cube_build.device, "GPU to run on (-1: the first)")->capture_default_str();
  add_named_option(
      cb, "--gpus", [&](const std::string& text, const std::string& where) { cube_build.gpus = gpuolap::parse_gpu_set(text, where); },
      "GPUs of a gpu algorithm: the rows cut into a slice per GPU, built at once and merged (gpu-lattice on the first "
      "GPU, the others on the host); a GPU named twice gets two contexts (unset: --device alone)",
      "all, or device numbers such as 0,1", "one");
  cb->add_option("--repeat", cube_build.repeat,
                 "Build N times from the table coded once (a GPU keeps it resident after run 1); --timing prints run 1's "
                 "and the last run's stages")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cb->add_flag("--not-resident", cube_build.not_resident,
               "A GPU algorithm uploads the table in every run (measures a table that does not stay on the GPU)");
  cb->add_option("--upload-chunks", cube_build.upload_chunks,
                 "A GPU build that uploads the table copies it in N chunks, aggregating each while the next is copied "
                 "(1: one copy, then the kernels; 0: chunks of about 32 MB; at most 4096, and one row a chunk at least)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cb->add_option("--gpu-split", cube_build.gpu_split,
                 "With --gpus: rows (a run of rows per GPU, their cells merged), keys (a range of the finest key per "
                 "GPU: no finest cell is merged), or auto (keys where the ranges hold about equal rows)")
      ->capture_default_str();
  cb->add_option("--sorted-runs", cube_build.sorted_runs,
                 "How gpu-lattice and gpu-expand reduce rows sorted by key into their runs: one-pass (the default: "
                 "hand-written kernels read the keys once, then each aggregate's values once) or cub (CUB's "
                 "unique-by-key, then a reduce-by-key per word of each state)");
  cb->add_flag("--timing", cube_build.timing, "Print the algorithm, why, and each stage's time on stderr");
  cb->add_flag("--selfcheck", cube_build.selfcheck, "Build with every algorithm and compare each with cpu-sequential");
  auto* htree = app.add_subcommand("htree", "H-tree partial cubes of a table, fed by batches (README, \"H-trees\")");
  htree->require_subcommand(1);
  auto add_htree_knobs = [](CLI::App* c, HTreeKnobOptions& k, bool build_or_update) {
    c->add_option("--engine", k.engine, "cpu-serial (the pointer tree), cpu-parallel, gpu, or auto")->capture_default_str();
    if (build_or_update)
      c->add_option("--sort", k.sort, "gpu: packed (tuples as 64-bit words) or per-dimension (a radix sort a dimension)")
          ->capture_default_str();
    else {
      c->add_option("--online", k.online,
                    "gpu online cubing: block-per-query (Algorithm 4) or balanced (every list cut evenly over one grid)")
          ->capture_default_str();
      c->add_option("--block-threads", k.block_threads, "block-per-query's threads: 32, 64, 128 or 256")
          ->capture_default_str();
      c->add_option("--query-io", k.query_io,
                    "gpu: mapped (kernels read the queries and write the answers in pinned host memory) or copied "
                    "(copies to and from device memory around the kernels)")
          ->capture_default_str();
      c->add_option("--path-lookup", k.path_lookup,
                    "gpu popular-path queries: walk (down every level, Algorithm 3) or leaf-jump (from the first node "
                    "with a single leaf below, the rest of the query compared with that leaf)")
          ->capture_default_str();
    }
    c->add_flag("--timing", k.timing, "Print the time of each stage on stderr");
  };
  HTreeBuildOptions htree_build;
  auto* hb = htree->add_subcommand("build", "Build an H-tree over a table's columns and store it durably in --out");
  hb->add_option("--db", htree_build.db, "Database directory")->required();
  hb->add_option("--table", htree_build.table, "The table")->required();
  hb->add_option("--order", htree_build.order,
                 "The popular path, root first: d1,d2,... (default: every column but the measure, fewest values first)")
      ->delimiter(',');
  hb->add_option("--measure", htree_build.measure, "The measure: an int64 or double column")->required();
  hb->add_option("--out", htree_build.out, "Directory of the tree (snapshot and batch log)")->required();
  hb->add_flag("--force", htree_build.force, "Replace a tree already in --out");
  add_htree_knobs(hb, htree_build, true);
  HTreeUpdateOptions htree_update;
  auto* hu = htree->add_subcommand("update", "Append a batch of tuples (a CSV: every dimension and the measure)");
  hu->add_option("--tree", htree_update.tree, "Directory of the tree")->required();
  hu->add_option("--csv", htree_update.csv, "The batch")->required();
  add_htree_knobs(hu, htree_update, true);
  HTreeInfoOptions htree_info;
  auto* hi = htree->add_subcommand("info", "Describe a tree: levels, values, nodes, snapshot and log");
  hi->add_option("--tree", htree_info.tree, "Directory of the tree")->required();
  HTreeQueryOptions htree_query;
  auto* hq = htree->add_subcommand("query",
                                   "Answer a batch of queries (a CSV naming every dimension, each field a value or *): "
                                   "count, sum, min, max, avg of the measure, a row per query on stdout");
  hq->add_option("--tree", htree_query.tree, "Directory of the tree")->required();
  hq->add_option("--queries", htree_query.queries, "The query CSV")->required();
  add_htree_knobs(hq, htree_query, false);
  auto* table = app.add_subcommand("table", "Relational tables in a database directory: load a CSV, list, describe");
  table->require_subcommand(1);
  TableLoadOptions table_load;
  auto* tl = table->add_subcommand("load", "Load a CSV file (RFC 4180, a header line) as a table of the database");
  tl->add_option("--db", table_load.db, "Database directory (created if missing)")->required();
  tl->add_option("--name", table_load.name, "Table name (letters, digits, _); replaces a table of that name")->required();
  tl->add_option("--csv", table_load.csv, "CSV file")->required();
  tl->add_option("--types", table_load.types,
                 "JSON file {\"column\": \"int64|double|date|string\", ...}; other columns' types are inferred");
  tl->add_option("--sort-by", table_load.sort_by, "Columns to store the rows sorted by, e.g. c1,c2")->delimiter(',');
  TableListOptions table_list;
  auto* tls = table->add_subcommand("list", "List the tables of a database: rows, columns, size, sort order");
  tls->add_option("--db", table_list.db, "Database directory")->required();
  TableInfoOptions table_info;
  auto* ti = table->add_subcommand("info", "Describe tables (columns, types, distinct strings, NULLs), reading each whole");
  ti->add_option("--db", table_info.db, "Database directory")->required();
  ti->add_option("--name", table_info.name, "Only this table");
  TableSortOptions table_sort;
  auto* ts = table->add_subcommand("sort", "Sort a stored table by columns and store it again, its order recorded");
  ts->add_option("--db", table_sort.db, "Database directory")->required();
  ts->add_option("--name", table_sort.name, "The table")->required();
  ts->add_option("--by", table_sort.by, "Columns, c1,c2,... (ascending, NULLs first)")->required()->delimiter(',');
  ts->add_option("--out", table_sort.out, "Store the sorted rows as this table (default: replace the table)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  try {
    if (*c) return run_create(create);
    if (*q) return run_query(query);
    if (*w) return run_write(write);
    if (*i) return run_info(info);
    if (*ck) return run_check(check_store);
    if (*g) return run_generate(gen);
    if (*b) return run_bench(bench);
    if (*sc) return run_selfcheck(check);
    if (*cal) return run_calibrate(calibrate);
    if (*sv) return run_serve(serve);
    if (*sh) return run_shell(shell);
    if (*sq) return run_sql(sql);
    if (*go) return run_groupby_ordered(gbo);
    if (*op) return run_optimize(opt);
    if (*gs) return run_groupby_shared(gbs);
    if (*jn) return run_join_shared(js);
    if (*cb) return run_cube_build(cube_build);
    if (*hb) return run_htree_build(htree_build);
    if (*hu) return run_htree_update(htree_update);
    if (*hi) return run_htree_info(htree_info);
    if (*hq) return run_htree_query(htree_query);
    if (*tl) return run_table_load(table_load);
    if (*tls) return run_table_list(table_list);
    if (*ti) return run_table_info(table_info);
    if (*ts) return run_table_sort(table_sort);
  } catch (const gpuolap::InputError& e) {
    std::fprintf(stderr, "gpuolap: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpuolap: internal error: %s\n", e.what());
    return 1;
  }
  return 1;
}
