// Coding the table for the algorithms, and decoding their cells into the
// result table.
#include "cube/coded_table.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <limits>

#include "gpuolap/error.hpp"
#include "groupby/ordered_internal.hpp"

namespace gpuolap::cube {
namespace {

using groupby::AggregateKind;
using groupby::ValueType;

constexpr std::size_t kGrain = 1 << 16;

groupby::ColumnView view_of(const table::Column& c) {
  groupby::ColumnView v;
  v.name = c.name;
  v.nulls = c.nulls.empty() ? nullptr : c.nulls.data();
  if (c.type == table::ColumnType::Int64) {
    v.type = ValueType::Int64;
    v.values = c.int64s.data();
  } else if (c.type == table::ColumnType::Double) {
    v.type = ValueType::Double;
    v.values = c.doubles.data();
  } else {
    v.type = ValueType::Int32;
    v.values = c.int32s.data();
  }
  return v;
}

// A grouping value as a word equal exactly when GROUP BY calls the values
// equal, ordered as the values (doubles: -0.0 is +0.0, every NaN one NaN).
std::uint64_t order_word(const table::Column& c, std::size_t row) {
  switch (c.type) {
    case table::ColumnType::Int64:
      return groupby::order_bits(c.int64s[row]);
    case table::ColumnType::Double: {
      const double d = c.doubles[row];
      return groupby::order_bits(d == 0.0 ? 0.0 : d);
    }
    default:
      return groupby::order_bits(static_cast<std::int64_t>(c.int32s[row]));
  }
}

// `c` coded: by offset where its values' span is at most about twice the
// rows (so that a set's dense key space stays near the rows it holds), by
// rank otherwise or when `rank` says so.
ColumnCoding code_column(const table::Column& c, std::size_t rows, bool rank) {
  ColumnCoding coding;
  coding.source = &c;
  coding.has_null = std::any_of(c.nulls.begin(), c.nulls.end(), [](std::uint8_t b) { return b != 0; });
  // The values' range, and (doubles) which signs of zero occur.
  struct Range {
    std::uint64_t low = std::numeric_limits<std::uint64_t>::max(), high = 0;
    bool positive_zero = false, negative_zero = false;
  };
  const bool doubles = c.type == table::ColumnType::Double;
  const Range range = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, rows, kGrain), Range{},
      [&](const tbb::blocked_range<std::size_t>& r, Range acc) {
        for (std::size_t i = r.begin(); i < r.end(); ++i) {
          if (c.is_null(i)) continue;
          const std::uint64_t w = order_word(c, i);
          acc.low = std::min(acc.low, w);
          acc.high = std::max(acc.high, w);
          if (doubles && c.doubles[i] == 0.0) (std::signbit(c.doubles[i]) ? acc.negative_zero : acc.positive_zero) = true;
        }
        return acc;
      },
      [](Range a, Range b) {
        return Range{std::min(a.low, b.low), std::max(a.high, b.high), a.positive_zero || b.positive_zero,
                     a.negative_zero || b.negative_zero};
      });
  const bool any_value = range.low <= range.high;
  const std::uint64_t span = any_value ? range.high - range.low : 0;
  coding.ranked = rank || c.type == table::ColumnType::Double || span >= 2 * static_cast<std::uint64_t>(rows) + 64;
  std::uint64_t values = 0;
  if (!any_value) {
    values = 0;
  } else if (!coding.ranked) {
    coding.min = groupby::int_of_order_bits(range.low);
    values = span + 1;
  } else {
    std::vector<std::uint64_t> words;
    words.reserve(rows);
    for (std::size_t i = 0; i < rows; ++i)
      if (!c.is_null(i)) words.push_back(order_word(c, i));
    tbb::parallel_sort(words.begin(), words.end());
    words.erase(std::unique(words.begin(), words.end()), words.end());
    coding.distinct = std::move(words);
    values = coding.distinct.size();
  }
  if (c.type == table::ColumnType::Double) {
    coding.zero = range.negative_zero && !range.positive_zero ? -0.0 : 0.0;
  }
  coding.radix = values + (coding.has_null ? 1 : 0);
  if (coding.radix == 0) coding.radix = 1;  // no rows
  return coding;
}

