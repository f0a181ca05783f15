// What to build: the --dims and --measure texts, the spec's checks, and the
// algorithms' names.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>

#include "cube/full_cube.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap::cube {
namespace {

constexpr std::array<std::pair<Algorithm, std::string_view>, 6> kAlgorithmNames{{
    {Algorithm::CpuSequential, "cpu-sequential"},
    {Algorithm::CpuPartitioned, "cpu-partitioned"},
    {Algorithm::GpuNaive, "gpu-naive"},
    {Algorithm::GpuSorted, "gpu-sorted"},
    {Algorithm::GpuLattice, "gpu-lattice"},
    {Algorithm::GpuExpand, "gpu-expand"},
}};

std::string trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(separator, start);
    out.push_back(trim(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start)));
    if (end == std::string_view::npos) return out;
    start = end + 1;
  }
}

}  // namespace

CubeSpec parse_dims(std::string_view text) {
  CubeSpec spec;
  // Each dimension's rollup as column indexes, coarse to fine.
  std::vector<std::vector<int>> rollups;
  for (const std::string& dimension : split(text, ',')) {
    if (dimension.empty())
      throw InputError(fmt::format("--dims '{}': an empty dimension (dimensions are separated by ',', the levels of "
                                   "one by '>', as 'year>month>day, product_group>product')",
                                   text));
    std::vector<int> rollup;
    for (const std::string& column : split(dimension, '>')) {
      if (column.empty()) throw InputError(fmt::format("--dims: dimension '{}' has an empty level", dimension));
      if (std::find(spec.columns.begin(), spec.columns.end(), column) != spec.columns.end())
        throw InputError(fmt::format("--dims: column '{}' appears twice", column));
      if (spec.columns.size() == kMaxColumns)
        throw InputError(fmt::format("--dims: at most {} grouping columns", kMaxColumns));
      rollup.push_back(static_cast<int>(spec.columns.size()));
      spec.columns.push_back(column);
    }
    rollups.push_back(rollup);
  }
  // The product of the rollups, finest first: the first dimension's level
  // varies slowest, each from its finest prefix down to none.
  std::vector<SetMask> sets{0};
  for (auto d = rollups.rbegin(); d != rollups.rend(); ++d) {
    std::vector<SetMask> next;
    for (std::size_t keep = d->size() + 1; keep-- > 0;) {
      SetMask prefix = 0;
      for (std::size_t l = 0; l < keep; ++l) prefix |= SetMask{1} << (*d)[l];
      for (SetMask rest : sets) next.push_back(prefix | rest);
    }
    sets = std::move(next);
  }
  spec.sets = std::move(sets);
  return spec;
}

void parse_sets(std::string_view text, CubeSpec& spec) {
  spec.sets.clear();
  std::size_t at = 0;
  auto skip_space = [&] {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  };
  while (true) {
    skip_space();
    if (at >= text.size() || text[at] != '(')
      throw InputError(fmt::format("--sets '{}': expected '(' at character {} (sets are written '(a, b), (c), ()')", text,
                                   at + 1));
    const std::size_t close = text.find(')', at);
    if (close == std::string_view::npos) throw InputError(fmt::format("--sets '{}': a '(' without its ')'", text));
    SetMask set = 0;
    const std::string inside = trim(text.substr(at + 1, close - at - 1));
    if (!inside.empty())
      for (const std::string& column : split(inside, ',')) {
        const auto found = std::find(spec.columns.begin(), spec.columns.end(), column);
        if (found == spec.columns.end())
          throw InputError(fmt::format("--sets: '{}' is not one of the grouping columns of --dims", column));
        set |= SetMask{1} << (found - spec.columns.begin());
      }
    spec.sets.push_back(set);
    at = close + 1;
    skip_space();
    if (at == text.size()) return;
    if (text[at] != ',')
      throw InputError(fmt::format("--sets '{}': expected ',' between sets at character {}", text, at + 1));
    ++at;
  }
}

void parse_measures(std::string_view text, CubeSpec& spec, const table::Table& table) {
  std::vector<std::string> names;
  for (const table::Column& c : table.columns) names.push_back(c.name);
  std::vector<int> values;
  for (const groupby::Aggregate& a : groupby::parse_aggregates(text, names, values))
    spec.measures.push_back({a.kind, a.kind == groupby::AggregateKind::CountStar ? "" : names[values[a.value]]});
}

std::string set_text(const CubeSpec& spec, SetMask set) {
  std::string out = "(";
  for (std::size_t i = 0; i < spec.columns.size(); ++i)
    if (set & (SetMask{1} << i)) out += (out.size() > 1 ? ", " : "") + spec.columns[i];
  return out + ")";
}

