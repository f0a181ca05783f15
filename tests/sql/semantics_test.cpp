// PostgreSQL's semantics where they are easy to get wrong: NULL groups,
// empty inputs, integer arithmetic, three-valued logic, joins that match
// several rows or none; and the output formats.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "sql/sql_tables.hpp"
#include "support/input_error.hpp"

namespace gpuolap::testing {
namespace {

sql::TablesInMemory sample() {
  sql::TablesInMemory t;
  t.add(make_table("f", {int_column("k", {1, std::nullopt, 1, std::nullopt, 2}), int_column("v", {7, 8, -3, std::nullopt, 2}),
                         double_column("x", {0.1, 0.2, std::nullopt, 1e300, -0.0}),
                         string_column("s", {"a,b", "say \"hi\"", "", std::nullopt, "plain"}),
                         int_column("fk", {10, 20, 10, 99, 100000000})}));
  // Keys repeat (10): a hash join that matches two rows.
  t.add(make_table("d", {int_column("key", {10, 20, 10, 100000000}), string_column("label", {"ten", "twenty", "TEN", "big"})}));
  t.add(make_table("empty", {int_column("a", {}), double_column("b", {})}));
  return t;
}

TEST(SqlSemantics, NullIsAGroupOfItsOwn) {
  auto t = sample();
  EXPECT_EQ(csv_of(t, "SELECT k, count(*), sum(v) FROM f GROUP BY k ORDER BY k"), "k,count,sum\n1,2,4\n2,1,2\n,2,8\n");
}

TEST(SqlSemantics, AggregatesOverNoRows) {
  auto t = sample();
  EXPECT_EQ(csv_of(t, "SELECT count(*), count(a), sum(a), avg(b), min(a), max(b) FROM empty"),
            "count,count,sum,avg,min,max\n0,0,,,,\n");
  EXPECT_EQ(csv_of(t, "SELECT a, count(*) FROM empty GROUP BY a"), "a,count\n");
  // The empty grouping set still has its row.
  EXPECT_EQ(csv_of(t, "SELECT a, count(*) FROM empty GROUP BY ROLLUP (a)"), "a,count\n,0\n");
  EXPECT_EQ(csv_of(t, "SELECT count(*) FROM f WHERE v > 100"), "count\n0\n");
}

TEST(SqlSemantics, DeeplyNestedExpressionsOverGroupKeysAndAggregates) {
  // 400 levels over a GROUP BY key, and over an aggregate: each level is
  // matched against the keys (the binder keeps what it bound meanwhile, so
  // this is linear in the depth, not quadratic); every sibling aggregate
  // keeps its own argument.
  auto t = sample();
  std::string over_key = "k", over_sum = "sum(v)";
  for (int i = 0; i < 400; ++i) {
    over_key = "(" + over_key + " + 1)";
    over_sum = "(" + over_sum + " - 1)";
  }
  EXPECT_EQ(csv_of(t, "SELECT " + over_key + " AS a, " + over_sum + " AS b, max(x), min(s) FROM f GROUP BY k ORDER BY k"),
            "a,b,max,min\n401,-396,0.10000000000000001,\"\"\n402,-398,-0,plain\n,-392,1.0000000000000001e+300,"
            "\"say \"\"hi\"\"\"\n");
  // Two aggregates in one expression, and in HAVING: the binder keeps Row-mode
  // bindings by node while one expression is bound, so each aggregate must
  // bind its own argument (not one of another at a reused address).
  EXPECT_EQ(csv_of(t, "SELECT k, max(v) - min(fk) AS d FROM f GROUP BY k HAVING max(v) > min(fk) - 100 ORDER BY k"),
            "k,d\n1,-3\n,-12\n");
  EXPECT_NE(error_of([&] { csv_of(t, "SELECT " + over_key + " + v FROM f GROUP BY k"); })
                .find("column \"v\" must appear in the GROUP BY clause"),
            std::string::npos);
}

TEST(SqlSemantics, GroupColumnsReadOnceOrSeveralTimes) {
  // Where every group is answered, a key or aggregate that the select list
  // and ORDER BY read once is moved into the result; one read more than
  // once is copied each time, and HAVING keeps the groups' columns whole.
  auto t = sample();
  for (auto engine : {sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel}) {
    sql::SqlOptions options;
    options.engine = engine;
    const auto csv = [&](const std::string& q) { return sql::format_result(sql::run(t, q, options), sql::ResultFormat::Csv); };
    EXPECT_EQ(csv("SELECT sum(v), k FROM f GROUP BY k"), "sum,k\n4,1\n8,\n2,2\n");
    EXPECT_EQ(csv("SELECT k, sum(v), k AS k2, sum(v) * 2 AS d FROM f GROUP BY k ORDER BY k"),
              "k,sum,k2,d\n1,4,1,8\n2,2,2,4\n,8,,16\n");
    EXPECT_EQ(csv("SELECT k FROM f GROUP BY k ORDER BY sum(v) DESC"), "k\n\n1\n2\n");
    EXPECT_EQ(csv("SELECT k, sum(v) FROM f GROUP BY k HAVING sum(v) > 3 ORDER BY k"), "k,sum\n1,4\n,8\n");
    // Read once each, by a CASE (its branch reads sum(v) at some groups
    // only: copied) beside GROUPING() over ROLLUP's sets.
    EXPECT_EQ(csv("SELECT CASE WHEN k IS NULL THEN sum(v) ELSE -1 END AS c, GROUPING(k) AS g FROM f "
                  "GROUP BY ROLLUP (k) ORDER BY g, c"),
              "c,g\n-1,0\n-1,0\n8,0\n14,1\n");
  }
}

TEST(SqlSemantics, IntegerAndMixedArithmetic) {
  auto t = sample();
  EXPECT_EQ(csv_of(t, "SELECT 7 / 2, -7 / 2, 7 % 3, -7 % 3, 7 / 2.0, 1 + 0.5, 2 * 3"),
            "?column?,?column?,?column?,?column?,?column?,?column?,?column?\n3,-3,1,-1,3.5,1.5,6\n");
  EXPECT_EQ(csv_of(t, "SELECT avg(v) FROM f WHERE k = 1"), "avg\n2\n");
  EXPECT_EQ(csv_of(t, "SELECT avg(k) FROM f"), "avg\n1.3333333333333333\n");
  EXPECT_NE(error_of([&] { csv_of(t, "SELECT 9223372036854775807 * 2"); }).find("bigint out of range"), std::string::npos);
}

TEST(SqlSemantics, IntegerSumOverflowIsAnError) {
  sql::TablesInMemory t;
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 1;
  t.add(make_table("big", {int_column("v", {big, 5})}));
  EXPECT_NE(error_of([&] { csv_of(t, "SELECT sum(v) FROM big"); }).find("line 1, column 8: bigint out of range"),
            std::string::npos);
  EXPECT_EQ(csv_of(t, "SELECT avg(v) FROM big"), "avg\n4.6116860184273879e+18\n");
}

// A sum that passes bigint's range on the way but ends inside it is no
// error, whatever order the rows are added in: the engines add integers in
// 128 bits and check the range once (the GPU routes add in no fixed order).
// Before, cpu-serial failed on the first two orders and not on the third.
TEST(SqlSemantics, IntegerSumsCheckTheirRangeOnceAtTheEnd) {
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 1;
  const std::vector<std::vector<std::optional<std::int64_t>>> orders{{big, 5, -10}, {5, big, -10}, {-10, big, 5}};
  for (const auto& rows : orders) {
    sql::TablesInMemory t;
    t.add(make_table("big", {int_column("k", {1, 1, 1}), int_column("v", rows)}));
    for (auto engine : {sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel}) {
      sql::SqlOptions options;
      options.engine = engine;
      for (const std::string q : {"SELECT sum(v) AS s FROM big", "SELECT sum(v) AS s FROM big GROUP BY k"})
        EXPECT_EQ(sql::format_result(sql::run(t, q, options), sql::ResultFormat::Csv), "s\n9223372036854775801\n") << q;
    }
  }
}

// A grouping set the lattice only derives from (here the hidden (a, b) under
// (a) and (b)) is not in the answer: its sums, which leave bigint here, are
// not range-checked (found in review: the lattice failed where per-set did not).
TEST(SqlSemantics, HiddenLatticeSetsDoNotRangeCheckTheirSums) {
  const std::int64_t b = std::int64_t{1} << 62;
  sql::TablesInMemory t;
  t.add(make_table("t", {int_column("a", {1, 1, 1, 1, 2, 2, 2, 2}), int_column("b", {1, 1, 2, 2, 1, 1, 2, 2}),
                         int_column("v", {b, b, -b, -b, -b, -b, b, b})}));
  const std::string q = "SELECT a, b, sum(v) AS s FROM t GROUP BY GROUPING SETS ((a), (b)) ORDER BY a, b";
  for (auto engine : {sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel})
    for (auto method : {sql::GroupingSetsMethod::PerSet, sql::GroupingSetsMethod::Lattice}) {
      sql::SqlOptions options;
      options.engine = engine;
      options.grouping_sets = method;
      EXPECT_EQ(sql::format_result(sql::run(t, q, options), sql::ResultFormat::Csv), "a,b,s\n1,,0\n2,,0\n,1,0\n,2,0\n");
    }
}

// MIN and MAX take -0.0 as below +0.0, as the GPU operators do, so the zero
// they answer does not depend on which row came first (before, cpu-serial
// kept the first of two equal zeros).
TEST(SqlSemantics, MinAndMaxOrderNegativeZeroBelowPositiveZero) {
  for (const auto& rows : std::vector<std::vector<std::optional<double>>>{{0.0, -0.0}, {-0.0, 0.0}}) {
    sql::TablesInMemory t;
    t.add(make_table("z", {int_column("k", {1, 1}), double_column("x", rows)}));
    for (auto engine : {sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel}) {
      sql::SqlOptions options;
      options.engine = engine;
      for (const std::string q : {"SELECT min(x) AS lo, max(x) AS hi FROM z", "SELECT min(x) AS lo, max(x) AS hi FROM z GROUP BY k"})
        EXPECT_EQ(sql::format_result(sql::run(t, q, options), sql::ResultFormat::Csv), "lo,hi\n-0,0\n") << q;
    }
  }
}

TEST(SqlSemantics, ThreeValuedLogic) {
  auto t = sample();
  // v is NULL in row 4: neither v > 0 nor NOT (v > 0) holds there.
  EXPECT_EQ(csv_of(t, "SELECT count(*) FROM f WHERE v > 0"), "count\n3\n");
  EXPECT_EQ(csv_of(t, "SELECT count(*) FROM f WHERE NOT (v > 0)"), "count\n1\n");
  EXPECT_EQ(csv_of(t, "SELECT count(*) FROM f WHERE v > 0 OR v IS NULL"), "count\n4\n");
  EXPECT_EQ(csv_of(t, "SELECT NULL AND false, NULL OR true, NULL AND true"), "?column?,?column?,?column?\nf,t,\n");
  // AND stops where its result is known: no division by zero.
  EXPECT_EQ(csv_of(t, "SELECT count(*) FROM f WHERE v <> 0 AND 10 / v > 1"), "count\n1\n");
  EXPECT_EQ(csv_of(t, "SELECT CASE WHEN v = 0 THEN 0 ELSE 14 / v END AS q FROM f WHERE k = 1"), "q\n2\n-4\n");
}

TEST(SqlSemantics, JoinsMatchingSeveralRowsOrNone) {
  auto t = sample();
  // fk 10 matches two rows of d; 99 matches none; 100000000 is far from the
  // other keys (a sparse key: a hash join).
  EXPECT_EQ(csv_of(t, "SELECT v, label FROM f, d WHERE f.fk = d.key ORDER BY v, label"),
            "v,label\n-3,TEN\n-3,ten\n2,big\n7,TEN\n7,ten\n8,twenty\n");
  EXPECT_NE(csv_of(t, "EXPLAIN SELECT v FROM f, d WHERE f.fk = d.key").find("Join (hash) d on f.fk = d.key — hash: the keys "
                                                                           "are sparse"),
            std::string::npos);
  t.add(make_table("dense", {int_column("key", {10, 11, 10}), string_column("label", {"a", "b", "c"})}));
  EXPECT_NE(csv_of(t, "EXPLAIN SELECT v FROM f, dense WHERE f.fk = dense.key").find("hash: a key repeats (10)"),
            std::string::npos);
  EXPECT_EQ(csv_of(t, "SELECT count(*) FROM f, dense WHERE f.fk = dense.key"), "count\n4\n");
}

TEST(SqlSemantics, CsvOutput) {
  auto t = sample();
  EXPECT_EQ(csv_of(t, "SELECT s, x, v > 0 AS pos FROM f ORDER BY v NULLS FIRST"),
            "s,x,pos\n,1.0000000000000001e+300,\n\"\",,f\nplain,-0,t\n\"a,b\",0.10000000000000001,t\n"
            "\"say \"\"hi\"\"\",0.20000000000000001,t\n");
}

TEST(SqlSemantics, JsonAndTableOutput) {
  auto t = sample();
  sql::QueryResult r = sql::run(t, "SELECT k, s, x FROM f WHERE v = 7", {});
  EXPECT_EQ(sql::format_result(r, sql::ResultFormat::Json),
            "{\"columns\":[{\"name\":\"k\",\"type\":\"bigint\"},{\"name\":\"s\",\"type\":\"text\"},{\"name\":\"x\",\"type\":"
            "\"double precision\"}],\"rows\":[[1,\"a,b\",0.1]]}\n");
  EXPECT_EQ(sql::format_result(r, sql::ResultFormat::Table), " k | s   | x                  \n---+-----+---------------------\n"
                                                            " 1 | a,b | 0.10000000000000001\n(1 row)\n");
}

}  // namespace
}  // namespace gpuolap::testing

