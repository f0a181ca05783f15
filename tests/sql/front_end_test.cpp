// The front end: every construct of the subset parses and binds, and every
// refusal names what it refuses and where (line, column).
#include <gtest/gtest.h>

#include "sql/sql_tables.hpp"
#include "support/input_error.hpp"

namespace gpuolap::testing {
namespace {

// sales(id, region, amount, qty, day, store_id); stores(id, city); Cities(ID, "Name").
class FrontEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    tables.add(make_table("sales", {int_column("id", {1, 2, 3, 4, 5}),
                                    string_column("region", {"east", "west", "east", std::nullopt, "north"}),
                                    double_column("amount", {10.5, 20.0, std::nullopt, 5.25, 1.0}),
                                    int_column("qty", {3, 4, 5, std::nullopt, 7}),
                                    date_column("day", {10592, 10593, 10957, 10957, std::nullopt}),  // 1999-01-01 ...
                                    int_column("store_id", {1, 2, 1, 2, 3})}));
    tables.add(make_table("stores", {int_column("id", {1, 2, 3}), string_column("city", {"Oslo", "Rome", "Oslo"})}));
    tables.add(make_table("Cities", {int_column("ID", {1}), string_column("Name", {"x"})}));
  }
  std::string csv(const std::string& q) { return csv_of(tables, q); }
  std::string error(const std::string& q) {
    return error_of([&] { csv(q); });
  }
  sql::TablesInMemory tables;
};

TEST_F(FrontEnd, SelectListOfColumnsArithmeticCaseCastAndExtract) {
  EXPECT_EQ(csv("SELECT id, qty * 2 + 1 AS q, CASE WHEN qty > 4 THEN 'big' WHEN qty IS NULL THEN 'none' ELSE 'small' END "
                "AS size, CAST(qty AS double precision) / 2, EXTRACT(YEAR FROM day), EXTRACT(MONTH FROM day), "
                "EXTRACT(DAY FROM day) FROM sales ORDER BY id"),
            "id,q,size,?column?,extract,extract,extract\n"
            "1,7,small,1.5,1999,1,1\n2,9,small,2,1999,1,2\n3,11,big,2.5,2000,1,1\n4,,none,,2000,1,1\n5,15,big,3.5,,,\n");
}

TEST_F(FrontEnd, SimpleCaseAndCastsOfText) {
  EXPECT_EQ(csv("SELECT CASE region WHEN 'east' THEN 1 WHEN 'west' THEN 2 END AS r, CAST('42' AS bigint) + 1 AS n, "
                "'7'::int AS m, CAST(id AS text) AS t FROM sales WHERE id <= 2 ORDER BY id"),
            "r,n,m,t\n1,43,7,1\n2,43,7,2\n");
}

TEST_F(FrontEnd, DateLiteralsAndDateArithmetic) {
  EXPECT_EQ(csv("SELECT date '1999-01-01' + 31 AS a, date '1999-03-01' - 1 AS b, date '2000-03-01' - date '2000-02-01' "
                "AS days, date '1998-12-01' - interval '90' day AS q1, date '1998-12-01' + interval '1 day' AS c"),
            "a,b,days,q1,c\n1999-02-01,1999-02-28,29,1998-09-02,1998-12-02\n");
  EXPECT_EQ(csv("SELECT id FROM sales WHERE day >= '2000-01-01' ORDER BY id"), "id\n3\n4\n");
}

TEST_F(FrontEnd, WherePredicates) {
  EXPECT_EQ(csv("SELECT id FROM sales WHERE region IN ('east', 'north') AND NOT qty BETWEEN 4 AND 5 ORDER BY id"),
            "id\n1\n5\n");
  EXPECT_EQ(csv("SELECT id FROM sales WHERE region LIKE '%st' OR region IS NULL ORDER BY id"), "id\n1\n2\n3\n4\n");
  EXPECT_EQ(csv("SELECT id FROM sales WHERE region NOT LIKE 'e_st' ORDER BY id"), "id\n2\n5\n");
  EXPECT_EQ(csv("SELECT id FROM sales WHERE amount IS NOT NULL AND (qty > 3 OR amount < 6) ORDER BY id"),
            "id\n2\n4\n5\n");  // row 4: NULL OR true
  EXPECT_EQ(csv("SELECT id FROM sales WHERE qty NOT IN (3, NULL)"), "id\n");  // NOT IN with NULL: never true
}

TEST_F(FrontEnd, AggregatesWithAndWithoutGroups) {
  EXPECT_EQ(csv("SELECT count(*), count(qty), count(DISTINCT region), sum(qty), avg(qty), min(region), max(day), "
                "sum(amount), avg(amount) FROM sales"),
            "count,count,count,sum,avg,min,max,sum,avg\n5,4,3,19,4.75,east,2000-01-01,36.75,9.1875\n");
  EXPECT_EQ(csv("SELECT region, count(*) AS n, sum(qty) FROM sales GROUP BY region ORDER BY region NULLS FIRST"),
            "region,n,sum\n,1,\neast,2,8\nnorth,1,7\nwest,1,4\n");
}

