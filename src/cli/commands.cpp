#include "commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "generate/table_generators.hpp"
#include "gpuolap/aggregation_map.hpp"
#include "gpuolap/cube_store.hpp"
#include "gpuolap/durable_cube.hpp"
#include "gpuolap/elapsed.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/generate.hpp"
#include "gpuolap/store_lock.hpp"
#include "olap/over_limit.hpp"
#include "progress.hpp"
#include "table/database.hpp"

namespace gpuolap::cli {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
// A cube from a store, or from a schema and a facts CSV.
Cube load_cube(const std::string& cube_dir, const std::string& schema_path, const std::string& facts_path,
               LogRecovery recovery = LogRecovery::refuse_corruption) {
  if (!cube_dir.empty()) {
    Progress progress("loading " + cube_dir);
    return load_cube_with_log(
        cube_dir, progress.callback(),
        [&](const std::string& problem) {
          std::cerr << fmt::format("gpuolap: warning: {}: {}\n", log_file(cube_dir).string(), problem);
        },
        recovery);
  }
  if (schema_path.empty() || facts_path.empty())
    throw InputError("give --cube DIR, or --schema S.json and --facts F.csv");
  Schema schema = read_schema_file(schema_path);
  FactRows rows = [&] {
    Progress progress("reading " + facts_path);
    return read_facts_csv(schema, facts_path, true, progress.callback());
  }();
  FactTable facts = build_fact_table(schema, rows, facts_path);
  return Cube{std::move(schema), std::move(facts)};
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

}  // namespace

int run_create(const CreateOptions& o) {
  if (store_exists(o.out) && !o.force)
    throw InputError(fmt::format("{}: already holds a cube store (use --force to replace it)", o.out));
  Cube cube = load_cube("", o.schema, o.facts);
  const StoreLock lock(o.out);
  try {
    Progress progress("writing " + o.out);
    save_store(o.out, cube.schema, cube.facts, progress.callback());
    fs::remove(log_file(o.out));  // a replaced store's log is not the new one's
  } catch (...) {
    std::error_code ec;
    if (lock.created()) fs::remove_all(o.out, ec);
    throw;
  }
  std::cerr << fmt::format("created {}: cube '{}', {} filled cells\n", o.out, cube.schema.name(), cube.facts.size());
  return 0;
}

int run_query(const QueryOptions& o) {
  const auto& names = engine_names();
  if (std::find(names.begin(), names.end(), o.engine) == names.end())
    make_engine(o.engine, 0);  // throws the unknown-engine error before any loading
  auto t = Clock::now();
  Cube cube = load_cube(o.cube, o.schema, o.facts, o.recovery);
  const double load_ms = ms_since(t);
  const AreaQuery query = read_query_file(cube.schema, o.query);
  // As the server does: an area past the limit is refused before it costs
  // minutes and gigabytes (40.8 M targets ran 12 minutes past 3 GB).
  if (const double cells = olap::target_cells(query); o.max_cells > 0 && cells > static_cast<double>(o.max_cells))
    throw InputError(
        fmt::format("{}: the area has {:.0f} target cells, more than --max-cells {}", o.query, cells, o.max_cells));
  EngineChoice choice = make_engine(o.engine, cube.facts.size(), o.gpu);
  choice.engine->time_stages(o.timing);

  t = Clock::now();
  const AggregationMap map(cube.schema, query);
  const double map_ms = ms_since(t);
  t = Clock::now();
  const AreaResult result = choice.engine->run(cube.facts, map, query);
  const double run_ms = ms_since(t);
  t = Clock::now();
  write_result_csv(cube.schema, query, result, std::cout);
  std::cout.flush();
  const double out_ms = ms_since(t);

  if (o.timing) {
    std::cerr << fmt::format("engine: {}{}\n", choice.engine->name(),
                             choice.reason.empty() ? "" : " (auto: " + choice.reason + ")");
    std::cerr << fmt::format(
        "timing: load {:.3f} ms, map {:.3f} ms, aggregate {:.3f} ms, output {:.3f} ms; "
        "{} facts, {} target cells, {} non-empty; {:.1f} M facts/s\n",
        load_ms, map_ms, run_ms, out_ms, cube.facts.size(), map.target_count(), result.targets.size(),
        run_ms > 0 ? static_cast<double>(cube.facts.size()) / run_ms / 1e3 : 0.0);
    if (const std::string plan = choice.engine->last_plan(); !plan.empty())
      std::cerr << fmt::format("plan: {}\n", plan);
    std::string stages;
    for (const auto& [stage, ms] : choice.engine->stages()) stages += fmt::format("{}{} {:.3f} ms", stages.empty() ? "" : ", ", stage, ms);
    if (!stages.empty()) std::cerr << fmt::format("stages: {}\n", stages);
  }
  return 0;
}

namespace {

// No cell may hold an infinity (the facts reader refuses them): refuses an
// add whose running sum overflows a double, naming the row where it does.
void check_adds_stay_finite(const Schema& schema, const FactStore& store, const LogRecord& record,
                            const std::vector<uint64_t>& lines, const std::string& where) {
  const auto overflow = first_overflow(store, record);
  if (!overflow) return;
  const WriteBatch& batch = record.batches[overflow->batch];
  throw InputError(fmt::format("{}: line {}: adding {} to {} overflows a double", where, lines[overflow->row],
                               batch.values[overflow->measure][overflow->row], schema.measures()[overflow->measure]));
}

}  // namespace

// Rows go to the write-ahead log (synced) and the store's snapshot is
// rewritten only when the log has grown past kCheckpointLogBytes.
int run_write(const WriteOptions& o) {
  if (!store_exists(o.cube)) throw InputError(fmt::format("{}: no cube store here", o.cube));
  std::unique_ptr<DurableCube> cube = [&] {
    Progress progress("loading " + o.cube);
    return std::make_unique<DurableCube>(
        o.cube, progress.callback(),
        [&] {
          std::cerr << fmt::format("{}: waiting for the store lock (another writer or a running server holds it)\n",
                                   o.cube);
        },
        o.recovery);
  }();
  if (!cube->recovery().problem.empty())
    std::cerr << fmt::format("gpuolap: warning: {}: {}\n", log_file(o.cube).string(), cube->recovery().problem);
  const WriteMode mode = o.mode == "set" ? WriteMode::set : o.mode == "add" ? WriteMode::add : WriteMode::remove;
  FactRows rows = [&] {
    Progress progress("reading " + o.facts);
    return read_facts_csv(cube->schema(), o.facts, mode != WriteMode::remove, progress.callback());
  }();
  if (mode == WriteMode::set) check_unique_cells(rows, o.facts);

  const size_t before = cube->store().table().size();
  LogRecord record;
  WriteBatch& batch = record.batches.emplace_back();
  batch.mode = mode;
  batch.keys = std::move(rows.keys);
  batch.present = mode == WriteMode::remove ? std::vector<bool>(cube->schema().measures().size(), false) : rows.present;
  batch.values.resize(batch.present.size());
  for (size_t m = 0; m < batch.present.size(); ++m)
    if (batch.present[m]) batch.values[m] = std::move(rows.values[m]);
  check_adds_stay_finite(cube->schema(), cube->store(), record, rows.lines, o.facts);
  cube->append(record);
  cube->sync();
  apply_record(cube->store(), record);
  const size_t after = cube->store().table().size();
  if (cube->log_bytes() > kCheckpointLogBytes) {
    Progress progress("writing " + o.cube);
    cube->checkpoint(progress.callback());
  }
  std::cerr << fmt::format("{}: {} rows written ({}); filled cells {} -> {}\n", o.cube, batch.size(), o.mode,
                           before, after);
  return 0;
}

int run_info(const InfoOptions& o) {
  Cube cube = load_cube(o.cube, "", "", o.recovery);
  const Schema& s = cube.schema;
  std::cout << fmt::format("cube: {}\n", s.name());
  std::cout << fmt::format("dimensions: {}\n", s.dimension_count());
  for (const Dimension& d : s.dimensions()) {
    std::cout << fmt::format("  {}: {} elements ({} base, {} consolidated), depth {}, {} key bits\n", d.name(),
                             d.element_count(), d.base_count(), d.element_count() - d.base_count(), d.depth(),
                             d.key_bits());
  }
  std::string measures;
  for (const auto& m : s.measures()) measures += (measures.empty() ? "" : ", ") + m;
  std::cout << fmt::format("measures: {}\n", measures);
  std::cout << fmt::format("key bits: {} of 64\n", s.codec().total_bits());
  std::cout << fmt::format("base cells: {:.6g}\n", s.base_cell_count());
  std::cout << fmt::format("filled cells: {}\n", cube.facts.size());
  std::cout << fmt::format("fill ratio: {:.6g} %\n", 100.0 * static_cast<double>(cube.facts.size()) / s.base_cell_count());
  std::cout << fmt::format("pages: {} of {} cells\n", cube.facts.page_count(), cube.facts.page_size());
  std::cout << fmt::format("memory: {} ({:.2f} bytes per filled cell)\n", human_bytes(static_cast<double>(cube.facts.bytes())),
                           cube.facts.size() ? static_cast<double>(cube.facts.bytes()) / static_cast<double>(cube.facts.size()) : 0.0);
  std::cout << fmt::format("store file: {}\n", human_bytes(static_cast<double>(fs::file_size(store_file(o.cube)))));
  std::error_code ec;
  const auto log_size = fs::file_size(log_file(o.cube), ec);
  std::cout << fmt::format("write-ahead log: {}\n", ec ? "none" : human_bytes(static_cast<double>(log_size)));
  // The gpu engine uploads the key column and the queried measures' columns,
  // one allocation each, on the first query that needs them.
  const double device_bytes = static_cast<double>(cube.facts.size()) * 8.0 * (1.0 + static_cast<double>(s.measures().size()));
  std::cout << fmt::format("device memory for the gpu engine: {} (keys and every measure column; {:.1f} bytes per cell "
                           "per measure)\n",
                           human_bytes(device_bytes), cube.facts.size() ? device_bytes / static_cast<double>(cube.facts.size()) / static_cast<double>(s.measures().size()) : 0.0);
  return 0;
}

namespace {

int generate_tables_into_db(const GenerateOptions& o) {
  if (o.db.empty()) throw InputError(fmt::format("generate {}: give --db DIR, the database to write its tables into", o.kind));
  if (!o.out.empty()) throw InputError(fmt::format("generate {}: writes tables into --db, not a cube into --out", o.kind));
  const auto start = Clock::now();
  TableGeneratorOptions options;
  options.scale = o.scale;
  options.seed = o.seed;
  options.theta = o.theta.value_or(o.kind == "htree" ? 0.0 : 1.0);
  options.shape = o.shape;
  options.cardinality = o.cardinality;
  const std::vector<table::Table> tables = generate_tables(o.kind, options);
  const double generated_ms = ms_since(start);
  const table::Database db(o.db, true);
  for (const table::Table& t : tables) {
    db.store(t);
    std::cerr << fmt::format("generated {}: {} rows, {} columns -> {}\n", t.name, t.row_count(), t.columns.size(),
                             db.table_path(t.name).string());
  }
  std::cerr << fmt::format("generate {}: {:.2f} s generating, {:.2f} s writing\n", o.kind, generated_ms / 1000,
                           (ms_since(start) - generated_ms) / 1000);
  return 0;
}

}  // namespace

int run_generate(const GenerateOptions& o) {
  if (is_table_generator_kind(o.kind)) return generate_tables_into_db(o);
  if (o.out.empty()) throw InputError(fmt::format("generate {}: give --out DIR, the directory of the cube", o.kind));
  if (!o.db.empty()) throw InputError(fmt::format("generate {}: writes a cube into --out, not tables into --db", o.kind));
  if (o.format == "store" && store_exists(o.out) && !o.force)
    throw InputError(fmt::format("{}: already holds a cube store (use --force to replace it)", o.out));
  // Either format writes schema.json and queries/ beside its facts: a cube
  // generated there before (or a store's schema file) would be overwritten
  // file by file, without a word, and a different kind would leave the old
  // kind's queries beside the new schema. Checked before generating, which
  // may take minutes.
  if (!o.force) {
    const fs::path out(o.out);
    for (const char* name : {"schema.json", "facts.csv", "queries"}) {
      std::error_code ec;
      if (fs::exists(out / name, ec))
        throw InputError(fmt::format("{}: already holds a generated cube ({} is there; use --force to replace it)",
                                     o.out, (out / name).string()));
    }
  }
  GeneratedCube cube = [&] {
    Progress progress("generating " + o.kind);
    return generate_cube(o.kind, o.scale, o.seed, progress.callback());
  }();
  const fs::path out(o.out);
  std::error_code ec;
  fs::create_directories(out / "queries", ec);
  if (ec) throw InputError(fmt::format("{}: cannot create directory: {}", o.out, ec.message()));

  auto write_file = [](const fs::path& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary);
    f << text;
    if (!f) throw InputError(fmt::format("{}: cannot write", path.string()));
  };
  write_file(out / "schema.json", schema_to_json(cube.schema));
  for (const NamedQuery& nq : cube.queries) write_file(out / "queries" / (nq.name + ".json"), nq.json + "\n");
  if (o.format == "store") {
    const StoreLock lock(out);
    Progress progress("writing store");
    save_store(out, cube.schema, cube.facts, progress.callback());
    fs::remove(log_file(out));
  } else {
    const fs::path facts_path = out / "facts.csv";
    std::ofstream f(facts_path, std::ios::binary);
    Progress progress("writing facts.csv");
    write_facts_csv(cube.schema, cube.facts, f, progress.callback());
    if (!f) throw InputError(fmt::format("{}: cannot write", facts_path.string()));
  }
  std::cerr << fmt::format("generated {} in {}: {} filled cells, {} queries\n", o.kind, o.out, cube.facts.size(),
                           cube.queries.size());
  return 0;
}