std::uint64_t code_of(const ColumnCoding& coding, std::size_t row) {
  if (coding.unused) return 0;
  const table::Column& c = *coding.source;
  if (c.is_null(row)) return 0;
  const std::uint64_t null_slot = coding.has_null ? 1 : 0;
  if (!coding.ranked) return static_cast<std::uint64_t>(groupby::int_of_order_bits(order_word(c, row)) - coding.min) + null_slot;
  const std::uint64_t w = order_word(c, row);
  return static_cast<std::uint64_t>(std::lower_bound(coding.distinct.begin(), coding.distinct.end(), w) -
                                    coding.distinct.begin()) + null_slot;
}

// An empty result column shaped as grouping column `coding`'s source (no
// rows yet: finish_table sizes every column at once).
table::Column result_column(const ColumnCoding& coding) {
  const table::Column& src = *coding.source;
  table::Column out;
  out.name = src.name;
  out.type = src.type;
  out.dictionary = src.dictionary;
  return out;
}

// Row `i` of `out` from `code` of grouping column `coding`.
void decode_into(const ColumnCoding& coding, std::uint64_t code, table::Column& out, std::size_t i) {
  const std::uint64_t null_slot = coding.has_null ? 1 : 0;
  if (coding.has_null && code == 0) {
    out.nulls[i] = 1;
    return;
  }
  const std::uint64_t word = coding.ranked ? coding.distinct[code - null_slot]
                                           : groupby::order_bits(coding.min + static_cast<std::int64_t>(code - null_slot));
  if (out.type == table::ColumnType::Int64) out.int64s[i] = groupby::int_of_order_bits(word);
  else if (out.type == table::ColumnType::Double) {
    const double d = groupby::double_of_order_bits(word);
    out.doubles[i] = d == 0.0 ? coding.zero : d;
  } else out.int32s[i] = static_cast<std::int32_t>(groupby::int_of_order_bits(word));
}

table::Column aggregate_column(groupby::ResultColumn r, const std::string& name, const table::Column* source) {
  table::Column out;
  out.name = name;
  out.nulls = std::move(r.nulls);
  if (r.type == ValueType::Double) {
    out.type = table::ColumnType::Double;
    out.doubles = std::move(r.doubles);
  } else if (r.type == ValueType::Int64) {
    out.type = table::ColumnType::Int64;
    out.int64s = std::move(r.ints);
  } else {
    // MIN/MAX of a date or a string: the column's own type.
    out.type = source->type;
    out.dictionary = source->dictionary;
    out.int32s.reserve(r.ints.size());
    for (std::int64_t v : r.ints) out.int32s.push_back(static_cast<std::int32_t>(v));
  }
  return out;
}

// Inserts, at each of `positions` (ascending, in the table before any
// insertion), the row of an empty total: every grouping column rolled up,
// COUNTs 0, other aggregates NULL.
void insert_empty_totals(table::Table& out, const CodedTable& coded, const CubeSpec& spec,
                         const std::vector<std::size_t>& positions) {
  const std::size_t n = coded.columns.size();
  for (std::size_t k = positions.size(); k-- > 0;) {
    const std::size_t at = positions[k];
    for (std::size_t c = 0; c < out.columns.size(); ++c) {
      table::Column& col = out.columns[c];
      const bool is_count = c > n && (spec.measures[c - n - 1].kind == AggregateKind::Count ||
                                      spec.measures[c - n - 1].kind == AggregateKind::CountStar);
      std::uint8_t null = c == 0 || is_count ? 0 : 1;
      const std::size_t rows = col.size();
      if (!col.nulls.empty() || null) {
        col.nulls.resize(rows, 0);
        col.nulls.insert(col.nulls.begin() + at, null);
      }
      std::int64_t value = c == 0 ? static_cast<std::int64_t>((std::uint64_t{1} << n) - 1) : 0;
      if (col.type == table::ColumnType::Int64) col.int64s.insert(col.int64s.begin() + at, value);
      else if (col.type == table::ColumnType::Double) col.doubles.insert(col.doubles.begin() + at, 0.0);
      else col.int32s.insert(col.int32s.begin() + at, 0);
    }
  }
}

}  // namespace