TEST_F(FrontEnd, StarJoinsCommaAndJoinOn) {
  const std::string expected = "city,total\nOslo,15\nRome,4\n";
  EXPECT_EQ(csv("SELECT city, sum(qty) AS total FROM sales, stores WHERE sales.store_id = stores.id GROUP BY city "
                "ORDER BY city"),
            expected);
  EXPECT_EQ(csv("SELECT s.city, sum(f.qty) AS total FROM sales AS f JOIN stores s ON f.store_id = s.id GROUP BY s.city "
                "ORDER BY 1"),
            expected);
}

TEST_F(FrontEnd, RollupCubeGroupingSetsAndGrouping) {
  EXPECT_EQ(csv("SELECT region, city, GROUPING(region, city) AS g, count(*) FROM sales JOIN stores ON store_id = stores.id "
                "WHERE region IS NOT NULL GROUP BY ROLLUP (region, city) ORDER BY g, region, city"),
            "region,city,g,count\neast,Oslo,0,2\nnorth,Oslo,0,1\nwest,Rome,0,1\neast,,1,2\nnorth,,1,1\nwest,,1,1\n,,3,4\n");
  EXPECT_EQ(csv("SELECT region, GROUPING(region), count(*) FROM sales GROUP BY CUBE (region) ORDER BY 2, 1 NULLS FIRST"),
            "region,grouping,count\n,0,1\neast,0,2\nnorth,0,1\nwest,0,1\n,1,5\n");
  EXPECT_EQ(csv("SELECT region, qty, count(*) FROM sales WHERE id < 3 GROUP BY GROUPING SETS ((region), (qty), ()) "
                "ORDER BY 1, 2"),
            "region,qty,count\neast,,1\nwest,,1\n,3,1\n,4,1\n,,2\n");
  // The cross product of the items, as PostgreSQL expands it: 2 x 2 sets.
  EXPECT_EQ(csv("SELECT count(*) FROM sales GROUP BY ROLLUP (region), CUBE (qty) HAVING count(*) = 5"), "count\n5\n");
}

TEST_F(FrontEnd, HavingOrderByNullsAndLimit) {
  EXPECT_EQ(csv("SELECT region, sum(qty) AS s FROM sales GROUP BY region HAVING sum(qty) > 4 ORDER BY s DESC"),
            "region,s\neast,8\nnorth,7\n");
  EXPECT_EQ(csv("SELECT qty FROM sales ORDER BY qty DESC NULLS LAST LIMIT 2 OFFSET 1"), "qty\n5\n4\n");
  EXPECT_EQ(csv("SELECT qty FROM sales ORDER BY qty DESC LIMIT 1"), "qty\n\n");  // DESC puts NULLs first
  EXPECT_EQ(csv("SELECT id FROM sales ORDER BY id LIMIT 0"), "id\n");
}

TEST_F(FrontEnd, GroupByPositionsAndOutputNames) {
  EXPECT_EQ(csv("SELECT qty % 2 AS parity, count(*) FROM sales WHERE qty IS NOT NULL GROUP BY 1 ORDER BY parity"),
            "parity,count\n0,1\n1,3\n");
  EXPECT_EQ(csv("SELECT qty % 2 AS parity, count(*) FROM sales WHERE qty IS NOT NULL GROUP BY parity ORDER BY 1"),
            "parity,count\n0,1\n1,3\n");
}

TEST_F(FrontEnd, IdentifiersMatchCaseInsensitivelyUnlessQuoted) {
  EXPECT_EQ(csv("SELECT id, name FROM cities"), "id,name\n1,x\n");
  EXPECT_EQ(csv("SELECT \"ID\", \"Name\" FROM \"Cities\""), "ID,Name\n1,x\n");
  EXPECT_NE(error("SELECT \"id\" FROM cities").find("line 1, column 8: column \"id\" does not exist"), std::string::npos);
  EXPECT_NE(error("SELECT 1 FROM \"cities\"").find("line 1, column 15: relation \"cities\" does not exist; did you mean "
                                                   "\"Cities\"?"),
            std::string::npos);
}

TEST_F(FrontEnd, ExplainPrintsThePlanAndItsChoices) {
  std::string plan = csv("EXPLAIN SELECT city, sum(qty) FROM sales, stores WHERE store_id = stores.id AND qty > 1 "
                         "GROUP BY city");
  EXPECT_NE(plan.find("QUERY PLAN"), std::string::npos);
  EXPECT_NE(plan.find("Join (array lookup) stores"), std::string::npos);
  EXPECT_NE(plan.find("Aggregate (hash"), std::string::npos);
  EXPECT_NE(plan.find("Scan sales"), std::string::npos);
  EXPECT_NE(plan.find("filter: (sales.qty > 1)"), std::string::npos);
}

