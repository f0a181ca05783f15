#pragma once
// gpuolap.HTree in C++: an H-tree partial cube (htree/) built from a table of
// a database and kept durable in a directory, as `gpuolap htree build`,
// `update` and `query` do; batches come in as Arrow streams, answers go out
// as Arrow record batches.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "arrow_c.hpp"
#include "arrow_export.hpp"
#include "htree/durable_htree.hpp"

namespace gpuolap::python {

struct BuiltHTree {
  std::uint64_t tuples = 0;
  std::size_t leaves = 0;
  std::size_t nodes = 0;
  std::string engine;
  double build_seconds = 0;
};

// Builds a tree over table `table` of database `db` (dimensions in `order`,
// or by ascending distinct count when empty; `measure` an int64 or double
// column) on `engine` and stores it in `out` (an existing tree there is an
// InputError unless `replace`).
BuiltHTree build_htree(const std::string& db, const std::string& table, const std::string& measure,
                       const std::string& out, const std::vector<std::string>& order, const std::string& engine,
                       bool replace);

class HTreeHandle {
 public:
  // Opens the tree in `dir` (holding its lock until close()), its log replayed.
  HTreeHandle(const std::string& dir, const std::string& engine);

  const std::string& dir() const { return dir_; }
  std::string engine() const;
  std::vector<std::string> dimensions() const;
  std::string measure() const;
  std::uint64_t tuples() const;
  std::size_t leaves() const;
  std::size_t nodes() const;

  // Every method may be called from any Python thread (the GIL released):
  // they take turns on the tree.
  // Appends a batch (an Arrow stream with every dimension and the measure),
  // durable when it returns; the batch's rows. The stream is released, also
  // when the tree is closed.
  std::size_t append(ArrowArrayStream* stream, std::size_t rows_hint);
  // Answers the queries of `csv` (the query file's format: a header naming
  // every dimension, a value or * per field) as columns count (uint64), sum,
  // min, max and avg (float64; NULL where nothing matches), a row a query.
  std::unique_ptr<ExportedBatch> query(const std::string& csv);
  void checkpoint();
  void close();
  bool closed() const;

 private:
  htree::DurableHTree& open() const;

  std::string dir_;
  mutable std::mutex mutex_;
  std::unique_ptr<htree::DurableHTree> tree_;
};

}  // namespace gpuolap::python
