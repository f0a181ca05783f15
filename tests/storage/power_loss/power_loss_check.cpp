#include "power_loss_check.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "disk_model.hpp"
#include "gpuolap/cube_store.hpp"
#include "gpuolap/durable_cube.hpp"

extern char** environ;

namespace gpuolap::power_loss {

namespace fs = std::filesystem;

namespace {

constexpr size_t kFailuresKept = 10;

// A cube's facts as bytes: keys, then each measure's values (compared
// bitwise, so that an empty measure, NaN, equals only an empty one).
std::string facts_bytes(const FactTable& t) {
  std::string out(reinterpret_cast<const char*>(t.keys().data()), t.size() * 8);
  for (size_t m = 0; m < t.measure_count(); ++m) out.append(reinterpret_cast<const char*>(t.values(m).data()), t.size() * 8);
  return out;
}

// Runs the workload under the shim on the store root/store; `workload_args`
// after the marks file: WRITES CHECKPOINT_EVERY [AFTER] (the seed is added).
void run_workload(const CheckOptions& o, const fs::path& root, const fs::path& marks, const fs::path& trace,
                  const std::vector<std::string>& workload_args) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string var = *e;
    if (var.rfind("LD_PRELOAD=", 0) != 0 && var.rfind("POWER_LOSS_", 0) != 0) env.push_back(var);
  }
  env.push_back("LD_PRELOAD=" + o.shim.string());
  env.push_back(fmt::format("{}={}", kWatchedDirVariable, root.string()));
  env.push_back(fmt::format("{}={}", kTraceVariable, trace.string()));
  env.push_back(fmt::format("{}={}", kMarksVariable, marks.string()));
  if (!o.hide.empty()) env.push_back(fmt::format("{}={}", kHideVariable, o.hide));
  std::vector<std::string> args = {o.workload.string(), (root / "store").string(), marks.string(),
                                   workload_args.at(0), workload_args.at(1), std::to_string(o.shape.seed)};
  if (workload_args.size() > 2) args.push_back(workload_args[2]);
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  pid_t pid;
  if (const int err = posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()); err != 0)
    throw std::runtime_error(fmt::format("cannot start {}: {}", args[0], std::strerror(err)));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(fmt::format("the workload {} failed (wait status {})", args[0], status));
}

Tree read_tree(const fs::path& root) {
  Tree t;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const std::string rel = fs::relative(entry.path(), root).string();
    if (entry.is_directory()) {
      t[rel] = Entry{true, ""};
    } else {
      std::ifstream in(entry.path(), std::ios::binary);
      t[rel] = Entry{false, std::string(std::istreambuf_iterator<char>(in), {})};
    }
  }
  return t;
}

void materialize(const Tree& tree, const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& [path, entry] : tree) {  // a directory sorts before what it holds
    if (entry.directory) {
      fs::create_directory(dir / path);
    } else {
      std::ofstream out(dir / path, std::ios::binary);
      out.write(entry.contents.data(), static_cast<std::streamsize>(entry.contents.size()));
      if (!out) throw std::runtime_error(fmt::format("cannot write {}", (dir / path).string()));
    }
  }
}

// What the workload has told at a point of its trace.
struct Progress {
  bool created = false;  // the store was created (save_store returned)
  uint64_t begun = 0;    // records appended or about to be
  uint64_t acknowledged = 0;
  uint64_t checkpoints = 0;
};

void read_marks(const std::string& text, Progress& p) {
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    at = end + 1;
    if (line == "created")
      p.created = true;
    else if (line == "checkpoint")
      ++p.checkpoints;
    else if (line.rfind("begin ", 0) == 0)
      p.begun = std::stoull(line.substr(6));
    else if (line.rfind("ack ", 0) == 0)
      p.acknowledged = std::stoull(line.substr(4));
    else
      throw std::runtime_error(fmt::format("unknown mark \"{}\"", line));
  }
}

// What opening one crash state found.
struct Opened {
  std::string bad;     // "" when it passed; else what is wrong
  uint64_t lost = 0;   // acknowledged writes missing
  uint64_t found = 0;  // the write after which the store holds the cube
  bool repaired = false;  // the writer's opening had something to repair (a bad tail, a stale log)
};

