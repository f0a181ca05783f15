// `gpuolap htree`, driven as a user would: build from a table, batches
// appended durably and replayed by the next process, a torn log tail cut
// off, answers equal to SQL's over the same tuples, and bad input named.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "support/command_test.hpp"

namespace {

namespace fs = std::filesystem;
using ::gpuolap::testing::Outcome;

class HTreeCli : public ::gpuolap::testing::CommandTest {
 protected:
  HTreeCli() : CommandTest("htree_cli_test") {}
};

const char* kSales = "region,day,product,amount\n"
                     "north,2024-01-02,p1,10\n"
                     "north,2024-01-02,p2,5\n"
                     "south,2024-01-03,p1,7\n"
                     "north,2024-01-03,p1,\n"
                     ",2024-01-02,007,1\n";

TEST_F(HTreeCli, BuildQueryUpdateAndReplayAnswerAsSqlDoes) {
  ASSERT_EQ(run("table load --db " + path("db") + " --name sales --csv " + file("s.csv", kSales) +
                " --types " + file("t.json", R"({"product": "string"})")).status, 0);
  const Outcome b = run("htree build --db " + path("db") + " --table sales --measure amount --order region,day,product "
                        "--out " + path("tree") + " --engine cpu-serial");
  ASSERT_EQ(b.status, 0) << b.err;
  const std::string q = file("q.csv", "product,day,region\n*,*,north\np1,*,*\n*,2024-01-02,*\n007,*,\n*,*,east\n*,*,*\n");
  const Outcome a = run("htree query --tree " + path("tree") + " --queries " + q + " --engine cpu-parallel");
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out,
            "product,day,region,count,sum,min,max,avg\n"
            "*,*,north,2,15,5,10,7.5\n"        // the NULL amount is not counted
            "p1,*,*,2,17,7,10,8.5\n"
            "*,2024-01-02,*,3,16,1,10,5.333333333333333\n"
            "007,*,,1,1,1,1,1\n"               // an empty field is NULL; "007" stays a string
            "*,*,east,0,,,,\n"
            "*,*,*,4,23,1,10,5.75\n");
  // A query file that is a pipe (a shell's <(...)) is read to its end, not
  // sized by seeking (which made an internal error).
  const std::string fifo = path("queries.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo) << slurp(q); });
  const Outcome piped = run("htree query --tree " + path("tree") + " --queries " + fifo + " --engine cpu-parallel");
  writer.join();
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.out, a.out);

  // A batch with a new region and an existing path; durable once the command returns.
  const std::string batch = file("b.csv", "amount,product,day,region\n3,p1,2024-01-02,north\n4,p9,2024-01-04,east\n");
  const Outcome u = run("htree update --tree " + path("tree") + " --csv " + batch + " --engine cpu-parallel");
  ASSERT_EQ(u.status, 0) << u.err;
  const Outcome info = run("htree info --tree " + path("tree"));
  EXPECT_NE(info.out.find("1 batches (2 tuples) replayed"), std::string::npos) << info.out;
  EXPECT_NE(info.out.find("7 tuples"), std::string::npos) << info.out;
  for (const char* engine : {"cpu-serial", "cpu-parallel"}) {
    const Outcome after = run("htree query --tree " + path("tree") + " --queries " + q + " --engine " + engine);
    EXPECT_NE(after.out.find("*,*,north,3,18,3,10,6\n"), std::string::npos) << after.out;
    EXPECT_NE(after.out.find("*,*,east,1,4,4,4,4\n"), std::string::npos) << after.out;
  }
  const Outcome sql = run("sql --db " + path("db") +
                          " \"SELECT count(amount), sum(amount), min(amount), max(amount) FROM sales WHERE product = 'p1'\"");
  EXPECT_NE(sql.out.find("2,17,7,10"), std::string::npos) << sql.out;

  // A crash mid-append leaves a torn tail: cut off, the acknowledged batch kept.
  { std::ofstream(path("tree") + "/htree.log", std::ios::app | std::ios::binary) << "\x10\x00\x00\x00partial"; }
  const Outcome torn = run("htree info --tree " + path("tree"));
  EXPECT_EQ(torn.status, 0) << torn.err;
  EXPECT_NE(torn.out.find("torn tail"), std::string::npos) << torn.out;
  EXPECT_NE(torn.out.find("7 tuples"), std::string::npos) << torn.out;
}

TEST_F(HTreeCli, BadInputIsNamed) {
  ASSERT_EQ(run("table load --db " + path("db") + " --name sales --csv " + file("s.csv", kSales)).status, 0);
  const std::string db = " --db " + path("db") + " --table sales ";
  expect_input_error("htree build" + db + "--measure region --out " + path("t"), {"measure region", "int64 or double"});
  expect_input_error("htree build" + db + "--measure amount --order region,nope --out " + path("t"), {"'nope'"});
  expect_input_error("htree build" + db + "--measure amount --order region,region --out " + path("t"), {"twice"});
  ASSERT_EQ(run("htree build" + db + "--measure amount --out " + path("t")).status, 0);
  expect_input_error("htree build" + db + "--measure amount --out " + path("t"), {"holds an H-tree already", "--force"});
  EXPECT_EQ(run("htree build" + db + "--measure amount --out " + path("t") + " --force").status, 0);
  const std::string tree = " --tree " + path("t") + " ";
  expect_input_error("htree query" + tree + "--queries " + file("q1.csv", "region,day\nnorth,*\n"), {"lacks dimension product"});
  expect_input_error("htree query" + tree + "--queries " + file("q2.csv", "region,day,product,x\nnorth,*,*,1\n"),
                     {"column x is no dimension"});
  expect_input_error("htree query" + tree + "--queries " + file("q3.csv", "region,day,product\nnorth,tuesday,*\n"),
                     {"q3.csv", "line 2", "column 2 (day)", "'tuesday' is not a date"});
  expect_input_error("htree query" + tree + "--queries " + file("q4.csv", "region,day,product\n*,*,*\n") + " --engine gpux",
                     {"unknown H-tree engine 'gpux'"});
  expect_input_error("htree update" + tree + "--csv " + file("b1.csv", "region,day,product,amount,extra\nn,2024-01-01,p,1,2\n"),
                     {"b1.csv", "extra"});
  expect_input_error("htree update" + tree + "--csv " + file("b2.csv", "region,day,product\nn,2024-01-01,p\n"),
                     {"has no column amount"});
  expect_input_error("htree update" + tree + "--csv " + file("b3.csv", "region,day,product,amount\nn,2024-01-01,p,lots\n"),
                     {"b3.csv"});
  expect_input_error("htree query" + tree + "--queries " + file("q5.csv", "region,day,product\nnorth,*\n"),
                     {"q5.csv", "line 2", "2 fields, the header has 3"});
  expect_input_error("htree query" + tree + "--queries " + file("q6.csv", ""), {"q6.csv", "needs a header line"});
  // A batch of no queries is answered with the header alone.
  const Outcome none = run("htree query" + tree + "--queries " + file("q7.csv", "product,region,day\n"));
  EXPECT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out, "product,region,day,count,sum,min,max,avg\n");
  expect_input_error("htree info --tree " + path("nowhere"), {"no H-tree here"});
  // Nothing half-written: the tree still answers with its 5 tuples.
  EXPECT_NE(run("htree info" + tree).out.find("5 tuples"), std::string::npos);
}

}  // namespace