namespace gpuolap::testing {
namespace {

// Table r of the engine tests, 20,000 rows: a (small, NULLs), an integer
// column `second` (its value for row i), s (strings, NULLs), x (quarters:
// sums exact in any order, NULLs).
std::shared_ptr<const table::Table> engines_table(const std::string& second, const std::function<OptInt(int)>& value) {
  std::vector<OptInt> a, b;
  std::vector<OptString> s;
  std::vector<OptDouble> x;
  for (int i = 0; i < 20000; ++i) {
    a.push_back(i % 7 == 0 ? OptInt() : OptInt(i % 5));
    b.push_back(value(i));
    s.push_back(i % 11 == 0 ? OptString() : OptString("s" + std::to_string(i % 3)));
    x.push_back(i % 17 == 0 ? OptDouble() : OptDouble(i * 0.25));
  }
  return make_table("r", {int_column("a", a), int_column(second, b), string_column("s", s), double_column("x", x)});
}

// Every engine and way of computing grouping sets gives cpu-serial's
// one-pass-per-set answer (rows sorted: their order is free).
TEST(SqlEngines, AgreeWithCpuSerialPerSet) {
  sql::TablesInMemory t;
  t.add(engines_table("b", [](int i) { return OptInt((i * 7919) % 13); }));
  const std::vector<std::string> queries = {
      "SELECT a, b, s, count(*), sum(x), avg(b), min(s), max(x), count(DISTINCT b), GROUPING(a, b, s) FROM r "
      "GROUP BY CUBE (a, b, s) ORDER BY 1, 2, 3, 10",
      "SELECT a, s, sum(b) FROM r GROUP BY GROUPING SETS ((a), (s), (a, s), ()) HAVING count(*) > 100 ORDER BY 1, 2, 3",
      "SELECT a, sum(x) FROM r WHERE b > 3 GROUP BY ROLLUP (a) ORDER BY 1",
      "SELECT a, b, x FROM r WHERE s LIKE '%1' ORDER BY x DESC NULLS FIRST LIMIT 50",
  };
  for (const auto& q : queries) {
    sql::SqlOptions oracle;
    oracle.grouping_sets = sql::GroupingSetsMethod::PerSet;
    const std::string expected = sql::format_result(sql::run(t, q, oracle), sql::ResultFormat::Csv);
    for (auto engine : {sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel}) {
      for (auto method : {sql::GroupingSetsMethod::PerSet, sql::GroupingSetsMethod::Lattice}) {
        sql::SqlOptions options;
        options.engine = engine;
        options.grouping_sets = method;
        EXPECT_EQ(sql::format_result(sql::run(t, q, options), sql::ResultFormat::Csv), expected) << q;
      }
    }
  }
}

}  // namespace
}  // namespace gpuolap::testing

