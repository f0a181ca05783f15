// H-tree partial cubes (the H-tree paper, ../shared/papers/htree-data-cubing-gpu.md):
// a prefix tree of the tuples of a table's dimension columns in one order,
// the popular path, with the measure aggregated at every node, and a header
// table per level whose side links join the nodes of equal value.
//
// The tree is kept as the paper's GPU form keeps it, a structure of arrays
// per level (Level), on every engine: the cpu-parallel and gpu engines work
// on it directly, cpu-serial (the paper's sequential pointer tree,
// pointer_htree.hpp) converts to and from it. Nodes of a level are in the
// order of their paths (parent first, then key), so a node's children are
// contiguous and sorted by key (binary search), and the leaves are the
// distinct tuples in sorted order.
//
// Dimension values are coded per dimension by a Dictionary: codes in the
// order values first arrived, so that a batch with new values appends codes
// and never renumbers the tree. Children are sorted by code, not by value.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory_resource>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "table/table.hpp"

namespace gpuolap::htree {

// The aggregates of the measure over the tuples below a node. A tuple whose
// measure is NULL is a path of the tree but adds nothing here (SQL's
// COUNT(m), SUM(m), ...): count counts the non-NULL measures.
struct Aggregate {
  std::uint64_t count = 0;
  double sum = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();

  void add(double value) {
    ++count;
    sum += value;
    if (value < min) min = value;
    if (value > max) max = value;
  }
  void merge(const Aggregate& o) {
    count += o.count;
    sum += o.sum;
    if (o.min < min) min = o.min;
    if (o.max > max) max = o.max;
  }
};

// One dimension's values and their codes. A value is kept as canonical text
// (an int64 or a double as the shortest decimal that reads back the same, a
// date as YYYY-MM-DD, a string as is), so that a batch or a query naming a
// value in another spelling ("007" for 7) finds the same code. NULL is a
// value of its own, written as the empty field; in a string dimension the
// empty string is that same value.
struct Dictionary {
  table::ColumnType type = table::ColumnType::Int64;
  std::vector<std::string> values;  // by code
  std::unordered_map<std::string, std::uint32_t> codes;

  // The code of `canonical`, added at the end when new.
  std::uint32_t code(const std::string& canonical);
  // The code of `canonical`, or kAbsent.
  std::uint32_t find(const std::string& canonical) const;
  // `text` (a CSV field; "" is NULL) in canonical form for this dimension's
  // type; a field that is no value of the type is an InputError saying so
  // (the caller adds where it was).
  std::string canonical(std::string_view text) const;
};

// Codes that are no dimension value: a query's `*`, and a value the
// dictionary does not hold (it matches nothing).
constexpr std::uint32_t kAny = 0xffffffffu;
constexpr std::uint32_t kAbsent = 0xfffffffeu;

// The nodes of one level (one dimension of the popular path), and its
// header table. With n nodes and h distinct keys:
struct Level {
  std::vector<std::uint32_t> key;          // n: the dimension's code
  std::vector<std::uint32_t> parent;       // n: index in the level above (0 on level 0: the root)
  std::vector<std::uint32_t> first_child;  // n: index of the first child in the level below (lmc)
  std::vector<std::uint32_t> child_count;  // n (cn); 0 on the last level
  std::vector<Aggregate> aggregate;        // n (m)
  // Header table: the nodes by key, each key's nodes in level order (the
  // paper's side links, sL), and per distinct key its code, its node count
  // and where its nodes start in side_links (hKey, hN, hSL).
  std::vector<std::uint32_t> side_links;    // n
  std::vector<std::uint32_t> header_key;    // h, ascending
  std::vector<std::uint32_t> header_count;  // h
  std::vector<std::uint32_t> header_first;  // h

  std::size_t size() const { return key.size(); }
};

struct HTree {
  std::vector<std::string> dimensions;  // the popular path, root to leaves
  std::string measure;
  std::vector<Dictionary> dictionaries;  // per dimension
  Aggregate total;                       // the root's
  std::uint64_t tuples = 0;              // tuples folded in (NULL measures included)
  std::vector<Level> levels;             // per dimension

  std::size_t leaf_count() const { return levels.empty() ? 0 : levels.back().size(); }
  std::size_t node_count() const;
};

// Each dimension's dictionary size: its codes are below it (what the GPU
// form packs and sorts by).
inline std::vector<std::uint32_t> cardinalities(const HTree& tree) {
  std::vector<std::uint32_t> c;
  for (const Dictionary& d : tree.dictionaries) c.push_back(static_cast<std::uint32_t>(d.values.size()));
  return c;
}

// Tuples coded by a tree's dictionaries: codes[d][row] for dimension d of
// the popular path, the measure and its NULL flags (empty: none NULL).
struct CodedTuples {
  std::vector<std::vector<std::uint32_t>> codes;
  std::vector<double> measure;
  std::vector<std::uint8_t> measure_null;

  std::size_t size() const { return measure.size(); }
};

// The distinct tuples of a tree in sorted order (its leaves as rows), each
// with the aggregate of the tuples equal to it: what a snapshot stores and
// what a tree's levels are built from.
struct LeafRows {
  std::vector<std::vector<std::uint32_t>> codes;  // [dimension][row]
  std::vector<Aggregate> aggregate;

  std::size_t size() const { return aggregate.size(); }
};

// A batch of queries: codes[q][d] for dimension d of the popular path, each
// a code, kAny or kAbsent. Its memory is the caller's choice (a
// std::pmr resource): a batch in the gpu engine's query_memory() is read by
// the kernels where it lies, and every engine allocates a batch's answers
// from the batch's resource.
struct QueryBatch {
  std::size_t dimensions = 0;
  std::pmr::vector<std::uint32_t> codes;  // query-major: query q's codes at q * dimensions

