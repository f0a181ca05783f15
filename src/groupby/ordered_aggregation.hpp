// Ordered aggregation: GROUP BY over rows already sorted on their grouping
// keys (../shared/papers/ordered-aggregation-prefix-sum-kernel-fusion.md).
// A group is a maximal run of rows with equal keys, so one pass that notices
// "the key changes here" finds every group, in order, without a hash table.
//
// This header is the operator's plain C++ face: the input as column views
// (no copy), the aggregates, the knobs of the GPU form, and the result. The
// CPU forms are cpu_ordered.cpp; the GPU form is gpu/ (CUDA builds only).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpuolap::groupby {

// The element type of a key or value column. Int32 holds dates (days) and
// string codes, whose order is the strings' order.
enum class ValueType : std::uint8_t { Int32, Int64, Double };

// A column viewed, not owned: `rows` values of `type` at `values`, and,
// when `nulls` is set, one byte per row, 1 where the row is NULL (its value
// is then never read).
struct ColumnView {
  ValueType type = ValueType::Int64;
  const void* values = nullptr;
  const std::uint8_t* nulls = nullptr;
  std::string name;  // for messages and result headers
};

// COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x), AVG(x), with PostgreSQL's
// meaning: NULLs are skipped; an aggregate over no non-NULL value is NULL
// (COUNT: 0). SUM of integers is exact (128 bits) and an error when it
// leaves int64; SUM and AVG of doubles are doubles. MIN and MAX order
// doubles as PostgreSQL does (NaN above everything), with -0.0 below +0.0.
enum class AggregateKind : std::uint8_t { CountStar, Count, Sum, Min, Max, Avg };
std::string_view aggregate_name(AggregateKind kind);

struct Aggregate {
  AggregateKind kind = AggregateKind::CountStar;
  int value = -1;  // index into OrderedInput::values; -1 for COUNT(*)
};

// Rows sorted on the tuple of `keys` (NULL keys equal each other: NULLs form
// one group, as PostgreSQL's GROUP BY). The operator finds groups where the
// tuple changes; it does not check the order (an unsorted input is grouped
// by runs). At most kMaxKeys keys, kMaxAggregates aggregates, < 2^32 rows.
struct OrderedInput {
  std::size_t rows = 0;
  std::vector<ColumnView> keys;
  std::vector<ColumnView> values;
  std::vector<Aggregate> aggregates;
};
constexpr std::size_t kMaxKeys = 4;
constexpr std::size_t kMaxAggregates = 8;
constexpr std::size_t kMaxRows = (std::size_t{1} << 32) - 1;

// An owned result column: `ints` for Int32/Int64, `doubles` for Double;
// `nulls` one byte per group (empty: no NULL).
struct ResultColumn {
  ValueType type = ValueType::Int64;
  std::vector<std::int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::uint8_t> nulls;
  bool is_null(std::size_t i) const { return !nulls.empty() && nulls[i] != 0; }
};

// One row per group, in input order: the group's keys, then its aggregates.
struct OrderedResult {
  std::size_t groups = 0;
  std::vector<ResultColumn> keys;
  std::vector<ResultColumn> aggregates;
  // Named stage times in milliseconds (the GPU form's kernels, when timed,
  // then its host stage: kHostColumnsStage).
  std::vector<std::pair<std::string, double>> stage_ms;
};
// The GPU form's last stage, on the host: the downloaded groups into the
// result's columns.
constexpr std::string_view kHostColumnsStage = "groups into columns (host)";

// Checks the input's shape (counts, indexes, types an aggregate can take);
// an InputError names what is wrong.
void check_input(const OrderedInput& input);

// The type of an aggregate's result column: COUNT int64, AVG double, SUM
// int64 or double, MIN/MAX the value's type.
ValueType aggregate_type(const OrderedInput& input, const Aggregate& aggregate);
// "sum(x)", "count(*)": an aggregate as a result header names it.
std::string aggregate_label(const OrderedInput& input, const Aggregate& aggregate);
// Parses "sum(x),count(*),avg(y)" against the value column names `columns`
// (it appends each named column once to `values` as index into `columns`).
std::vector<Aggregate> parse_aggregates(std::string_view text, const std::vector<std::string>& columns,
                                        std::vector<int>& values);

// cpu-serial: one thread, row after row. The oracle of the other forms.
OrderedResult aggregate_serial(const OrderedInput& input);
// cpu-parallel: the input split at group borders into one range per task
// (the cube-creation paper's partition plan; a border is found by galloping,
// which relies on the rows being sorted), each range aggregated as
// cpu-serial does, the ranges' groups concatenated: no merging, and the same
// sums to the bit as cpu-serial.
OrderedResult aggregate_parallel(const OrderedInput& input);

// ---- The GPU form's knobs ----