TEST_F(FrontEnd, RefusalsNameTheConstructAndItsPosition) {
  struct Case {
    std::string query, message;
  };
  const std::vector<Case> cases = {
      {"SELECT FROM WHERE", "line 1, column 13: SQL: syntax error at or near \"WHERE\""},
      {"SELECT id\nFROM sales\nWHERE id IN (SELECT 1)", "line 3, column 10: a subquery is not supported"},
      {"SELECT DISTINCT id FROM sales", "SELECT DISTINCT is not supported"},
      {"SELECT id FROM sales LEFT JOIN stores ON store_id = stores.id", "LEFT JOIN (only inner joins) is not supported"},
      {"SELECT id FROM sales UNION SELECT id FROM stores", "UNION, INTERSECT and EXCEPT is not supported"},
      {"SELECT sum(qty) OVER () FROM sales", "a window function is not supported"},
      {"SELECT id FROM sales WHERE region ILIKE 'E%'", "line 1, column 35: ILIKE is not supported"},
      {"SELECT coalesce(qty, 0) FROM sales", "line 1, column 8: COALESCE is not supported"},
      {"SELECT upper(region) FROM sales", "line 1, column 8: function upper() is not supported"},
      {"SELECT id FROM salez", "line 1, column 16: relation \"salez\" does not exist; did you mean \"sales\"?"},
      {"SELECT qyt FROM sales", "line 1, column 8: column \"qyt\" does not exist; did you mean \"qty\"?"},
      {"SELECT id FROM sales, stores WHERE store_id = stores.id", "line 1, column 8: column reference \"id\" is ambiguous"},
      {"SELECT region + 1 FROM sales", "line 1, column 15: operator does not exist: text + bigint"},
      {"SELECT id FROM sales WHERE day = 3", "line 1, column 32: operator does not exist: date = bigint"},
      {"SELECT id FROM sales WHERE qty", "line 1, column 28: argument of WHERE must be type boolean, not type bigint"},
      {"SELECT sum(region) FROM sales", "line 1, column 8: function sum(text) does not exist"},
      {"SELECT id / 0 FROM sales", "line 1, column 11: division by zero"},
      {"SELECT region, qty FROM sales GROUP BY region",
       "line 1, column 16: column \"qty\" must appear in the GROUP BY clause or be used in an aggregate function"},
      {"SELECT id FROM sales WHERE sum(qty) > 1", "aggregate functions are not allowed in WHERE"},
      {"SELECT qty FROM sales, stores", "line 1, column 24: table \"stores\" is joined to the others by no equality"},
      {"SELECT date '1999-02-30'", "line 1, column 8: invalid input syntax for type date: \"1999-02-30\""},
      {"SELECT EXTRACT(DOW FROM day) FROM sales", "EXTRACT(dow ...) is not supported; only YEAR, MONTH and DAY"},
      {"SELECT id FROM sales LIMIT -1", "LIMIT must not be negative"},
      {"SELECT 1; SELECT 2", "one statement at a time"},
      // Found by the fuzzer: 750 nested operators overflowed the binder's stack.
      {"SELECT " + std::string(2000, '+') + "1", "stack depth limit exceeded"},
      // Found by the fuzzer: the parse tree comes back as JSON, which must be UTF-8.
      {"SELECT id FROM sales\xff WHERE id = 1", "line 1, column 21: SQL: invalid byte sequence for encoding \"UTF8\": 0xff"},
      {"SELECT '\xc3\xa9\xed\xa0\x80'", "line 1, column 10: SQL: invalid byte sequence for encoding \"UTF8\": 0xed"},
      {"INSERT INTO sales VALUES (1)", "only SELECT and EXPLAIN SELECT are supported, not InsertStmt"},
      {"SELECT interval '1' month", "only whole days"},
      {"SELECT count(*) FILTER (WHERE qty > 1) FROM sales", "FILTER (WHERE ...) of an aggregate is not supported"},
      {"SELECT id FROM sales WHERE region LIKE 'a!%' ESCAPE '!'", "line 1, column 35: LIKE ... ESCAPE is not supported"},
      {"SELECT interval '2' day", "line 1, column 8: intervals are supported only in date ± interval"},
      {"SELECT 9223372036854775807 + 1", "line 1, column 28: bigint out of range"},
      {"SELECT GROUPING(qty) FROM sales GROUP BY region",
       "arguments to GROUPING must be grouping expressions of the associated query level"},
  };
  for (const auto& c : cases) {
    std::string message = error(c.query);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.query << "\n  gave: " << message;
  }
}

TEST_F(FrontEnd, AResultOverTheRowLimitIsRefused) {
  EXPECT_NE(error_of([&] { csv_of(tables, "SELECT id FROM sales", 4); }).find("more than 4 rows"), std::string::npos);
  EXPECT_NE(error_of([&] { csv_of(tables, "SELECT id, count(*) FROM sales GROUP BY id", 4); }).find("more than 4 rows"),
            std::string::npos);
  EXPECT_EQ(csv_of(tables, "SELECT id FROM sales LIMIT 4", 4), "id\n1\n2\n3\n4\n");
}

}  // namespace
}  // namespace gpuolap::testing