  std::size_t size() const { return dimensions ? codes.size() / dimensions : 0; }
  const std::uint32_t* query(std::size_t q) const { return codes.data() + q * dimensions; }
};

// Whether query `q` is on the popular path: its instantiated dimensions are
// a prefix of the order (then one node holds its answer; Algorithm 3),
// otherwise it needs online cubing over side links (Algorithm 4).
bool on_popular_path(const std::uint32_t* q, std::size_t dimensions);

// The engines. cpu-serial: the paper's sequential pointer H-tree, a tuple at
// a time; cpu-parallel: the SoA tree built, merged and queried with TBB;
// gpu: the SoA tree resident on the device, built with CUB; auto: gpu
// where this build and machine have one, else cpu-parallel.
enum class Engine : std::uint8_t { CpuSerial, CpuParallel, Gpu, Auto };
std::string_view engine_name(Engine e);
// An unknown name is an InputError listing the four.
Engine parse_engine(std::string_view name);

// A batch's answers, in the batch's order and memory (its resource). Not a
// std::vector: an engine writes every answer, so the memory is not filled
// first. On the gpu the kernels write a batch's answers across the bus into
// pinned memory; filling those 32 bytes a query on the host beforehand made
// a 10K batch 0.068 ms instead of 0.053 (measured on an H100).
class Answers {
 public:
  Answers() = default;
  // `n` answers in `memory`, each to be written by the engine.
  Answers(std::size_t n, std::pmr::memory_resource* memory) : memory_(memory), size_(n) {
    if (n) data_ = static_cast<Aggregate*>(memory->allocate(n * sizeof(Aggregate), alignof(Aggregate)));
  }
  Answers(Answers&& o) noexcept : memory_(o.memory_), data_(o.data_), size_(o.size_) {
    o.data_ = nullptr;
    o.size_ = 0;
  }
  Answers& operator=(Answers&& o) noexcept {
    if (this != &o) {
      release();
      memory_ = o.memory_;
      data_ = o.data_;
      size_ = o.size_;
      o.data_ = nullptr;
      o.size_ = 0;
    }
    return *this;
  }
  Answers(const Answers&) = delete;
  Answers& operator=(const Answers&) = delete;
  ~Answers() { release(); }

  // Every answer `a` (a batch an engine answers without looking).
  void fill(const Aggregate& a) { std::fill(data_, data_ + size_, a); }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Aggregate* data() { return data_; }
  const Aggregate* data() const { return data_; }
  Aggregate& operator[](std::size_t i) { return data_[i]; }
  const Aggregate& operator[](std::size_t i) const { return data_[i]; }
  const Aggregate* begin() const { return data_; }
  const Aggregate* end() const { return data_ + size_; }
  std::pmr::memory_resource* memory() const { return memory_; }
  operator std::span<const Aggregate>() const { return {data_, size_}; }

 private:
  void release() {
    if (data_) memory_->deallocate(data_, size_ * sizeof(Aggregate), alignof(Aggregate));
    data_ = nullptr;
  }
  std::pmr::memory_resource* memory_ = nullptr;
  Aggregate* data_ = nullptr;
  std::size_t size_ = 0;
};
static_assert(std::is_trivially_copyable_v<Aggregate> && std::is_trivially_destructible_v<Aggregate>);

// What the query operations counted (for the bench and --timing).
struct QueryStats {
  std::size_t popular_path = 0;        // queries answered by a lookup
  std::size_t online = 0;              // queries answered over side links
  std::uint64_t side_link_nodes = 0;   // side-link nodes the online queries visited
};

// ---- the CPU forms (levels_cpu.cpp, query_cpu.cpp) ----

// The tree's levels and header tables from leaf rows sorted and distinct
// (cpu-parallel); `tree` keeps its dimensions, measure and dictionaries.
void build_levels(HTree& tree, const LeafRows& leaves);
// Sorts and folds tuples into leaf rows (cpu-parallel).
LeafRows leaves_of_tuples(const CodedTuples& tuples);
// The leaf rows of a tree: each leaf's path and aggregate.
LeafRows leaves_of_tree(const HTree& tree);
// Leaf rows merged into sorted distinct leaf rows (equal rows' aggregates
// folded). Both inputs sorted and distinct.
LeafRows merge_leaves(const LeafRows& a, const LeafRows& b);

// Answers a batch on the SoA tree with TBB (hybrid: each query by its kind).
Answers query_levels(const HTree& tree, const QueryBatch& batch, QueryStats* stats = nullptr);
// Checks what every engine relies on and a loaded tree must hold; an
// InputError names the level and node that break it.
void check_tree(const HTree& tree);

// ---- every engine (htree_engine.cpp) ----

// A new tree over `tuples` (coded by `tree.dictionaries`, which `tree`
// already holds with its dimensions and measure).
void build(HTree& tree, const CodedTuples& tuples, Engine engine);
// Folds a batch into the tree (Algorithm 2's bulk update).
void update(HTree& tree, const CodedTuples& batch, Engine engine);
Answers query(const HTree& tree, const QueryBatch& batch, Engine engine, QueryStats* stats = nullptr);
// Where a query batch for `engine` is best made: pinned host memory that the
// gpu engine's kernels read and answer into in place (no copy either way;
// gpu/runtime/pinned_memory.hpp), the default resource on the CPU engines.
std::pmr::memory_resource* query_memory(Engine engine);
// The engine `auto` (or `e`) runs on here; gpu where none is, an InputError.
Engine resolve_engine(Engine e);

}  // namespace gpuolap::htree