// Opens the store in a crash state and checks what it holds.
class CutChecker {
 public:
  CutChecker(const CheckOptions& o, uint64_t writes) : options_(o) {
    Cube start = workload_cube();
    FactStore facts(start.schema.codec(), start.facts);
    states_.push_back(facts_bytes(facts.table()));
    for (uint64_t n = 1; n <= writes; ++n) {
      apply_record(facts, workload_record(start.schema, o.shape.seed, n));
      states_.push_back(facts_bytes(facts.table()));
    }
  }

  // The store in `store`, at a cut where the workload had told `p`.
  Opened open(const fs::path& store, const Progress& p) const {
    Opened r;
    if (!store_exists(store)) {
      if (!p.created) return r;
      r.lost = p.acknowledged;
      r.bad = "the store is gone";
      return r;
    }
    const uint64_t low = p.acknowledged, high = p.created ? std::max(p.begun, p.acknowledged) : 0;
    try {
      r.found = which(load_cube_with_log(store).facts, low, high, "a reader", r);
    } catch (const std::exception& e) {
      r.bad = fmt::format("a reader cannot open the store: {}", e.what());
      return r;
    }
    if (!r.bad.empty() || !options_.writer_recovery) return r;
    try {
      DurableCube writer(store);
      r.repaired = !writer.recovery().problem.empty() || writer.recovery().bytes_dropped > 0;
      if (which(writer.store().table(), r.found, r.found, "a writer", r); !r.bad.empty()) return r;
    } catch (const std::exception& e) {
      r.bad = fmt::format("a writer cannot open the store: {}", e.what());
      return r;
    }
    try {
      which(load_cube_with_log(store).facts, r.found, r.found, "a reader after the writer's repair", r);
    } catch (const std::exception& e) {
      r.bad = fmt::format("after a writer opened it, a reader cannot open the store: {}", e.what());
    }
    return r;
  }

 private:
  // The workload state in [low, high] that `facts` equals; else sets r.bad.
  uint64_t which(const FactTable& facts, uint64_t low, uint64_t high, const char* who, Opened& r) const {
    const std::string bytes = facts_bytes(facts);
    for (uint64_t n = low; n <= high; ++n)
      if (states_[n] == bytes) return n;
    for (uint64_t n = low; n-- > 0;) {
      if (states_[n] != bytes) continue;
      r.lost = low - n;
      r.bad = fmt::format("{} found the cube after write {}: {} acknowledged writes lost", who, n, r.lost);
      return n;
    }
    r.bad = fmt::format("{} found a cube that is after no prefix of the writes (expected the cube after write {}{}): a "
                        "write half-applied or a wrong value",
                        who, low, high > low ? fmt::format(" to {}", high) : "");
    return low;
  }

  const CheckOptions& options_;
  std::vector<std::string> states_;  // the facts after each prefix of the writes
};

// The workload's trace in `root` (which holds `initial`), checked: the
// tree it leaves rebuilt from the trace must be the real one.
std::vector<Event> recorded_run(const CheckOptions& o, const fs::path& root, const Tree& initial,
                                const std::vector<std::string>& workload_args) {
  const fs::path marks = root.parent_path() / "marks", trace = root.parent_path() / "trace";
  run_workload(o, root, marks, trace, workload_args);
  std::vector<Event> events = read_trace(trace);
  DiskModel model(fs::absolute(root).lexically_normal().string(), initial);
  for (const Event& e : events) model.apply(e);
  const Tree real = read_tree(root), rebuilt = model.current();
  for (const auto& [path, entry] : real) {
    auto it = rebuilt.find(path);
    if (it == rebuilt.end() || !(it->second == entry))
      throw std::runtime_error(fmt::format("the trace is incomplete: {} differs from {} rebuilt from the trace",
                                           (root / path).string(), path));
  }
  for (const auto& [path, entry] : rebuilt)
    if (!real.count(path))
      throw std::runtime_error(fmt::format("the trace is incomplete: it leaves {}, which is not on the disk", path));
  return events;
}

class PowerLossCheck {
 public:
  explicit PowerLossCheck(const CheckOptions& o)
      : options_(o), checker_(o, o.shape.writes + kRecoveryWrites) {}

