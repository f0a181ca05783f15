// Predicates on string columns run on dictionary codes (a literal's place in
// the sorted dictionary by binary search; LIKE once per dictionary entry):
// literals absent from the dictionary, before and after every entry, between
// two codes, IN lists, LIKE, and NULL rows, on both engines.
#include <gtest/gtest.h>

#include "sql_tables.hpp"

namespace gpuolap {
namespace {

using testing::csv_of;
using testing::int_column;
using testing::make_table;
using testing::string_column;

sql::TablesInMemory fruit() {
  sql::TablesInMemory t;
  t.add(make_table("t", {int_column("id", {1, 2, 3, 4, 5, 6}),
                         string_column("s", {"apple", "banana", std::nullopt, "cherry", "banana", "date"})}));
  return t;
}

std::string on(sql::SqlEngine engine, const sql::TableCatalog& tables, const std::string& query) {
  sql::SqlOptions options;
  options.engine = engine;
  return sql::format_result(sql::run(tables, query, options), sql::ResultFormat::Csv);
}

class CodeFilters : public ::testing::TestWithParam<sql::SqlEngine> {
 protected:
  std::string count_where(const std::string& predicate) {
    return on(GetParam(), tables_, "SELECT count(*) FROM t WHERE " + predicate);
  }
  std::string ids_where(const std::string& predicate) {
    return on(GetParam(), tables_, "SELECT id FROM t WHERE " + predicate + " ORDER BY id");
  }
  sql::TablesInMemory tables_ = fruit();
};

TEST_P(CodeFilters, LiteralAbsentFromTheDictionary) {
  EXPECT_EQ(count_where("s = 'blueberry'"), "count\n0\n");
  EXPECT_EQ(count_where("s <> 'blueberry'"), "count\n5\n");  // the NULL row is neither
  EXPECT_EQ(ids_where("s < 'blueberry'"), "id\n1\n2\n5\n");
  EXPECT_EQ(ids_where("s > 'blueberry'"), "id\n4\n6\n");
  EXPECT_EQ(ids_where("s <= 'blueberry'"), "id\n1\n2\n5\n");
  EXPECT_EQ(ids_where("s >= 'blueberry'"), "id\n4\n6\n");
}

TEST_P(CodeFilters, LiteralBeforeAndAfterEveryEntry) {
  EXPECT_EQ(count_where("s < 'a'"), "count\n0\n");
  EXPECT_EQ(count_where("s >= 'a'"), "count\n5\n");
  EXPECT_EQ(count_where("s > 'zzz'"), "count\n0\n");
  EXPECT_EQ(count_where("s <= 'zzz'"), "count\n5\n");
}

TEST_P(CodeFilters, LiteralInTheDictionaryAndOnTheLeft) {
  EXPECT_EQ(ids_where("s = 'banana'"), "id\n2\n5\n");
  EXPECT_EQ(ids_where("s <> 'banana'"), "id\n1\n4\n6\n");
  EXPECT_EQ(ids_where("s <= 'banana'"), "id\n1\n2\n5\n");
  EXPECT_EQ(ids_where("s > 'banana'"), "id\n4\n6\n");
  EXPECT_EQ(ids_where("'banana' < s"), "id\n4\n6\n");
  EXPECT_EQ(ids_where("'cherry' >= s"), "id\n1\n2\n4\n5\n");
}

TEST_P(CodeFilters, BetweenTwoCodes) {
  EXPECT_EQ(ids_where("s BETWEEN 'b' AND 'cz'"), "id\n2\n4\n5\n");
  EXPECT_EQ(ids_where("s BETWEEN 'banana' AND 'cherry'"), "id\n2\n4\n5\n");
  EXPECT_EQ(ids_where("s NOT BETWEEN 'banana' AND 'cherry'"), "id\n1\n6\n");
  EXPECT_EQ(count_where("s BETWEEN 'c' AND 'b'"), "count\n0\n");
}

TEST_P(CodeFilters, InLists) {
  EXPECT_EQ(ids_where("s IN ('banana', 'fig', 'date')"), "id\n2\n5\n6\n");
  EXPECT_EQ(ids_where("s NOT IN ('banana', 'fig')"), "id\n1\n4\n6\n");
  EXPECT_EQ(count_where("s IN ('fig', 'kiwi')"), "count\n0\n");
}

TEST_P(CodeFilters, LikeOverTheDictionary) {
  EXPECT_EQ(ids_where("s LIKE '%an%'"), "id\n2\n5\n");
  EXPECT_EQ(ids_where("s NOT LIKE '%an%'"), "id\n1\n4\n6\n");
  EXPECT_EQ(ids_where("s LIKE 'b_nana'"), "id\n2\n5\n");
  EXPECT_EQ(count_where("s LIKE 'z%'"), "count\n0\n");
}

TEST_P(CodeFilters, NullRowsAreNull) {
  EXPECT_EQ(ids_where("(s = 'apple') IS NULL"), "id\n3\n");
  EXPECT_EQ(ids_where("(s LIKE '%') IS NULL"), "id\n3\n");
  EXPECT_EQ(ids_where("(s IN ('apple')) IS NULL"), "id\n3\n");
  EXPECT_EQ(on(GetParam(), tables_, "SELECT id, s >= 'banana' AS b FROM t ORDER BY id"),
            "id,b\n1,f\n2,t\n3,\n4,t\n5,t\n6,t\n");
}

TEST_P(CodeFilters, ConstantSubexpressionsOnceABatch) {
  EXPECT_EQ(count_where("id <= 3 + 1"), "count\n4\n");
  // Evaluated once, a constant's error is still the query's error.
  EXPECT_ANY_THROW(count_where("id <= 1 / 0"));
}

INSTANTIATE_TEST_SUITE_P(BothEngines, CodeFilters, ::testing::Values(sql::SqlEngine::CpuSerial, sql::SqlEngine::CpuParallel),
                         [](const auto& info) { return info.param == sql::SqlEngine::CpuSerial ? "CpuSerial" : "CpuParallel"; });

}  // namespace
}  // namespace gpuolap
