// Sorting a table's rows by some of its columns: a stable sort of row
// numbers, then every column gathered through them.
#include <cmath>
#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <numeric>

#include "gpuolap/error.hpp"
#include "table/table.hpp"

namespace gpuolap::table {

namespace {

std::vector<const Column*> resolve(const Table& table, const std::vector<std::string>& by) {
  std::vector<const Column*> keys;
  for (const std::string& name : by) {
    const Column* c = table.find(name);
    if (!c)
      throw InputError(fmt::format("table {}: no column '{}' to sort by", table.name, clip_for_message(name)));
    keys.push_back(c);
  }
  return keys;
}

// <0, 0, >0 as row a sorts before, with or after row b on column c; NULL first.
int compare(const Column& c, std::size_t a, std::size_t b) {
  const bool na = c.is_null(a), nb = c.is_null(b);
  if (na || nb) return int(nb) - int(na);
  switch (c.type) {
    case ColumnType::Int64: return (c.int64s[a] > c.int64s[b]) - (c.int64s[a] < c.int64s[b]);
    case ColumnType::Double: {
      // NaN after every number and equal to NaN, as PostgreSQL orders it:
      // a strict weak order for the sort, and NaNs together for GROUP BY.
      const double x = c.doubles[a], y = c.doubles[b];
      if (std::isnan(x) || std::isnan(y)) return int(std::isnan(x)) - int(std::isnan(y));
      return (x > y) - (x < y);
    }
    case ColumnType::Date:
    case ColumnType::String: return (c.int32s[a] > c.int32s[b]) - (c.int32s[a] < c.int32s[b]);
  }
  return 0;
}

int compare_rows(const std::vector<const Column*>& keys, std::size_t a, std::size_t b) {
  for (const Column* c : keys)
    if (int r = compare(*c, a, b)) return r;
  return 0;
}

template <class T>
void gather(std::vector<T>& v, const std::vector<std::uint32_t>& order) {
  if (v.empty()) return;
  std::vector<T> out(v.size());
  tbb::parallel_for(std::size_t{0}, order.size(), [&](std::size_t i) { out[i] = v[order[i]]; });
  v.swap(out);
}

}  // namespace

void sort_table(Table& table, const std::vector<std::string>& by) {
  const std::vector<const Column*> keys = resolve(table, by);
  for (std::size_t k = 0; k < by.size(); ++k)
    for (std::size_t j = 0; j < k; ++j)
      if (by[j] == by[k]) throw InputError(fmt::format("table {}: sort by '{}' twice", table.name, by[k]));
  const std::size_t rows = table.row_count();
  if (rows > UINT32_MAX) throw InputError(fmt::format("table {}: more than 2^32 rows to sort", table.name));
  std::vector<std::uint32_t> order(rows);
  std::iota(order.begin(), order.end(), 0u);
  // Ties broken by the row number: a stable sort, in parallel.
  tbb::parallel_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const int r = compare_rows(keys, a, b);
    return r != 0 ? r < 0 : a < b;
  });
  for (Column& c : table.columns) {
    gather(c.int64s, order);
    gather(c.doubles, order);
    gather(c.int32s, order);
    gather(c.nulls, order);
  }
  table.sort_order = by;
}

bool is_sorted_by(const Table& table, const std::vector<std::string>& by) {
  const std::vector<const Column*> keys = resolve(table, by);
  if (keys.empty()) return true;
  for (std::size_t r = 1; r < table.row_count(); ++r)
    if (compare_rows(keys, r - 1, r) > 0) return false;
  return true;
}

}  // namespace gpuolap::table