std::string measure_name(const CubeSpec::Measure& m) {
  if (m.kind == AggregateKind::CountStar) return "count_star";
  return fmt::format("{}_{}", groupby::aggregate_name(m.kind), m.column);
}

CodedTable code_table(const table::Table& table, const CubeSpec& spec) {
  check_spec(spec, table);
  static std::atomic<std::uint64_t> next_id{1};
  CodedTable coded;
  coded.id = next_id++;
  coded.source = &table;
  coded.rows = table.row_count();
  // The finest key: the first column most significant, past 2^63 refused.
  // A column in no requested set takes no digits (one code); when offsets
  // make the key too wide, every column is coded by rank instead.
  const std::size_t n = spec.columns.size();
  const SetMask used = union_of(spec);
  unsigned __int128 cells = 1;
  for (bool rank : {false, true}) {
    coded.columns.clear();
    for (std::size_t i = 0; i < n; ++i) {
      if (used & (SetMask{1} << i)) {
        coded.columns.push_back(code_column(*table.find(spec.columns[i]), coded.rows, rank));
      } else {
        ColumnCoding unused;
        unused.source = table.find(spec.columns[i]);
        unused.unused = true;
        coded.columns.push_back(unused);
      }
    }
    cells = 1;
    for (std::size_t i = n; i-- > 0;) {
      coded.finest.stride[i] = static_cast<std::uint64_t>(cells);
      cells *= coded.columns[i].radix;
      if (cells > (static_cast<unsigned __int128>(1) << 63)) break;
    }
    if (cells <= (static_cast<unsigned __int128>(1) << 63)) break;
    if (rank) {
      std::string radices;
      for (const ColumnCoding& c : coded.columns)
        radices += fmt::format("{}{} ({})", radices.empty() ? "" : " x ", c.source->name, c.radix);
      throw InputError(fmt::format("the grouping columns' distinct values, {}, make more than 2^63 intersections; "
                                   "a cube packs a row's intersection into 64 bits",
                                   radices));
    }
  }
  coded.finest.mask = static_cast<SetMask>((std::uint64_t{1} << n) - 1);
  coded.finest.cells = static_cast<std::uint64_t>(cells);
  coded.keys.resize(coded.rows);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, coded.rows, kGrain), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t row = r.begin(); row < r.end(); ++row) {
      std::uint64_t key = 0;
      for (std::size_t i = 0; i < n; ++i) key += code_of(coded.columns[i], row) * coded.finest.stride[i];
      coded.keys[row] = key;
    }
  });
  coded.sorted = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(1, std::max<std::size_t>(coded.rows, 1), kGrain), true,
      [&](const tbb::blocked_range<std::size_t>& r, bool ok) {
        for (std::size_t i = r.begin(); ok && i < r.end(); ++i) ok = coded.keys[i - 1] <= coded.keys[i];
        return ok;
      },
      [](bool a, bool b) { return a && b; });

  // The measures, each column once.
  coded.measures.rows = coded.rows;
  std::vector<std::string> value_names;
  for (const CubeSpec::Measure& m : spec.measures) {
    groupby::Aggregate a;
    a.kind = m.kind;
    const table::Column* source = nullptr;
    if (m.kind != AggregateKind::CountStar) {
      source = table.find(m.column);
      auto seen = std::find(value_names.begin(), value_names.end(), m.column);
      if (seen == value_names.end()) {
        value_names.push_back(m.column);
        coded.measures.values.push_back(view_of(*source));
        seen = value_names.end() - 1;
      }
      a.value = static_cast<int>(seen - value_names.begin());
    }
    coded.measures.aggregates.push_back(a);
    const bool own_type = m.kind == AggregateKind::Min || m.kind == AggregateKind::Max;
    coded.aggregate_sources.push_back(own_type ? source : nullptr);
  }
  coded.slots = groupby::aggregate_slots(coded.measures);
  return coded;
}

