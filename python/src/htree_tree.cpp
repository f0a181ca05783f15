#include "htree_tree.hpp"

#include "arrow_import.hpp"
#include "gpuolap/error.hpp"
#include "htree/htree_io.hpp"
#include "htree/table_build.hpp"
#include "table/database.hpp"

namespace gpuolap::python {

BuiltHTree build_htree(const std::string& db, const std::string& table, const std::string& measure,
                       const std::string& out, const std::vector<std::string>& order, const std::string& engine,
                       bool replace) {
  const auto t = table::Database(db).load(table);
  const htree::TableBuild b =
      htree::build_from_table(*t, "table " + table, order, measure, htree::parse_engine(engine));
  htree::DurableHTree::create(out, b.tree, replace);
  BuiltHTree built;
  built.build_seconds = b.build_ms / 1000.0;
  built.tuples = b.tree.tuples;
  built.leaves = b.tree.leaf_count();
  built.nodes = b.tree.node_count();
  built.engine = std::string(htree::engine_name(b.engine));
  return built;
}

HTreeHandle::HTreeHandle(const std::string& dir, const std::string& engine)
    : dir_(dir), tree_(std::make_unique<htree::DurableHTree>(dir, htree::parse_engine(engine))) {}

htree::DurableHTree& HTreeHandle::open() const {
  if (!tree_) throw InputError("HTree: the tree " + dir_ + " is closed");
  return *tree_;
}

std::string HTreeHandle::engine() const {
  const std::lock_guard lock(mutex_);
  return std::string(htree::engine_name(open().engine()));
}
std::vector<std::string> HTreeHandle::dimensions() const {
  const std::lock_guard lock(mutex_);
  return open().meta().dimensions;
}
std::string HTreeHandle::measure() const {
  const std::lock_guard lock(mutex_);
  return open().meta().measure;
}
std::uint64_t HTreeHandle::tuples() const {
  const std::lock_guard lock(mutex_);
  return open().meta().tuples;
}
std::size_t HTreeHandle::leaves() const {
  const std::lock_guard lock(mutex_);
  return open().leaf_count();
}
std::size_t HTreeHandle::nodes() const {
  const std::lock_guard lock(mutex_);
  return open().node_count();
}
bool HTreeHandle::closed() const {
  const std::lock_guard lock(mutex_);
  return !tree_;
}

std::size_t HTreeHandle::append(ArrowArrayStream* stream, std::size_t rows_hint) {
  // Read first: table_from_arrow releases the stream whatever happens.
  const table::Table batch = table_from_arrow(stream, "batch", rows_hint);
  const std::lock_guard lock(mutex_);
  htree::DurableHTree& tree = open();
  tree.append(batch, "HTree.append");
  return batch.row_count();
}

std::unique_ptr<ExportedBatch> HTreeHandle::query(const std::string& csv) {
  const std::lock_guard lock(mutex_);
  htree::DurableHTree& tree = open();
  const htree::QueryFile queries = htree::parse_query_csv(tree.meta(), csv, "HTree.query", tree.query_memory());
  htree::Answers answers = tree.query(queries.batch);
  const std::size_t n = answers.size();
  std::vector<std::uint64_t> count(n);
  std::vector<double> sum(n), min(n), max(n), avg(n);
  std::vector<std::uint8_t> empty(n);
  for (std::size_t i = 0; i < n; ++i) {
    const htree::Aggregate& a = answers.data()[i];
    count[i] = a.count;
    empty[i] = a.count == 0;
    sum[i] = a.count ? a.sum : 0;
    min[i] = a.count ? a.min : 0;
    max[i] = a.count ? a.max : 0;
    avg[i] = a.count ? a.sum / static_cast<double>(a.count) : 0;
  }
  std::vector<ArrowColumn> columns;
  columns.push_back(uint64_column("count", count));
  columns.push_back(float64_column("sum", sum, &empty));
  columns.push_back(float64_column("min", min, &empty));
  columns.push_back(float64_column("max", max, &empty));
  columns.push_back(float64_column("avg", avg, &empty));
  return std::make_unique<ExportedBatch>(std::move(columns), static_cast<int64_t>(n));
}

void HTreeHandle::checkpoint() {
  const std::lock_guard lock(mutex_);
  open().checkpoint();
}

void HTreeHandle::close() {
  const std::lock_guard lock(mutex_);
  tree_.reset();
}

}  // namespace gpuolap::python