int run_check(const CheckOptions& o) {
  // The snapshot: a damaged one is an InputError naming what is wrong.
  const uint64_t checksum = store_checksum(o.cube);
  Cube cube = load_store(o.cube);
  std::cout << fmt::format("snapshot: {}: {} cells, checksum {:#018x}: whole\n", store_file(o.cube).string(),
                           cube.facts.size(), checksum);
  const LogContents log = check_log(o.cube, cube.schema, std::move(cube.facts), checksum);
  const std::string where = log_file(o.cube).string();
  if (!log.exists) {
    std::cout << fmt::format("log: {}: none (opening starts an empty one)\n", where);
    return 0;
  }
  if (log.is_stale(checksum)) {
    std::cout << fmt::format("log: {}: follows an older snapshot (a checkpoint was cut short); its {} records are "
                             "already in the snapshot and are not replayed\n",
                             where, log.records.size());
    return 0;
  }
  std::cout << fmt::format("log: {}: {} bytes, {} whole records replayable\n", where, log.file_bytes,
                           log.records.size());
  if (log.problem.empty()) return 0;
  if (log.records_after_problem == 0) {
    std::cout << fmt::format("log: a torn tail (a write cut short, never acknowledged): {}; opening for writing cuts "
                             "its {} bytes off into cube.wal.bad\n",
                             log.problem, log.file_bytes - log.valid_bytes);
    return 0;
  }
  std::cout << fmt::format("log: corruption inside the log: {}, and {} whole records follow it. Opening refuses the "
                           "store; --recovery discard-after-corruption opens it without them\n",
                           log.problem, log.records_after_problem);
  return 2;
}

}  // namespace gpuolap::cli