  CheckReport run() {
    const fs::path root = options_.work / "disk";
    fs::create_directories(root);
    const std::vector<Event> events =
        recorded_run(options_, root, {}, {std::to_string(options_.shape.writes),
                                          std::to_string(options_.shape.checkpoint_every)});
    report_.events = events.size();
    const Progress end = check_cuts(events, root, {}, Progress{}, options_.work / "cut", "");
    if (end.acknowledged != options_.shape.writes)
      throw std::runtime_error(
          fmt::format("the workload acknowledged {} of {} writes", end.acknowledged, options_.shape.writes));
    report_.acknowledged = end.acknowledged;
    report_.checkpoints = end.checkpoints;
    fs::remove_all(options_.work / "cut");
    fs::remove_all(options_.work / "recovery");
    return report_;
  }

 private:
  // Writes made after recovering from a cut, a checkpoint among them.
  static constexpr uint64_t kRecoveryWrites = 6;
  static constexpr uint64_t kRecoveryCheckpointEvery = 4;

  // Checks every cut of `events` (recorded in `root`, which held
  // `initial`), the workload having told `progress` before the first;
  // `context` names the cut recovered from, for a nested run. Returns what
  // the workload had told by the end.
  Progress check_cuts(const std::vector<Event>& events, const fs::path& root, const Tree& initial, Progress progress,
                      const fs::path& cut, const std::string& context) {
    const bool nested = !context.empty();
    DiskModel model(fs::absolute(root).lexically_normal().string(), initial);
    auto check_cut = [&](size_t event) {
      ++(nested ? report_.recovery_cut_points : report_.cut_points);
      for (const CrashState& state : model.crash_states()) {
        ++(nested ? report_.recovery_crash_states : report_.crash_states);
        materialize(state.tree, cut);
        const Opened opened = checker_.open(cut / "store", progress);
        const std::string where = fmt::format("{}cut after event {} of {} ({} writes acknowledged), {}", context, event,
                                              events.size(), progress.acknowledged, state.name);
        if (!opened.bad.empty()) {
          ++report_.failed_states;
          report_.acknowledged_lost = std::max(report_.acknowledged_lost, opened.lost);
          if (report_.failures.size() < kFailuresKept) report_.failures.push_back(where + ": " + opened.bad);
          continue;
        }
        if (!nested && opened.repaired && options_.recovery_every > 0 && repaired_++ % options_.recovery_every == 0)
          check_recovery(state.tree, opened.found, where);
      }
    };
    bool changed = false;
    for (size_t i = 0; i < events.size(); ++i) {
      const Event& e = events[i];
      if (e.kind == EventKind::mark) {
        read_marks(e.data, progress);
        continue;
      }
      const bool changes = DiskModel::changes_disk(e);
      if (changes && changed) check_cut(i);
      model.apply(e);
      changed = changed || changes;
    }
    if (changed) check_cut(events.size());
    return progress;
  }

  // A power cut left `tree`, whose store holds the cube after write
  // `found`: a writer opens it (repairing it) and goes on writing, and
  // every cut of that is checked as well.
  void check_recovery(const Tree& tree, uint64_t found, const std::string& where) {
    ++report_.recovery_runs;
    const fs::path base = options_.work / "recovery", root = base / "disk";
    fs::remove_all(base);
    materialize(tree, root);
    const std::vector<Event> events = recorded_run(
        options_, root, tree,
        {std::to_string(kRecoveryWrites), std::to_string(kRecoveryCheckpointEvery), std::to_string(found)});
    Progress progress;
    progress.created = true;
    progress.begun = progress.acknowledged = found;
    check_cuts(events, root, tree, progress, base / "cut", "after " + where + ", recovered from: ");
  }

  const CheckOptions& options_;
  const CutChecker checker_;
  CheckReport report_;
  uint64_t repaired_ = 0;  // crash states whose opening repaired the store
};

}  // namespace

fs::path fast_temp_directory() {
  const fs::path shm = "/dev/shm";
  std::error_code ec;
  if (fs::is_directory(shm, ec) && ::access(shm.c_str(), W_OK) == 0) return shm;
  return fs::temp_directory_path();
}

CheckReport check_power_loss(const CheckOptions& o) {
  const auto started = std::chrono::steady_clock::now();
  fs::remove_all(o.work);
  CheckReport report = PowerLossCheck(o).run();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace gpuolap::power_loss
