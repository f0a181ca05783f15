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

void run_workload(const CheckOptions& o, const fs::path& root, const fs::path& marks, const fs::path& trace) {
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
                                   std::to_string(o.shape.writes), std::to_string(o.shape.checkpoint_every),
                                   std::to_string(o.shape.seed)};
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

class CutChecker {
 public:
  CutChecker(const CheckOptions& o, const fs::path& store) : options_(o), store_(store) {
    Cube start = workload_cube();
    FactStore facts(start.schema.codec(), start.facts);
    states_.push_back(facts_bytes(facts.table()));
    for (uint64_t n = 1; n <= o.shape.writes; ++n) {
      apply_record(facts, workload_record(start.schema, o.shape.seed, n));
      states_.push_back(facts_bytes(facts.table()));
    }
  }

  // "" when the store in `store_` passes at a cut where the workload had
  // told `p`; else what is wrong. `lost`: acknowledged writes missing.
  std::string check(const Progress& p, uint64_t& lost) const {
    lost = 0;
    if (!store_exists(store_)) {
      if (!p.created) return "";
      lost = p.acknowledged;
      return "the store is gone";
    }
    const uint64_t low = p.acknowledged, high = p.created ? std::max(p.begun, p.acknowledged) : 0;
    uint64_t found = 0;
    std::string bad;
    try {
      found = which(load_cube_with_log(store_).facts, low, high, "a reader", lost, bad);
    } catch (const std::exception& e) {
      return fmt::format("a reader cannot open the store: {}", e.what());
    }
    if (!bad.empty() || !options_.writer_recovery) return bad;
    try {
      DurableCube writer(store_);
      if (which(writer.store().table(), found, found, "a writer", lost, bad); !bad.empty()) return bad;
    } catch (const std::exception& e) {
      return fmt::format("a writer cannot open the store: {}", e.what());
    }
    try {
      which(load_cube_with_log(store_).facts, found, found, "a reader after the writer's repair", lost, bad);
    } catch (const std::exception& e) {
      return fmt::format("after a writer opened it, a reader cannot open the store: {}", e.what());
    }
    return bad;
  }

 private:
  // The workload state in [low, high] that `facts` equals; else sets `bad`.
  uint64_t which(const FactTable& facts, uint64_t low, uint64_t high, const char* who, uint64_t& lost,
                 std::string& bad) const {
    const std::string bytes = facts_bytes(facts);
    for (uint64_t n = low; n <= high; ++n)
      if (states_[n] == bytes) return n;
    for (uint64_t n = low; n-- > 0;) {
      if (states_[n] != bytes) continue;
      lost = low - n;
      bad = fmt::format("{} found the cube after write {}: {} acknowledged writes lost", who, n, lost);
      return n;
    }
    bad = fmt::format("{} found a cube that is after no prefix of the writes (expected the cube after write {}{}): a "
                      "write half-applied or a wrong value",
                      who, low, high > low ? fmt::format(" to {}", high) : "");
    return low;
  }

  const CheckOptions& options_;
  fs::path store_;
  std::vector<std::string> states_;  // the facts after each prefix of the writes
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
  const fs::path root = o.work / "disk", marks = o.work / "marks", trace = o.work / "trace",
                 cut = o.work / "cut";
  fs::create_directories(root);
  run_workload(o, root, marks, trace);
  const std::vector<Event> events = read_trace(trace);

  CheckReport report;
  report.events = events.size();
  DiskModel model(fs::absolute(root).lexically_normal().string());
  const CutChecker checker(o, cut / "store");
  Progress progress;
  auto check_cut = [&](size_t event) {
    ++report.cut_points;
    for (const CrashState& state : model.crash_states()) {
      ++report.crash_states;
      materialize(state.tree, cut);
      uint64_t lost = 0;
      const std::string bad = checker.check(progress, lost);
      if (bad.empty()) continue;
      ++report.failed_states;
      report.acknowledged_lost = std::max(report.acknowledged_lost, lost);
      if (report.failures.size() < kFailuresKept)
        report.failures.push_back(fmt::format("cut after event {} of {} ({} writes acknowledged), {}: {}", event,
                                              events.size(), progress.acknowledged, state.name, bad));
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
  fs::remove_all(cut);

  // The trace must hold every change the workload made, or the cuts above
  // were rebuilt from less than happened.
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
  if (progress.acknowledged != o.shape.writes)
    throw std::runtime_error(fmt::format("the workload acknowledged {} of {} writes", progress.acknowledged,
                                         o.shape.writes));
  report.acknowledged = progress.acknowledged;
  report.checkpoints = progress.checkpoints;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace gpuolap::power_loss
