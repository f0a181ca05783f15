// POST /htree/append and /htree/query: batches acknowledged once durable and
// seen by every later query, appends and queries from many clients at once,
// a restart that replays the log, the token, and bad bodies named.
#include <gtest/gtest.h>

#include <atomic>
#include <regex>
#include <thread>

#include "htree/durable_htree.hpp"
#include "htree/htree_io.hpp"
#include "htree/int64_tree.hpp"
#include "server_fixture.hpp"
#include "table/table.hpp"

namespace gpuolap::server::testing {
namespace {

class HTreeEndpoint : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    htree_ = dir_ / "tree";
    // t(a, b, m): (a, b) = (i % 3, i % 5), m = i, for i = 1..30.
    std::vector<std::int64_t> a, b, m;
    for (int i = 1; i <= 30; ++i) {
      a.push_back(i % 3);
      b.push_back(i % 5);
      m.push_back(i);
    }
    htree::testing::create_ab_tree(htree_, a, b, m);
  }
  Reply query(const std::string& csv) { return post_text("/htree/query", csv); }
};

TEST_F(HTreeEndpoint, AnAppendedBatchIsSeenByTheNextQueryAndAfterARestart) {
  start();
  EXPECT_EQ(query("b,a\n*,*\n*,1\n").text, "b,a,count,sum,min,max,avg\n*,*,30,465,1,30,15.5\n*,1,10,145,1,28,14.5\n");
  const Reply r = post_text("/htree/append", "a,b,m\n1,7,100\n9,9,1\n");
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["appended"], 2);
  EXPECT_EQ(r.body["tuples"], 32);
  const Reply after = query("a,b\n*,*\n1,*\n*,7\n9,9\n");
  EXPECT_EQ(after.text,
            "a,b,count,sum,min,max,avg\n*,*,32,566,1,100,17.6875\n1,*,11,245,1,100,22.272727272727273\n"
            "*,7,1,100,100,100,100\n9,9,1,1,1,1,1\n");
  stop();
  start();
  EXPECT_EQ(query("a,b\n*,*\n1,*\n*,7\n9,9\n").text, after.text);
  EXPECT_EQ(get("/server/info").body["htree"]["tuples"], 32);
  // Its steps' times in the W3C form, as /cell/area's.
  const auto timed = client_->Post("/htree/query", "a,b\n*,*\n", "text/csv");
  ASSERT_TRUE(timed);
  EXPECT_TRUE(std::regex_match(timed->get_header_value("Server-Timing"),
                               std::regex(R"(parse;dur=[0-9.]+, query;dur=[0-9.]+, write;dur=[0-9.]+)")))
      << timed->get_header_value("Server-Timing");
}

TEST_F(HTreeEndpoint, AppendsAndQueriesFromManyClientsAtOnce) {
  start();
  constexpr int kWriters = 4, kBatches = 10, kReaders = 4;
  std::atomic<bool> done{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w)
    threads.emplace_back([&, w] {
      httplib::Client c("127.0.0.1", port_);
      for (int k = 0; k < kBatches; ++k) {
        const auto r = c.Post("/htree/append", "a,b,m\n" + std::to_string(10 + w) + "," + std::to_string(k) + ",1\n",
                              "text/csv");
        if (!r || r->status != 200) ++bad;
      }
    });
  for (int q = 0; q < kReaders; ++q)
    threads.emplace_back([&] {
      httplib::Client c("127.0.0.1", port_);
      std::uint64_t last = 0;
      while (!done) {
        const auto r = c.Post("/htree/query", "a,b\n*,*\n", "text/csv");
        if (!r || r->status != 200) {
          ++bad;
          continue;
        }
        // The total never goes back: every acknowledged batch stays seen.
        const std::string line = r->body.substr(r->body.find('\n') + 1);
        const std::uint64_t count = std::stoull(line.substr(4));
        if (count < last) ++bad;
        last = count;
      }
    });
  for (int w = 0; w < kWriters; ++w) threads[w].join();
  done = true;
  for (std::size_t i = kWriters; i < threads.size(); ++i) threads[i].join();
  EXPECT_EQ(bad, 0);
  EXPECT_EQ(query("a,b\n*,*\n").text.substr(30, 3), "70,");  // 30 + 4 x 10
}

TEST_F(HTreeEndpoint, WritesNeedTheTokenAndBadBodiesAreNamed) {
  start({}, "s3cret");
  EXPECT_EQ(post_text("/htree/append", "a,b,m\n1,1,1\n").status, 401);
  EXPECT_EQ(post_text("/htree/append", "a,b,m\n1,1,1\n", {{"Authorization", "Bearer nope"}}).status, 403);
  const httplib::Headers auth{{"Authorization", "Bearer s3cret"}};
  EXPECT_EQ(post_text("/htree/append", "a,b,m\n1,1,1\n", auth).status, 200);
  const Reply extra = post_text("/htree/append", "a,b,m,x\n1,1,1,1\n", auth);
  EXPECT_EQ(extra.status, 400);
  EXPECT_NE(extra.text.find("column x"), std::string::npos) << extra.text;
  const Reply bad_value = post_text("/htree/append", "a,b,m\nnorth,1,1\n", auth);
  EXPECT_EQ(bad_value.status, 400) << bad_value.text;
  const Reply missing = query("a\n1\n");
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.text.find("lacks dimension b"), std::string::npos) << missing.text;
  EXPECT_EQ(query("a,b\nx,*\n").status, 400);
  // Refused batches left nothing behind.
  EXPECT_EQ(query("a,b\n*,*\n").text, "a,b,count,sum,min,max,avg\n*,*,31,466,1,30,15.03225806451613\n");
}

}  // namespace
}  // namespace gpuolap::server::testing
