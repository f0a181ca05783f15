#include "htree_api.hpp"

#include <chrono>
#include <mutex>
#include <sstream>

#include "gpuolap/elapsed.hpp"
#include "htree/htree_io.hpp"

namespace gpuolap::server {
namespace {
using Clock = std::chrono::steady_clock;
}  // namespace

HTreeApi::HTreeApi(const std::filesystem::path& dir, htree::Engine engine, htree::GpuKnobs knobs)
    : tree_(dir, engine, knobs), shared_queries_(tree_.engine() == htree::Engine::CpuParallel) {
  // The server takes appends: the GPU's room for them is made before the first.
  tree_.reserve_for_updates();
}

nlohmann::json HTreeApi::append(const std::string& csv_body) {
  const auto start = Clock::now();
  std::unique_lock lock(mutex_);
  const table::Table batch = htree::parse_batch_table(tree_.meta(), csv_body, "the batch");
  const double parse_ms = ms_since(start);
  tree_.append(batch, "the batch");
  const htree::AppendTimes& t = tree_.last_append();
  return {{"appended", batch.row_count()},
          {"tuples", tree_.meta().tuples},
          {"leaves", tree_.leaf_count()},
          {"nodes", tree_.node_count()},
          {"ms", ms_since(start)},
          {"parse_ms", parse_ms},
          {"code_ms", t.code_ms},
          {"log_ms", t.log_ms},
          {"apply_ms", t.apply_ms}};
}

HTreeQueryAnswer HTreeApi::query(const std::string& csv_body) {
  const auto start = Clock::now();
  HTreeQueryAnswer a;
  auto run = [&] {
    const auto begun = Clock::now();
    // The batch is coded straight into the engine's query memory (pinned
    // on gpu, where the kernels read it and write its answers).
    const htree::QueryFile q = htree::parse_query_csv(tree_.meta(), csv_body, "the queries", tree_.query_memory());
    a.parse_ms = ms_since(begun);
    const auto asked = Clock::now();
    const htree::Answers answers = tree_.query(q.batch, &a.stats);
    a.query_ms = ms_since(asked);
    const auto answered = Clock::now();
    a.csv = htree::answers_csv(q, answers);
    a.write_ms = ms_since(answered);
  };
  if (shared_queries_) {
    std::shared_lock lock(mutex_);
    run();
  } else {
    std::unique_lock lock(mutex_);
    run();
  }
  a.ms = ms_since(start);
  return a;
}

nlohmann::json HTreeApi::info() {
  std::shared_lock lock(mutex_);
  const htree::HTree& t = tree_.meta();
  return {{"dimensions", t.dimensions},
          {"measure", t.measure},
          {"tuples", t.tuples},
          {"leaves", tree_.leaf_count()},
          {"nodes", tree_.node_count()},
          {"engine", std::string(htree::engine_name(tree_.engine()))}};
}

}  // namespace gpuolap::server
