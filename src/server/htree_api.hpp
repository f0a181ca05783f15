#pragma once
// The H-tree's routes (a server started with --htree TREE):
//   POST /htree/append  body: a CSV batch (a header naming every dimension
//                       and the measure); answered once the batch is in the
//                       log and synced, and folded into the tree: a query
//                       after the answer sees it. A write: needs the token.
//   POST /htree/query   body: a CSV of queries (a header naming every
//                       dimension, each field a value or *); the answer is
//                       gpuolap htree query's CSV, and the X-HTree-* headers
//                       say how many queries were on the popular path, how
//                       many online and how many side-link nodes they visited.
// Requests run concurrently; the tree takes them one at a time on the GPU
// (one stream) and lets cpu-parallel queries share it between appends.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <shared_mutex>
#include <string>

#include "htree/durable_htree.hpp"

namespace gpuolap::server {

struct HTreeQueryAnswer {
  std::string csv;
  htree::QueryStats stats;
  double ms = 0;        // the request in the server, from before its lock
  double parse_ms = 0;  // the CSV parsed and coded
  double query_ms = 0;  // answered by the engine
  double write_ms = 0;  // the answer's CSV written
};

class HTreeApi {
 public:
  HTreeApi(const std::filesystem::path& dir, htree::Engine engine, htree::GpuKnobs knobs);

  // The batch appended: {"appended", "tuples", "leaves", "nodes", "ms"}.
  nlohmann::json append(const std::string& csv_body);
  HTreeQueryAnswer query(const std::string& csv_body);
  nlohmann::json info();

 private:
  std::shared_mutex mutex_;
  htree::DurableHTree tree_;
  bool shared_queries_;  // queries may run side by side (cpu-parallel)
};

}  // namespace gpuolap::server
