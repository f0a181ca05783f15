#include "htree/htree_io.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <unordered_map>

#include "gpuolap/error.hpp"
#include "table/csv_loader.hpp"
#include "table/date.hpp"

namespace gpuolap::htree {
namespace {

using table::ColumnType;

// Row r of column c as a dictionary's canonical text ("" for NULL).
std::string canonical_of(const table::Column& c, std::size_t r) {
  if (c.is_null(r)) return {};
  switch (c.type) {
    case ColumnType::String: return std::string(c.dictionary[c.int32s[r]]);
    case ColumnType::Date: return table::format_date(c.int32s[r]);
    case ColumnType::Int64: return std::to_string(c.int64s[r]);
    case ColumnType::Double: return fmt::format("{}", c.doubles[r]);
  }
  return {};
}

// Codes a column, looking each distinct source value up once.
std::vector<std::uint32_t> code_column(Dictionary& dict, const table::Column& c) {
  const std::size_t n = c.size();
  std::vector<std::uint32_t> out(n);
  std::uint32_t null_code = kAbsent;
  auto null_or = [&](std::size_t r, auto&& code) {
    if (!c.is_null(r)) return code();
    if (null_code == kAbsent) null_code = dict.code({});
    return null_code;
  };
  if (c.type == ColumnType::String) {
    std::vector<std::uint32_t> by_code(c.dictionary.size(), kAbsent);
    for (std::size_t r = 0; r < n; ++r)
      out[r] = null_or(r, [&] {
        std::uint32_t& k = by_code[c.int32s[r]];
        if (k == kAbsent) k = dict.code(std::string(c.dictionary[c.int32s[r]]));
        return k;
      });
    return out;
  }
  if (c.type != ColumnType::Double && n) {
    // Integers and dates of a narrow range: an array instead of a hash map.
    std::int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (std::size_t r = 0; r < n; ++r) {
      if (c.is_null(r)) continue;
      const std::int64_t v = c.type == ColumnType::Int64 ? c.int64s[r] : c.int32s[r];
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (lo <= hi && static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) < (std::uint64_t{1} << 22)) {
      std::vector<std::uint32_t> by_value(static_cast<std::size_t>(hi - lo) + 1, kAbsent);
      for (std::size_t r = 0; r < n; ++r)
        out[r] = null_or(r, [&] {
          const std::int64_t v = c.type == ColumnType::Int64 ? c.int64s[r] : c.int32s[r];
          std::uint32_t& k = by_value[static_cast<std::size_t>(v - lo)];
          if (k == kAbsent) k = dict.code(canonical_of(c, r));
          return k;
        });
      return out;
    }
  }
  std::unordered_map<std::int64_t, std::uint32_t> seen;
  for (std::size_t r = 0; r < n; ++r)
    out[r] = null_or(r, [&] {
      std::int64_t v = 0;
      if (c.type == ColumnType::Int64) v = c.int64s[r];
      else if (c.type == ColumnType::Date) v = c.int32s[r];
      else std::memcpy(&v, &c.doubles[r], sizeof v);
      auto [it, added] = seen.try_emplace(v, 0);
      if (added) it->second = dict.code(canonical_of(c, r));
      return it->second;
    });
  return out;
}


// A column's distinct values (NULL one of them): the size of a dictionary it
// is coded into, by the same fast paths the tree's coding takes.
std::size_t distinct_count(const table::Column& c) {
  Dictionary scratch;
  scratch.type = c.type;
  code_column(scratch, c);
  return scratch.values.size();
}

}  // namespace

HTree tree_shell(const table::Table& t, std::vector<std::string> order, const std::string& measure) {
  const table::Column* m = t.find(measure);
  if (!m) throw InputError(fmt::format("table {} has no column '{}' (the measure)", t.name, measure));
  if (m->type != ColumnType::Int64 && m->type != ColumnType::Double)
    throw InputError(fmt::format("the measure {} must be an int64 or double column, not {}", measure, table::type_name(m->type)));
  if (order.empty()) {
    std::vector<std::pair<std::size_t, std::size_t>> by;  // distinct count, column
    for (std::size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i].name != measure) by.emplace_back(distinct_count(t.columns[i]), i);
    std::stable_sort(by.begin(), by.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (auto& [count, i] : by) order.push_back(t.columns[i].name);
  }
  if (order.empty()) throw InputError(fmt::format("table {} has no column besides the measure to build an H-tree over", t.name));
  if (order.size() > 64) throw InputError("an H-tree has at most 64 dimensions");
  HTree tree;
  std::set<std::string> named;
  for (const std::string& d : order) {
    const table::Column* c = t.find(d);
    if (!c) throw InputError(fmt::format("table {} has no column '{}' (in --order)", t.name, d));
    if (d == measure) throw InputError(fmt::format("{} is the measure and cannot be a dimension too", d));
    if (!named.insert(d).second) throw InputError(fmt::format("--order names {} twice", d));
    tree.dimensions.push_back(d);
    Dictionary dict;
    dict.type = c->type;
    tree.dictionaries.push_back(std::move(dict));
  }
  tree.measure = measure;
  tree.levels.assign(order.size(), {});
  return tree;
}

CodedTuples code_rows(HTree& tree, const table::Table& t, const std::string& what) {
  CodedTuples out;
  const std::size_t m = tree.dimensions.size();
  std::vector<const table::Column*> cols(m);
  for (std::size_t d = 0; d < m; ++d) {
    cols[d] = t.find(tree.dimensions[d]);
    if (!cols[d]) throw InputError(fmt::format("{} has no column {} (a dimension of the tree)", what, tree.dimensions[d]));
    if (cols[d]->type != tree.dictionaries[d].type)
      throw InputError(fmt::format("{}: column {} is {}, the tree's dimension is {}", what, tree.dimensions[d],
                                   table::type_name(cols[d]->type), table::type_name(tree.dictionaries[d].type)));
  }
  const table::Column* mc = t.find(tree.measure);
  if (!mc) throw InputError(fmt::format("{} has no column {} (the tree's measure)", what, tree.measure));
  if (mc->type != ColumnType::Int64 && mc->type != ColumnType::Double)
    throw InputError(fmt::format("{}: the measure {} must be int64 or double, not {}", what, tree.measure,
                                 table::type_name(mc->type)));
  out.codes.resize(m);
  tbb::parallel_for(std::size_t{0}, m, [&](std::size_t d) { out.codes[d] = code_column(tree.dictionaries[d], *cols[d]); });
  const std::size_t n = t.row_count();
  out.measure.resize(n);
  for (std::size_t r = 0; r < n; ++r)
    out.measure[r] = mc->type == ColumnType::Int64 ? static_cast<double>(mc->int64s[r]) : mc->doubles[r];
  if (!mc->nulls.empty()) out.measure_null = mc->nulls;
  return out;
}

namespace {

table::CsvLoadOptions batch_options(const HTree& tree) {
  table::CsvLoadOptions o;
  o.table_name = "batch";
  for (std::size_t d = 0; d < tree.dimensions.size(); ++d) o.types[tree.dimensions[d]] = tree.dictionaries[d].type;
  return o;
}

// A batch as read: no column but the dimensions and the measure, and a
// measure of only NULLs (read as string) made a double column.
table::Table checked_batch(const HTree& tree, table::Table t, const std::string& where) {
  for (const table::Column& c : t.columns)
    if (c.name != tree.measure &&
        std::find(tree.dimensions.begin(), tree.dimensions.end(), c.name) == tree.dimensions.end())
      throw InputError(fmt::format("{}: column {} is neither a dimension of the tree nor its measure {}", where,
                                   table::clip_for_message(c.name), tree.measure));
  for (table::Column& c : t.columns) {
    if (c.name != tree.measure || c.type == ColumnType::Int64 || c.type == ColumnType::Double) continue;
    for (std::size_t row = 0; row < c.size(); ++row)
      if (!c.is_null(row))
        throw InputError(fmt::format("{}: the measure {} holds '{}' (row {}), not a number", where, tree.measure,
                                     table::clip_for_message(canonical_of(c, row)), row + 1));
    c.type = ColumnType::Double;
    c.doubles.assign(c.size(), 0);
    c.int32s.clear();
    c.dictionary.clear();
  }
  return t;
}

}  // namespace

table::Table read_batch_table(const HTree& tree, const std::filesystem::path& csv) {
  return checked_batch(tree, table::load_csv(csv, batch_options(tree)), csv.string());
}

table::Table parse_batch_table(const HTree& tree, std::string_view text, const std::string& where) {
  return checked_batch(tree, table::parse_csv(text, where, batch_options(tree)), where);
}

}  // namespace gpuolap::htree
