// SQL's gpu engine over tables stored sorted on the grouping keys: ordered
// aggregation (src/groupby/) answers as cpu-serial does, with NULL keys, a
// double key with NaN and -0.0, string and date keys and aggregates,
// HAVING, ORDER BY and LIMIT; a repeated query over the same table reuses
// its columns on the GPU, also with other aggregates over them; an empty
// table gives no groups.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cube/cube_cases.hpp"
#include "sql/result_format.hpp"
#include "sql/sql.hpp"
#include "table/table.hpp"

namespace gpuolap::cube {
namespace {

struct Case {
  std::vector<std::string> sort_by;
  std::vector<std::string> queries;
};

std::vector<Case> cases() {
  // 8 aggregates, the most the operator takes; the others in the queries below.
  const std::string aggregates = "count(*), count(x), sum(x), avg(x), min(x), max(x), sum(y), min(z)";
  return {
      {{"a"},
       {"SELECT a, " + aggregates + " FROM facts GROUP BY a ORDER BY a NULLS FIRST",
        "SELECT a, sum(y), max(c), avg(y) FROM facts GROUP BY a HAVING count(*) > 10 ORDER BY 2 DESC LIMIT 2"}},
      {{"b", "a"},
       {"SELECT a, b, " + aggregates + " FROM facts GROUP BY b, a ORDER BY a NULLS FIRST, b NULLS FIRST",
        "SELECT b, count(*), min(c) FROM facts GROUP BY b ORDER BY b NULLS FIRST"}},
      {{"d"}, {"SELECT d, count(*), sum(x), max(z) FROM facts GROUP BY d ORDER BY d NULLS FIRST"}},
      {{"c", "e", "a"},
       {"SELECT c, e, a, count(*), sum(y), min(x) FROM facts GROUP BY c, e, a "
        "ORDER BY c NULLS FIRST, e NULLS FIRST, a NULLS FIRST",
        "SELECT e, c, avg(x) FROM facts GROUP BY c, e ORDER BY c NULLS FIRST, e NULLS FIRST LIMIT 7"}},
  };
}

TEST(SqlOrderedGpu, AnswersAsCpuSerialOverTablesStoredSortedOnTheKeys) {
  for (std::size_t rows : {0, 1, 3000, 200000})
    for (const Case& c : cases()) {
      auto t = std::make_shared<table::Table>(test::random_table(rows, 40 + static_cast<std::uint32_t>(rows)));
      table::sort_table(*t, c.sort_by);
      sql::TablesInMemory catalog;
      catalog.add(t);
      for (const std::string& query : c.queries) {
        sql::SqlOptions serial, gpu;
        gpu.engine = sql::SqlEngine::Gpu;
        const sql::QueryResult plan = sql::run(catalog, "EXPLAIN " + query, gpu);
        ASSERT_FALSE(plan.plan.empty());
        EXPECT_EQ(plan.plan.front().find("ordered aggregation"), 0u) << query << ": " << plan.plan.front();
        const std::string want = sql::format_result(sql::run(catalog, query, serial), sql::ResultFormat::Csv);
        // Twice: the second finds the columns on the GPU.
        for (int round = 0; round < 2; ++round) {
          const std::string got = sql::format_result(sql::run(catalog, query, gpu), sql::ResultFormat::Csv);
          test::expect_same_csv(want, got, query + ", " + std::to_string(rows) + " rows, round " + std::to_string(round));
        }
      }
    }
}

// Queries over the same key and value columns share their columns on the
// GPU; each still computes its own aggregates (a first version ran the
// first query's aggregates for every later one).
TEST(SqlOrderedGpu, QueriesOverTheSameColumnsEachComputeTheirOwnAggregates) {
  auto t = std::make_shared<table::Table>(test::random_table(50000, 77));
  table::sort_table(*t, {"a"});
  sql::TablesInMemory catalog;
  catalog.add(t);
  for (const char* query : {"SELECT a, sum(x) FROM facts GROUP BY a ORDER BY a NULLS FIRST",
                            "SELECT a, max(x) FROM facts GROUP BY a ORDER BY a NULLS FIRST",
                            "SELECT a, count(*), sum(x), min(x) FROM facts GROUP BY a ORDER BY a NULLS FIRST",
                            "SELECT a, count(*) FROM facts GROUP BY a ORDER BY a NULLS FIRST",
                            "SELECT a, avg(x) FROM facts GROUP BY a ORDER BY a NULLS FIRST"}) {
    sql::SqlOptions serial, gpu;
    gpu.engine = sql::SqlEngine::Gpu;
    const std::string want = sql::format_result(sql::run(catalog, query, serial), sql::ResultFormat::Csv);
    test::expect_same_csv(want, sql::format_result(sql::run(catalog, query, gpu), sql::ResultFormat::Csv), query);
  }
}

}  // namespace
}  // namespace gpuolap::cube