Layout layout_of(const CodedTable& coded, SetMask mask) {
  Layout l;
  l.mask = mask;
  std::uint64_t cells = 1;
  for (std::size_t i = coded.columns.size(); i-- > 0;)
    if (mask & (SetMask{1} << i)) {
      l.stride[i] = cells;
      cells *= coded.columns[i].radix;
    }
  l.cells = cells;
  return l;
}

Projection projection(const CodedTable& coded, const Layout& from, const Layout& to) {
  Projection p;
  p.narrow = from.cells < (std::uint64_t{1} << 32);
  for (std::size_t i = 0; i < coded.columns.size(); ++i)
    if (to.mask & (SetMask{1} << i)) {
      p.from_stride[p.columns] = from.stride[i];
      p.radix[p.columns] = coded.columns[i].radix;
      p.to_stride[p.columns] = to.stride[i];
      if (p.narrow) {  // both below 2^32: the stride divides a key below it; the radix, a code
        p.stride_magic[p.columns] = division_magic(static_cast<std::uint32_t>(from.stride[i]));
        p.radix_magic[p.columns] = division_magic(static_cast<std::uint32_t>(coded.columns[i].radix));
      }
      ++p.columns;
    }
  return p;
}

SetCells empty_cells(const CodedTable& coded) {
  SetCells c;
  const std::size_t a = coded.slots.size();
  c.bits.resize(a);
  c.high.resize(a);
  c.count.resize(a);
  return c;
}

SetCells cells_from_states(const CodedTable& coded, std::vector<std::uint64_t> keys,
                           const std::vector<groupby::AggregateState>& states) {
  SetCells c = empty_cells(coded);
  const std::size_t cells = keys.size(), aggregates = coded.slots.size();
  for (std::size_t a = 0; a < aggregates; ++a) {
    c.bits[a].resize(cells);
    if (groupby::integer_sum(coded.slots[a])) c.high[a].resize(cells);
    if (coded.slots[a].keeps_count) c.count[a].resize(cells);
  }
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, cells, kGrain), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i)
      for (std::size_t a = 0; a < aggregates; ++a) {
        const groupby::AggregateState& s = states[i * aggregates + a];
        c.bits[a][i] = s.bits;
        if (!c.high[a].empty()) c.high[a][i] = s.high;
        if (!c.count[a].empty()) c.count[a][i] = s.count;
      }
  });
  c.keys = std::move(keys);
  return c;
}

