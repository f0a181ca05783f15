// Drives `gpuolap table` and `gpuolap generate KIND --db` as a user would:
// load, list, info, and bad input (exit 2, a message naming the file, nothing
// half-written).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>

#include "support/command_test.hpp"

namespace {

namespace fs = std::filesystem;

using ::gpuolap::testing::Outcome;

class TableCli : public ::gpuolap::testing::CommandTest {
 protected:
  TableCli() : CommandTest("table_cli") {}
};

TEST_F(TableCli, LoadListInfo) {
  const std::string csv = file("s.csv", "id,name,day,price\n2,b,2024-01-02,1.5\n1,a,,2\n3,\"c,d\",2024-01-01,\n");
  const std::string types = file("types.json", R"({"id": "double"})");
  const Outcome load = run("table load --db " + path("db") + " --name sales --csv " + csv + " --types " + types +
                           " --sort-by name");
  ASSERT_EQ(load.status, 0) << load.err;
  EXPECT_NE(load.out.find("table sales: 3 rows, 4 columns, sorted by name"), std::string::npos) << load.out;
  const Outcome list = run("table list --db " + path("db"));
  ASSERT_EQ(list.status, 0) << list.err;
  EXPECT_EQ(list.out.rfind("sales\t3 rows\t4 columns\t", 0), 0u) << list.out;
  const Outcome info = run("table info --db " + path("db"));
  ASSERT_EQ(info.status, 0) << info.err;
  EXPECT_NE(info.out.find("  id\tdouble\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("  name\tstring\t3 distinct\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("  day\tdate\t1 NULL\n"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("  price\tdouble\t1 NULL\n"), std::string::npos) << info.out;
}

TEST_F(TableCli, BadInputExitsTwoAndWritesNothing) {
  expect_input_error("table load --db " + path("db") + " --name t --csv " + file("bad.csv", "a,b\n1,2\n3\n"),
                     {"bad.csv: line 3, column 1 (a): 1 fields; the header has 2"});
  EXPECT_FALSE(fs::exists(path("db")));
  expect_input_error("table load --db " + path("db") + " --name t --csv " + path("absent.csv"), {"absent.csv"});
  expect_input_error("table load --db " + path("db") + " --name t --csv " + file("ok.csv", "a\n1\n") + " --types " +
                         file("t.json", R"({"a": "integer"})"),
                     {"t.json", "'integer'"});
  expect_input_error("table load --db " + path("db") + " --name 1t --csv " + path("ok.csv"), {"table name '1t'"});
  expect_input_error("table list --db " + path("nodb"), {"nodb: no such database directory"});
  ASSERT_EQ(run("table load --db " + path("db") + " --name t --csv " + path("ok.csv")).status, 0);
  // A corrupt table file: named, exit 2; the others still list.
  {
    std::fstream f(path("db/t.table"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-3, std::ios::end);
    f.put('\x7f');
  }
  expect_input_error("table info --db " + path("db"), {"t.table: corrupt"});
  expect_input_error("table info --db " + path("db") + " --name u", {"no table 'u'", "closest: t"});
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(path("db"))) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"t.table"});
}

TEST_F(TableCli, GenerateTablesIntoADatabase) {
  const Outcome g = run("generate zipf --db " + path("db") + " --scale 0.001 --theta 0.5 --cardinality 64");
  ASSERT_EQ(g.status, 0) << g.err;
  const Outcome list = run("table list --db " + path("db"));
  EXPECT_NE(list.out.find("d1\t64 rows\t2 columns"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("f\t10000 rows\t2 columns"), std::string::npos) << list.out;
  expect_input_error("generate lineitem --out " + path("x"), {"give --db DIR"});
  expect_input_error("generate --kind demo --db " + path("db"), {"give --out DIR"});
  expect_input_error("generate sales-flat --db " + path("db") + " --scale -1", {"--scale"});
}

}  // namespace
