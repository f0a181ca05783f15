#include "olap/cube_service.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpuolap/error.hpp"

namespace gpuolap::olap {

namespace {

// Most requests a group commit takes at once.
constexpr size_t kMaxGroup = 4096;

}  // namespace

CubeService::CubeService(std::unique_ptr<DurableCube> cube, std::string engine, uint64_t checkpoint_log_bytes,
                         GpuOptions gpu)
    : cube_(std::move(cube)), engine_name_(std::move(engine)), gpu_(std::move(gpu)),
      checkpoint_log_bytes_(checkpoint_log_bytes) {
  snapshot_ = cube_->store().snapshot();
  // Fails here, at start, for an engine this machine lacks.
  EngineChoice choice = make_engine(engine_name_, snapshot_->size(), gpu_);
  if (choice.engine->name().rfind("gpu", 0) == 0) shared_engine_ = std::move(choice.engine);
  stats_.log_bytes = cube_->log_bytes();
  stats_.last_sequence = cube_->recovery().records_replayed;  // numbered 1, 2, ... in the log
  committer_ = std::thread([this] { commit_loop(); });
}

CubeService::~CubeService() {
  {
    std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  committer_.join();
}

std::shared_ptr<const FactTable> CubeService::snapshot() const {
  std::lock_guard lock(snapshot_mutex_);
  return snapshot_;
}

ServiceStats CubeService::stats() const {
  std::lock_guard lock(snapshot_mutex_);
  return stats_;
}

AreaResult CubeService::run(const FactTable& facts, const AggregationMap& map, const AreaQuery& query) {
  if (shared_engine_) {
    std::lock_guard lock(engine_mutex_);
    return shared_engine_->run(facts, map, query);
  }
  return make_engine(engine_name_, facts.size(), gpu_).engine->run(facts, map, query);
}

WriteOutcome CubeService::write(Resolver resolve) {
  std::future<WriteOutcome> done;
  {
    std::lock_guard lock(queue_mutex_);
    if (!broken_.empty()) throw std::runtime_error(broken_);
    Request& r = queue_.emplace_back(Request{std::move(resolve), {}});
    done = r.done.get_future();
  }
  queue_cv_.notify_one();
  return done.get();
}

void CubeService::save() {
  write(Resolver{});
}

void CubeService::commit_loop() {
  for (;;) {
    std::vector<Request> group;
    {
      std::unique_lock lock(queue_mutex_);
      queue_cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      while (!queue_.empty() && group.size() < kMaxGroup) {
        group.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    commit_group(group);
  }
}

void CubeService::commit_group(std::vector<Request>& group) {
  {
    std::lock_guard lock(queue_mutex_);
    if (!broken_.empty()) {
      for (auto& r : group) r.done.set_exception(std::make_exception_ptr(std::runtime_error(broken_)));
      return;
    }
  }
  const std::shared_ptr<const FactTable> base = snapshot();
  const size_t measures = schema().measures().size();
  Overlay overlay;
  const CellReader reader(*base, overlay);
  // Resolve in arrival order; a refused request leaves no trace.
  std::vector<std::optional<LogRecord>> records(group.size());
  std::vector<std::exception_ptr> errors(group.size());
  for (size_t i = 0; i < group.size(); ++i) {
    if (!group[i].resolve) continue;
    try {
      LogRecord record = group[i].resolve(reader);
      lay_over(overlay, reader, record, measures);
      records[i] = std::move(record);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  }
  std::vector<WriteOutcome> outcomes(group.size());
  try {
    bool any = false;
    for (size_t i = 0; i < group.size(); ++i) {
      if (!records[i] || records[i]->batches.empty()) continue;
      outcomes[i].sequence = cube_->append(*records[i]);
      for (const WriteBatch& b : records[i]->batches) outcomes[i].cells += b.size();
      any = true;
    }
    if (any) {
      cube_->sync();
      for (const auto& record : records)
        if (record) apply_record(cube_->store(), *record);
      auto table = cube_->store().snapshot();  // shared, not copied; records its changes for the GPU copy
      std::lock_guard lock(snapshot_mutex_);
      snapshot_ = std::move(table);
    }
    std::lock_guard lock(snapshot_mutex_);
    stats_.groups += 1;
    for (const auto& record : records) stats_.writes += record && !record->batches.empty();
    stats_.log_bytes = cube_->log_bytes();
    for (const WriteOutcome& o : outcomes) stats_.last_sequence = std::max(stats_.last_sequence, o.sequence);
  } catch (const std::exception& e) {
    // The log could not be written or synced: what it holds is unknown, so
    // acknowledge nothing of this group and take no more writes.
    const std::string why = fmt::format("the write-ahead log failed ({}); writes are refused until a restart", e.what());
    {
      std::lock_guard lock(queue_mutex_);
      broken_ = why;
    }
    for (auto& r : group) r.done.set_exception(std::make_exception_ptr(std::runtime_error(why)));
    return;
  }
  // The writes are durable now; a checkpoint that fails leaves them in the
  // log and fails only the save requests.
  const bool save_asked = std::any_of(group.begin(), group.end(), [](const Request& r) { return !r.resolve; });
  if (save_asked || cube_->log_bytes() > checkpoint_log_bytes_) {
    try {
      cube_->checkpoint();
      std::lock_guard lock(snapshot_mutex_);
      ++stats_.checkpoints;
      stats_.log_bytes = cube_->log_bytes();
      stats_.last_sequence = 0;  // the new log is empty
    } catch (...) {
      for (size_t i = 0; i < group.size(); ++i)
        if (!group[i].resolve) errors[i] = std::current_exception();
    }
  }
  for (size_t i = 0; i < group.size(); ++i) {
    if (errors[i])
      group[i].done.set_exception(errors[i]);
    else
      group[i].done.set_value(outcomes[i]);
  }
}

}  // namespace gpuolap::olap
