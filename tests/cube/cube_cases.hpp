#pragma once
// Random tables and cube specs for the cube tests of every algorithm: keys
// of every type (offset- and rank-coded integers, strings, dates, doubles
// with NaN and -0.0), NULLs in keys and measures, and the specs SQL writes
// (CUBE, ROLLUP, a product of rollups, GROUPING SETS, one column, the total).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <sstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cube/full_cube.hpp"
#include "table/table.hpp"

namespace gpuolap::cube::test {

inline table::Table random_table(std::size_t rows, std::uint32_t seed, bool sorted = false) {
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return static_cast<std::int64_t>(rng() % n); };
  auto maybe_null = [&](table::Column& c, std::size_t r, int percent) {
    if (c.nulls.size() < r + 1) c.nulls.resize(r + 1, 0);
    c.nulls[r] = pick(100) < percent;
  };
  table::Table t;
  t.name = "facts";
  auto add = [&](std::string name, table::ColumnType type) -> table::Column& {
    table::Column c;
    c.name = std::move(name);
    c.type = type;
    t.columns.push_back(std::move(c));
    return t.columns.back();
  };
  add("a", table::ColumnType::Int64);          // small range, NULLs
  add("b", table::ColumnType::String);         // strings, NULLs
  add("c", table::ColumnType::Date);           // dates
  add("d", table::ColumnType::Double);         // doubles: NaN, -0.0, NULLs
  add("e", table::ColumnType::Int64);          // a sparse, wide range: rank-coded
  add("x", table::ColumnType::Double);         // measure with NULLs
  add("y", table::ColumnType::Int64);          // measure, large magnitudes
  add("z", table::ColumnType::String);         // MIN/MAX of strings
  t.columns[1].dictionary = {"", "alpha", "beta", "gamma", "zeta"};
  t.columns[7].dictionary = {"p", "q", "r"};
  const double d_values[] = {1.5, -2.25, 0.0, -0.0, std::numeric_limits<double>::quiet_NaN(), 1e300};
  for (std::size_t r = 0; r < rows; ++r) {
    t.columns[0].int64s.push_back(pick(5) - 2);
    maybe_null(t.columns[0], r, 10);
    t.columns[1].int32s.push_back(static_cast<std::int32_t>(pick(5)));
    maybe_null(t.columns[1], r, 8);
    t.columns[2].int32s.push_back(static_cast<std::int32_t>(19000 + pick(40)));
    t.columns[3].doubles.push_back(d_values[pick(6)]);
    maybe_null(t.columns[3], r, 5);
    t.columns[4].int64s.push_back(static_cast<std::int64_t>(rng() >> 4) * (pick(2) ? 1 : -1) % 7 * 1'000'000'000'000LL);
    t.columns[5].doubles.push_back(static_cast<double>(pick(20001) - 10000) / 8.0);
    maybe_null(t.columns[5], r, 15);
    t.columns[6].int64s.push_back((pick(2) ? 1 : -1) * (std::int64_t{1} << 40) + pick(1000));
    t.columns[7].int32s.push_back(static_cast<std::int32_t>(pick(3)));
    maybe_null(t.columns[7], r, 20);
  }
  for (table::Column& c : t.columns) c.nulls.resize(rows, 0);
  if (sorted) table::sort_table(t, {"a", "b", "c", "d", "e"});
  return t;
}

struct SpecCase {
  std::string name, dims, sets;  // sets empty: the rollups' product
};

inline std::vector<SpecCase> spec_cases() {
  return {
      {"cube of three", "a, b, c", ""},
      {"rollup of three", "a>b>d", ""},
      {"product of rollups", "a>b, c>e", ""},
      {"grouping sets", "a, b, d, e", "(a, e), (d), (), (b, d)"},
      {"one column", "e", ""},
      {"total only", "a", "()"},
      {"every column", "a, b, c, d, e", "(a, b, c, d, e), (b), ()"},
  };
}

// A table "facts" of empty Int64 columns named `names`.
inline table::Table int64_table(std::initializer_list<const char*> names) {
  table::Table t;
  t.name = "facts";
  for (const char* name : names) {
    table::Column c;
    c.name = name;
    c.type = table::ColumnType::Int64;
    t.columns.push_back(std::move(c));
  }
  return t;
}

// A table whose keys take the sparse paths: `u` and `v` with about 300
// scattered values each (rank-coded), so that (u, v) has some 90,000 cells,
// more than a dense cube of 3,000 rows takes; `a` small.
inline table::Table wide_table(std::size_t rows, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  table::Table t = int64_table({"u", "v", "a", "y"});
  for (std::size_t r = 0; r < rows; ++r) {
    t.columns[0].int64s.push_back(static_cast<std::int64_t>(rng() % 300) * 1'000'003);
    t.columns[1].int64s.push_back(-static_cast<std::int64_t>(rng() % 300) * 7'777'777);
    t.columns[2].int64s.push_back(static_cast<std::int64_t>(rng() % 4));
    t.columns[3].int64s.push_back(static_cast<std::int64_t>(rng() % 1000) - 500);
  }
  return t;
}

// The cubes of wide_table: all of CUBE(u, v, a), and two GROUPING SETS.
inline const std::vector<std::string>& wide_sets() {
  static const std::vector<std::string> sets{"", "(u, v), (u), ()", "(a), ()"};
  return sets;
}
inline const char* kWideMeasures = "count(*), sum(y), min(y)";
inline CubeSpec wide_spec(const std::string& sets, const table::Table& t) {
  CubeSpec spec = parse_dims("u, v, a");
  if (!sets.empty()) parse_sets(sets, spec);
  parse_measures(kWideMeasures, spec, t);
  return spec;
}

inline CubeSpec make_spec(const SpecCase& c, const table::Table& t) {
  CubeSpec spec = parse_dims(c.dims);
  if (!c.sets.empty()) parse_sets(c.sets, spec);
  parse_measures("count(*), count(x), sum(x), avg(x), min(x), sum(y), min(z), max(c)", spec, t);
  return spec;
}

// CSV lines compared field by field: numbers within 1e-9 relative.
inline void expect_same_csv(const std::string& want, const std::string& got, const std::string& what) {
  std::istringstream a(want), b(got);
  std::string la, lb;
  std::getline(a, la);  // the headers differ in the aggregates' names
  std::getline(b, lb);
  for (int line = 2;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, la));
    const bool more_b = static_cast<bool>(std::getline(b, lb));
    ASSERT_EQ(more_a, more_b) << what << ": line " << line << " is in one answer only";
    if (!more_a) return;
    if (la == lb) continue;
    ASSERT_EQ(std::count(la.begin(), la.end(), ','), std::count(lb.begin(), lb.end(), ','))
        << what << ", line " << line << ": " << la << " vs " << lb;
    std::istringstream fa(la), fb(lb);
    std::string x, y;
    while (std::getline(fa, x, ',')) {
      ASSERT_TRUE(static_cast<bool>(std::getline(fb, y, ','))) << what << ", line " << line << ": " << la << " vs " << lb;
      if (x == y) continue;
      char* end_x = nullptr;
      char* end_y = nullptr;
      const double p = std::strtod(x.c_str(), &end_x), q = std::strtod(y.c_str(), &end_y);
      ASSERT_TRUE(*end_x == 0 && *end_y == 0 && !x.empty() && !y.empty() &&
                  std::abs(p - q) <= 1e-9 * std::max(std::abs(p), std::abs(q)))
          << what << ", line " << line << ": " << la << " vs " << lb;
    }
  }
}

}  // namespace gpuolap::cube::test