// How the prefix sum over "a group starts here" flags is split into kernels
// (the paper's tables I-III), the 1-kernel the paper set aside, and the
// baselines past it.
enum class Architecture : std::uint8_t {
  FiveKernel,        // map, partial prefix sum, offsets, offset addition, aggregation
  ThreeKernel,       // partial prefix sum + offsets, offset addition, aggregation
  TwoKernel,         // partial prefix sum + offsets, offset addition + aggregation
  OneKernel,         // all in one, the offsets by a decoupled look-back
  BlockCooperative,  // one pass, runs reduced in registers: one store per group
  CubReduceByKey,    // cub::DeviceReduce::ReduceByKey, one call per aggregate
  CubRunLength,      // cub::DeviceRunLengthEncode::Encode (COUNT(*) only)
};
// How the aggregation step writes (the paper's algorithms 3-6), for the
// architectures FiveKernel..OneKernel.
enum class Variant : std::uint8_t {
  DirectAtomics,    // one thread per row, an atomic per row
  ChunkedAtomics,   // one thread per chunk of `intent` rows, an atomic per row
  PrivateVariable,  // a thread sums its chunk's run in a register, an atomic per run
  PrivateArray,     // a thread keeps its chunk's runs in an array: atomics at the chunk's ends only
};

std::string_view architecture_name(Architecture a);
std::string_view variant_name(Variant v);
// The inverses; an unknown name is an InputError listing the valid ones.
Architecture parse_architecture(std::string_view name);
Variant parse_variant(std::string_view name);
// Every value, for tests, self-checks and benchmarks.
const std::vector<Architecture>& all_architectures();
const std::vector<Variant>& all_variants();
// Whether an architecture takes a Variant (the paper's four do).
bool takes_variant(Architecture a);

// The GPU form's choices; empty: the operator picks (choose_ordered_plan).
// local_size is the paper's "local size" (OpenCL work-group size = CUDA
// threads per block), intent its "intent" or chunk size (rows per thread).
struct OrderedGpuOptions {
  std::optional<Architecture> architecture;
  std::optional<Variant> variant;
  std::optional<int> local_size;
  std::optional<int> intent;
  int device = -1;  // -1: the current device
  bool timing = false;
  // The input's column pointers are device memory of `device` (benchmarks:
  // the table resident on the GPU); otherwise host memory, uploaded first.
  bool input_on_device = false;
  // false: the groups stay on the device and the result holds only their
  // count (benchmarks of the kernels at 2^28 groups, not of the bus).
  bool download = true;
};

// The plan `auto` picks: from the rows and the average run length (rows per
// group, estimated from a sample of the keys).
struct OrderedPlan {
  Architecture architecture = Architecture::BlockCooperative;
  Variant variant = Variant::PrivateVariable;
  int local_size = 256;
  int intent = 8;
  std::string why;
};
OrderedPlan choose_ordered_plan(const OrderedInput& input, const OrderedGpuOptions& options);
// Rows per group, estimated from up to `samples` evenly spaced adjacent
// pairs of rows (a key change seen in k of s pairs: s / k).
double estimate_run_length(const OrderedInput& input, std::size_t samples = 4096);

// Checks a plan's knobs: local size 1..1024, intent 1..4096, the
// block-cooperative kernel's and the CUB baselines' limits, the launchable
// grid. (A plan's variant is read only by the architectures that take one;
// choose_ordered_plan refuses a variant asked of the others.)
void check_plan(const OrderedInput& input, const OrderedPlan& plan);

// An input's columns kept on a GPU between calls (SQL's route over tables
// held in memory): every key and value column, with its NULL flags,
// uploaded once. input() is the input it was made from with device
// pointers; a caller may replace its aggregates with any over the same
// value columns, then pass it with OrderedGpuOptions::input_on_device and
// the same device. Input that does not fit is an InputError naming the
// rows and the device.
class OrderedResidentColumns {
 public:
  OrderedResidentColumns(const OrderedInput& host_input, int device = -1);
  ~OrderedResidentColumns();
  OrderedResidentColumns(const OrderedResidentColumns&) = delete;
  OrderedResidentColumns& operator=(const OrderedResidentColumns&) = delete;
  const OrderedInput& input() const { return input_; }
  int device() const { return device_; }

 private:
  struct Buffers;
  std::unique_ptr<Buffers> buffers_;
  OrderedInput input_;
  int device_ = -1;
};

// Whether this build has the GPU form (built with CUDA) and a GPU is present.
bool gpu_available();
// The GPU form: runs `plan` on device `options.device`. Throws InputError
// for input the plan cannot take, std::runtime_error without a GPU.
OrderedResult aggregate_gpu(const OrderedInput& input, const OrderedPlan& plan, const OrderedGpuOptions& options);

}  // namespace gpuolap::groupby