table::Table finish_table(const CodedTable& coded, const CubeSpec& spec, const std::vector<SetCells>& sets) {
  const std::size_t n = coded.columns.size(), aggregates = coded.slots.size();
  std::vector<std::size_t> base{0};
  for (const SetCells& s : sets) base.push_back(base.back() + s.keys.size());
  const std::size_t rows = base.back();
  std::vector<Layout> layouts;
  for (SetMask mask : spec.sets) layouts.push_back(layout_of(coded, mask));

  table::Table out;
  out.name = "cube";
  table::Column grouping;
  grouping.name = "grouping";
  grouping.type = table::ColumnType::Int64;
  out.columns.push_back(std::move(grouping));
  for (const ColumnCoding& c : coded.columns) out.columns.push_back(result_column(c));
  std::vector<groupby::ResultColumn> finished(aggregates);
  for (std::size_t a = 0; a < aggregates; ++a)
    finished[a].type = groupby::aggregate_type(coded.measures, coded.measures.aggregates[a]);

  // Every column sized at once, a task per vector: zero-filling some 130
  // MB for 1.5 M cells on one thread took a third of this function.
  std::vector<std::function<void()>> sizing{[&] { out.columns[0].int64s.resize(rows); }};
  for (std::size_t i = 1; i <= n; ++i) {
    table::Column& c = out.columns[i];
    sizing.push_back([&c, rows] { c.nulls.resize(rows); });
    if (c.type == table::ColumnType::Int64) sizing.push_back([&c, rows] { c.int64s.resize(rows); });
    else if (c.type == table::ColumnType::Double) sizing.push_back([&c, rows] { c.doubles.resize(rows); });
    else sizing.push_back([&c, rows] { c.int32s.resize(rows); });
  }
  for (std::size_t a = 0; a < aggregates; ++a) {
    groupby::ResultColumn& r = finished[a];
    if (coded.slots[a].keeps_count) sizing.push_back([&r, rows] { r.nulls.assign(rows, 0); });
    if (r.type == groupby::ValueType::Double) sizing.push_back([&r, rows] { r.doubles.resize(rows); });
    else sizing.push_back([&r, rows] { r.ints.resize(rows); });
  }
  tbb::parallel_for(std::size_t{0}, sizing.size(), [&](std::size_t k) { sizing[k](); });

  // Each set's cells in blocks, a task each: GROUPING(c1, ..., cn) and the
  // columns decoded from the key (NULL where rolled up); then the
  // aggregates finished from the set's states straight into their rows.
  std::vector<std::vector<std::size_t>> overflow(sets.size(), std::vector<std::size_t>(aggregates));
  tbb::parallel_for(std::size_t{0}, sets.size(), [&](std::size_t s) {
    const SetMask mask = spec.sets[s];
    std::int64_t id = 0;
    for (std::size_t i = 0; i < n; ++i) id = id << 1 | ((mask >> i) & 1 ? 0 : 1);
    const SetCells& cells = sets[s];
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, cells.keys.size(), kGrain), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t c = r.begin(); c < r.end(); ++c) {
        const std::size_t row = base[s] + c;
        out.columns[0].int64s[row] = id;
        for (std::size_t i = 0; i < n; ++i) {
          if (mask & (SetMask{1} << i))
            decode_into(coded.columns[i], cells.keys[c] / layouts[s].stride[i] % coded.columns[i].radix, out.columns[1 + i], row);
          else
            out.columns[1 + i].nulls[row] = 1;
        }
      }
    });
    for (std::size_t a = 0; a < aggregates; ++a)
      overflow[s][a] = groupby::finish_aggregate_into(
          coded.slots[a], cells.keys.size(), cells.bits[a].data(), cells.high[a].empty() ? nullptr : cells.high[a].data(),
          cells.count[a].empty() ? nullptr : cells.count[a].data(), finished[a], base[s]);
  });
  for (std::size_t s = 0; s < sets.size(); ++s)
    for (std::size_t a = 0; a < aggregates; ++a)
      if (overflow[s][a] < sets[s].keys.size())
        throw InputError(fmt::format("{} of the cell in row {} of the cube (set {}) leaves the int64 range",
                                     groupby::aggregate_label(coded.measures, coded.measures.aggregates[a]),
                                     base[s] + overflow[s][a] + 1, set_text(spec, spec.sets[s])));
  for (std::size_t i = 1; i <= n; ++i) {
    auto& nulls = out.columns[i].nulls;
    if (std::none_of(nulls.begin(), nulls.end(), [](std::uint8_t b) { return b != 0; })) nulls.clear();
  }
  for (std::size_t a = 0; a < aggregates; ++a)
    out.columns.push_back(
        aggregate_column(std::move(finished[a]), measure_name(spec.measures[a]), coded.aggregate_sources[a]));

  // PostgreSQL answers the empty grouping set with one row even over no
  // rows: COUNT 0, every other aggregate NULL.
  std::vector<std::size_t> empty_totals;
  for (std::size_t s = 0; s < sets.size(); ++s)
    if (spec.sets[s] == 0 && sets[s].keys.empty()) empty_totals.push_back(base[s]);
  if (!empty_totals.empty()) insert_empty_totals(out, coded, spec, empty_totals);
  return out;
}

}  // namespace gpuolap::cube