namespace gpuolap::testing {
namespace {

// A table stored sorted on the grouping keys is aggregated in order (no
// hash table), with the answers of the hash aggregation.
TEST(SqlEngines, OrderedAggregationOnSortedInput) {
  std::vector<OptInt> k, v;
  for (int i = 0; i < 30000; ++i) {
    k.push_back(i < 500 ? OptInt() : OptInt(i / 7));  // NULLs first, as the stored order puts them
    v.push_back(i % 5 == 0 ? OptInt() : OptInt(i % 100));
  }
  auto sorted = std::make_shared<table::Table>();
  sorted->name = "s";
  sorted->columns = {int_column("k", k), int_column("v", v)};
  sorted->sort_order = {"k", "v"};
  auto [with_order, without_order] = sorted_and_unsorted(sorted);
  const std::string q = "SELECT k, count(*), sum(v), max(v) FROM s WHERE v IS NOT NULL OR k > 100 GROUP BY k ORDER BY k";
  EXPECT_NE(csv_of(with_order, "EXPLAIN " + q).find("ordered: s is stored sorted by (k, v)"), std::string::npos);
  EXPECT_NE(csv_of(without_order, "EXPLAIN " + q).find("not sorted on the grouping keys"), std::string::npos);
  EXPECT_EQ(csv_of(without_order, "EXPLAIN SELECT v, count(*) FROM s GROUP BY v").find("ordered"), std::string::npos);
  const std::string expected = csv_of(without_order, q);
  EXPECT_EQ(csv_of(with_order, q), expected);
  sql::SqlOptions parallel;
  parallel.engine = sql::SqlEngine::CpuParallel;
  EXPECT_EQ(sql::format_result(sql::run(with_order, q, parallel), sql::ResultFormat::Csv), expected);
}

}  // namespace
}  // namespace gpuolap::testing