void check_spec(const CubeSpec& spec, const table::Table& table) {
  if (spec.columns.empty()) throw InputError("a cube needs at least one grouping column");
  if (spec.columns.size() > kMaxColumns)
    throw InputError(fmt::format("a cube takes at most {} grouping columns, not {}", kMaxColumns, spec.columns.size()));
  for (std::size_t i = 0; i < spec.columns.size(); ++i) {
    if (!table.find(spec.columns[i]))
      throw InputError(fmt::format("table '{}' has no column '{}'", table.name, spec.columns[i]));
    if (std::find(spec.columns.begin(), spec.columns.begin() + i, spec.columns[i]) != spec.columns.begin() + i)
      throw InputError(fmt::format("grouping column '{}' appears twice", spec.columns[i]));
  }
  if (spec.sets.empty()) throw InputError("a cube needs at least one grouping set");
  const SetMask all = static_cast<SetMask>((std::uint64_t{1} << spec.columns.size()) - 1);
  for (std::size_t s = 0; s < spec.sets.size(); ++s) {
    if (spec.sets[s] & ~all) throw InputError(fmt::format("grouping set {} names a column past the {} grouping columns", s + 1, spec.columns.size()));
    if (std::find(spec.sets.begin(), spec.sets.begin() + s, spec.sets[s]) != spec.sets.begin() + s)
      throw InputError(fmt::format("grouping set {} appears twice", set_text(spec, spec.sets[s])));
  }
  if (spec.measures.empty()) throw InputError("a cube needs at least one measure (--measure 'sum(x)')");
  if (spec.measures.size() > groupby::kMaxAggregates)
    throw InputError(fmt::format("a cube takes at most {} measures, not {}", groupby::kMaxAggregates, spec.measures.size()));
  for (const CubeSpec::Measure& m : spec.measures) {
    if (m.kind == groupby::AggregateKind::CountStar) continue;
    const table::Column* c = table.find(m.column);
    if (!c) throw InputError(fmt::format("measure {}({}): table '{}' has no column '{}'", groupby::aggregate_name(m.kind),
                                         m.column, table.name, m.column));
    const bool sums = m.kind == groupby::AggregateKind::Sum || m.kind == groupby::AggregateKind::Avg;
    if (sums && c->type != table::ColumnType::Int64 && c->type != table::ColumnType::Double)
      throw InputError(fmt::format("measure {}({}): the column is a {}, which has no sum", groupby::aggregate_name(m.kind),
                                   m.column, table::type_name(c->type)));
  }
  // The result's column names: `grouping`, the grouping columns, the
  // measures' (a table's columns must differ).
  std::vector<std::string> names{"grouping"};
  names.insert(names.end(), spec.columns.begin(), spec.columns.end());
  for (const CubeSpec::Measure& m : spec.measures) names.push_back(measure_name(m));
  for (std::size_t i = 1; i < names.size(); ++i)
    if (std::find(names.begin(), names.begin() + i, names[i]) != names.begin() + i)
      throw InputError(fmt::format("the cube's result would have two columns named '{}' (its columns: grouping, the "
                                   "grouping columns, then sum_x, count_star, ... per measure)",
                                   names[i]));
  if (table.row_count() > kMaxRows)
    throw InputError(fmt::format("a cube is built from fewer than 2^32 rows, not {}", table.row_count()));
}

std::string_view algorithm_name(Algorithm a) {
  for (const auto& [value, name] : kAlgorithmNames)
    if (value == a) return name;
  return "?";
}

Algorithm parse_algorithm(std::string_view name) {
  std::string valid;
  for (const auto& [value, known] : kAlgorithmNames) {
    if (known == name) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(known);
  }
  throw InputError(fmt::format("unknown cube algorithm '{}' (valid: {}, auto)", name, valid));
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (const auto& [value, name] : kAlgorithmNames) v.push_back(value);
    return v;
  }();
  return all;
}

bool runs_on_gpu(Algorithm a) { return a != Algorithm::CpuSequential && a != Algorithm::CpuPartitioned; }

namespace {
constexpr std::pair<GpuSplit, std::string_view> kSplitNames[] = {
    {GpuSplit::Auto, "auto"}, {GpuSplit::Rows, "rows"}, {GpuSplit::Keys, "keys"}};
}  // namespace

std::string_view split_name(GpuSplit s) {
  for (const auto& [value, name] : kSplitNames)
    if (value == s) return name;
  return "?";
}

GpuSplit parse_split(std::string_view name) {
  for (const auto& [value, known] : kSplitNames)
    if (known == name) return value;
  throw InputError(fmt::format("unknown split of the rows over GPUs '{}' (valid: auto, rows, keys)", name));
}

namespace {
constexpr std::pair<SortedRuns, std::string_view> kSortedRunsNames[] = {{SortedRuns::Cub, "cub"},
                                                                        {SortedRuns::OnePass, "one-pass"}};
}  // namespace

std::string_view sorted_runs_name(SortedRuns r) {
  for (const auto& [value, name] : kSortedRunsNames)
    if (value == r) return name;
  return "?";
}

SortedRuns parse_sorted_runs(std::string_view name) {
  for (const auto& [value, known] : kSortedRunsNames)
    if (known == name) return value;
  throw InputError(fmt::format("unknown reduction of sorted runs '{}' (valid: cub, one-pass)", name));
}

SetMask union_of(const CubeSpec& spec) {
  SetMask all = 0;
  for (SetMask s : spec.sets) all |= s;
  return all;
}

}  // namespace gpuolap::cube