namespace gpuolap::testing {
namespace {

// LIMIT without ORDER BY: cpu-parallel keeps the rows cpu-serial keeps and
// raises the errors it raises — none from batches past the limit (a
// division by zero in row 20,000 is not an error of LIMIT 10 or LIMIT 0).
// Both evaluate whole batches of 4,096 rows: the batch holding row 20,000
// starts at row 16,384, so LIMIT 16384 stops before it and LIMIT 16385
// meets the zero.
TEST(SqlEngines, LimitStopsWhereCpuSerialStops) {
  std::vector<OptInt> id, d;
  for (int i = 0; i < 40000; ++i) {
    id.push_back(OptInt(i));
    d.push_back(OptInt(i == 20000 ? 0 : 1 + i % 3));
  }
  sql::TablesInMemory t;
  t.add(make_table("r", {int_column("id", id), int_column("d", d)}));
  for (const std::string q : {"SELECT id, 100 / d FROM r LIMIT 10", "SELECT id, 100 / d FROM r LIMIT 0",
                              "SELECT id, 100 / d FROM r LIMIT 5 OFFSET 4090", "SELECT id, 100 / d FROM r LIMIT 16384",
                              "SELECT id, 100 / d FROM r LIMIT 16385", "SELECT id FROM r WHERE 100 / d > 40 LIMIT 7"}) {
    std::string serial, parallel;
    for (auto engine : {sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel}) {
      sql::SqlOptions options;
      options.engine = engine;
      std::string out;
      try {
        out = sql::format_result(sql::run(t, q, options), sql::ResultFormat::Csv);
      } catch (const InputError& e) {
        out = std::string("error: ") + e.what();
      }
      (engine == sql::SqlEngine::CpuSerial ? serial : parallel) = out;
    }
    EXPECT_EQ(parallel, serial) << q;
    if (q.find("LIMIT 16385") != std::string::npos) {
      EXPECT_EQ(serial.rfind("error: ", 0), 0u) << q << ": the limit reaches the zero";
    } else {
      EXPECT_EQ(serial.find("error"), std::string::npos) << q << ": " << serial.substr(0, 200);
    }
  }
}

// cpu-parallel's ordered path cuts the sorted rows into ranges at group
// starts and appends the ranges' groups: the groups come out once each and
// in key order, as cpu-serial's, also for a group longer than a range, a
// run of -0.0 and 0.0, NaNs of both signs and NULLs, with two keys.
TEST(SqlEngines, OrderedParallelRangesStartAtGroupStarts) {
  std::vector<OptDouble> d;
  std::vector<OptInt> k, v;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int i = 0; i < 300; ++i) d.push_back(std::nullopt), k.push_back(i % 2 ? OptInt() : OptInt(1));
  for (int i = 0; i < 9000; ++i) d.push_back(i % 2 ? -0.0 : 0.0), k.push_back(7);  // one group of 9,000 rows
  for (int i = 0; i < 40000; ++i) d.push_back(1.0 + i / 3), k.push_back(i / 3000);
  for (int i = 0; i < 25000; ++i) d.push_back(1e9), k.push_back(5);                 // longer than a range
  for (int i = 0; i < 5000; ++i) d.push_back(i % 2 ? -nan : nan), k.push_back(8);
  std::vector<OptString> t;
  for (std::size_t i = 0; i < d.size(); ++i) {
    v.push_back(static_cast<std::int64_t>(i % 97));
    t.push_back(i % 11 == 0 ? OptString() : OptString("s" + std::to_string(i % 13)));
  }
  // NULL keys of k sort first within their d: order the first 300 rows so.
  std::stable_sort(k.begin(), k.begin() + 300, [](const OptInt& a, const OptInt& b) { return !a && b; });
  auto sorted = std::make_shared<table::Table>();
  sorted->name = "s";
  sorted->columns = {double_column("d", d), int_column("k", k), int_column("v", v), string_column("t", t)};
  sorted->sort_order = {"d", "k"};
  auto [with_order, without_order] = sorted_and_unsorted(sorted);
  sql::SqlOptions parallel;
  parallel.engine = sql::SqlEngine::CpuParallel;
  const auto parallel_csv = [&](const std::string& q) {
    return sql::format_result(sql::run(with_order, q, parallel), sql::ResultFormat::Csv);
  };
  const std::string q = "SELECT d, k, count(*), sum(v), min(v) FROM s GROUP BY d, k";
  EXPECT_NE(parallel_csv("EXPLAIN " + q).find("cut into ranges at group starts"), std::string::npos);
  // No ORDER BY: both ordered paths give the groups in the stored order.
  const std::string in_order = csv_of(with_order, q);
  EXPECT_EQ(parallel_csv(q), in_order);
  // And the hash aggregation agrees on the groups.
  EXPECT_EQ(parallel_csv(q + " ORDER BY d NULLS FIRST, k NULLS FIRST"),
            csv_of(without_order, q + " ORDER BY d NULLS FIRST, k NULLS FIRST"));
  const std::string one_key = "SELECT d, count(*) FROM s GROUP BY d";
  EXPECT_EQ(parallel_csv(one_key), csv_of(with_order, one_key));
  // Every kind of aggregate state through the ranges' finals: a 128-bit
  // AVG of integers, a double SUM, the best string, distinct values.
  const std::string every = "SELECT d, avg(v), sum(d * 0.5), max(t), min(t), count(DISTINCT v % 7), count(t) FROM s "
                            "GROUP BY d";
  EXPECT_EQ(parallel_csv(every), csv_of(with_order, every));
  EXPECT_EQ(parallel_csv(every + " ORDER BY d NULLS FIRST"), csv_of(without_order, every + " ORDER BY d NULLS FIRST"));
}

}  // namespace
}  // namespace gpuolap::testing

namespace gpuolap::testing {
namespace {

// The gpu engine's plan of `query` (EXPLAIN, which runs without a GPU), a line each.
std::string gpu_plan(const sql::TablesInMemory& t, const std::string& query) {
  sql::SqlOptions gpu;
  gpu.engine = sql::SqlEngine::Gpu;
  std::string lines;
  for (const std::string& line : sql::run(t, "EXPLAIN " + query, gpu).plan) lines += line + "\n";
  return lines;
}

// The gpu engine's plan: the shared-memory operators where the query and
// its data fit them, else the cube operator with the reason (EXPLAIN runs
// without a GPU; tests/gpu/cube_gpu_test.cpp checks the answers).
TEST(SqlEngines, TheGpuEnginePlansTheSharedMemoryOperatorsWhereTheyFit) {
  sql::TablesInMemory t;
  t.add(engines_table("b", [](int i) { return OptInt((i * 7919) % 13); }));
  const auto plan = [&](const std::string& q) { return gpu_plan(t, q); };
  EXPECT_NE(plan("SELECT b, count(*) FROM r GROUP BY b ORDER BY 2 DESC LIMIT 3").find("shared-memory grouped aggregation"),
            std::string::npos);
  const std::string nulls = plan("SELECT b, sum(x) FROM r GROUP BY b");
  EXPECT_NE(nulls.find("cube operator"), std::string::npos) << nulls;
  EXPECT_NE(nulls.find("not the shared-memory operators: the aggregated column x has NULLs"), std::string::npos) << nulls;
  EXPECT_NE(plan("SELECT a, count(*) FROM r GROUP BY a").find("its key a has NULLs"), std::string::npos);
  EXPECT_NE(plan("SELECT b, s, count(*) FROM r GROUP BY b, s").find("not a GROUP BY of one key"), std::string::npos);
}

// The gpu engine takes ordered aggregation first where the table is
// stored sorted on the grouping keys (in any order), and says why not where
// it is not (EXPLAIN runs without a GPU; tests/gpu/sql_ordered_gpu_test.cpp
// checks the answers).
TEST(SqlEngines, TheGpuEnginePlansOrderedAggregationOverTablesStoredSortedOnTheKeys) {
  auto sorted = std::make_shared<table::Table>(*engines_table("b", [](int i) { return OptInt((i * 7919) % 13); }));
  table::sort_table(*sorted, {"a", "b"});
  sql::TablesInMemory t;
  t.add(sorted);
  const auto plan = [&](const std::string& q) { return gpu_plan(t, q); };
  for (const char* q : {"SELECT a, count(*), sum(x) FROM r GROUP BY a", "SELECT b, a, min(s) FROM r GROUP BY b, a ORDER BY 3",
                        "SELECT a, b, avg(x) FROM r GROUP BY a, b HAVING count(*) > 2"}) {
    const std::string p = plan(q);
    EXPECT_EQ(p.find("ordered aggregation (src/groupby/) over r, on the GPU: r is stored sorted by (a, b)"), 0u) << q << "\n" << p;
  }
  const std::string not_prefix = plan("SELECT b, count(*) FROM r GROUP BY b");
  EXPECT_NE(not_prefix.find("not ordered aggregation: r is stored sorted by (a, b), not on the grouping keys"),
            std::string::npos) << not_prefix;
  const std::string rollup = plan("SELECT a, b, count(*) FROM r GROUP BY ROLLUP (a, b)");
  EXPECT_NE(rollup.find("not ordered aggregation: it has 3 grouping sets"), std::string::npos) << rollup;
  EXPECT_NE(rollup.find("cube operator"), std::string::npos) << rollup;
  const std::string filtered = error_of([&] { plan("SELECT a, count(*) FROM r WHERE b > 3 GROUP BY a"); });
  EXPECT_NE(filtered.find("it has a WHERE clause"), std::string::npos) << filtered;
}

// cpu-parallel's `cube` grouping-sets method (the full-cube operator's
// cpu-partitioned) gives cpu-serial's answers, HAVING, GROUPING(), ORDER BY
// and LIMIT included; auto takes it where the hash aggregation would hash
// a set fed from the rows (a key of scattered values); the queries it
// cannot take are refused under `cube`, not answered otherwise.
TEST(SqlEngines, TheCubeMethodAgreesWithCpuSerial) {
  sql::TablesInMemory t;
  // `wide`: too spread for a perfect hash's array.
  t.add(engines_table("wide", [](int i) { return OptInt(static_cast<std::int64_t>(i % 3000) * 1000003); }));
  const std::vector<std::string> fitting = {
      "SELECT a, s, count(*), sum(x), avg(a), min(s), max(x), count(x), GROUPING(a, s) FROM r GROUP BY CUBE (a, s) "
      "ORDER BY 1, 2, 9",
      "SELECT a, s, sum(a) FROM r GROUP BY GROUPING SETS ((a), (s), (a, s), ()) HAVING count(*) > 100 ORDER BY 1, 2, 3",
      "SELECT wide, a, count(*), min(x), GROUPING(wide, a) FROM r GROUP BY ROLLUP (wide, a) ORDER BY 1, 2, 5 LIMIT 40",
      "SELECT s, max(a) FROM r GROUP BY s ORDER BY 1",
  };
  sql::SqlOptions serial, cube, parallel;
  serial.grouping_sets = sql::GroupingSetsMethod::PerSet;
  cube.engine = parallel.engine = sql::SqlEngine::CpuParallel;
  cube.grouping_sets = sql::GroupingSetsMethod::Cube;
  for (const auto& q : fitting) {
    const std::string expected = sql::format_result(sql::run(t, q, serial), sql::ResultFormat::Csv);
    EXPECT_EQ(sql::format_result(sql::run(t, q, cube), sql::ResultFormat::Csv), expected) << q;
    EXPECT_EQ(sql::format_result(sql::run(t, q, parallel), sql::ResultFormat::Csv), expected) << q;
  }
  const auto plan_of = [&](const std::string& q) { return sql::run(t, "EXPLAIN " + q, parallel).plan.front(); };
  EXPECT_NE(plan_of(fitting[2]).find("cube operator"), std::string::npos) << "auto, a hashed set fed from the rows";
  EXPECT_EQ(plan_of(fitting[0]).find("cube operator"), std::string::npos) << "auto, every fed set an array";
  EXPECT_EQ(plan_of(fitting[3]).find("cube operator"), std::string::npos) << "auto, one set of an array";
  const std::string wide_alone = "SELECT wide, count(*), sum(x) FROM r GROUP BY wide ORDER BY 1";
  EXPECT_NE(plan_of(wide_alone).find("cube operator"), std::string::npos) << "auto, one hashed set";
  EXPECT_EQ(sql::format_result(sql::run(t, wide_alone, parallel), sql::ResultFormat::Csv),
            sql::format_result(sql::run(t, wide_alone, serial), sql::ResultFormat::Csv));
  EXPECT_NE(error_of([&] { sql::run(t, "SELECT a, sum(x) FROM r WHERE x > 1 GROUP BY ROLLUP (a)", cube); })
                .find("this query does not fit: it has a WHERE clause"),
            std::string::npos);
  sql::SqlOptions serial_cube = cube;
  serial_cube.engine = sql::SqlEngine::CpuSerial;
  EXPECT_NE(error_of([&] { sql::run(t, fitting[0], serial_cube); }).find("runs on --engine cpu-parallel"), std::string::npos);
}

}  // namespace
}  // namespace gpuolap::testing
