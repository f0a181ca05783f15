// POST /sql: a database served beside the cube (and without one), answered
// as `gpuolap sql` answers, with the API's errors.
#include <gtest/gtest.h>

#include "server_fixture.hpp"
#include "table/database.hpp"

namespace gpuolap::server::testing {
namespace {

class SqlEndpoint : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    database_ = dir_ / "db";
    store_sales(2);
  }
  // sales(region string, amount int64): "east" 1..n, "west" 10, NULL region 5.
  void store_sales(int east_rows) {
    table::Table t;
    t.name = "sales";
    table::Column region, amount;
    region.name = "region";
    region.type = table::ColumnType::String;
    amount.name = "amount";
    amount.type = table::ColumnType::Int64;
    region.dictionary = {"east", "west"};
    for (int i = 1; i <= east_rows; ++i) {
      region.int32s.push_back(0);
      amount.int64s.push_back(i);
    }
    region.int32s.push_back(1);
    amount.int64s.push_back(10);
    region.int32s.push_back(0);
    amount.int64s.push_back(5);
    region.nulls.assign(region.int32s.size(), 0);
    region.nulls.back() = 1;
    t.columns = {region, amount};
    table::Database(database_, true).store(t);
  }
};

TEST_F(SqlEndpoint, AnswersAsJsonAndAsCsv) {
  start();
  const std::string query = "SELECT region, SUM(amount) AS total FROM sales GROUP BY region ORDER BY region NULLS FIRST";
  const Reply json_reply = post("/sql", {{"sql", query}});
  ASSERT_EQ(json_reply.status, 200) << json_reply.text;
  EXPECT_EQ(json_reply.body["rows"], nlohmann::json::parse(R"([[null, 5], ["east", 3], ["west", 10]])")) << json_reply.text;
  EXPECT_EQ(json_reply.body["columns"][1]["name"], "total");
  const Reply csv_reply = post("/sql?format=csv", {{"sql", query}, {"engine", "cpu-serial"}});
  ASSERT_EQ(csv_reply.status, 200) << csv_reply.text;
  EXPECT_EQ(csv_reply.text, "region,total\n,5\neast,3\nwest,10\n");
  // The cube is still served beside it.
  EXPECT_EQ(get("/cube/info").status, 200);
  EXPECT_EQ(get("/server/info").body["sql"]["tables"][0]["name"], "sales");
}

TEST_F(SqlEndpoint, ATableLoadedWhileServingIsSeenByTheNextQuery) {
  start();
  EXPECT_EQ(post("/sql", {{"sql", "SELECT COUNT(*) FROM sales"}}).body["rows"][0][0], 4);
  store_sales(5);
  EXPECT_EQ(post("/sql", {{"sql", "SELECT COUNT(*) FROM sales"}}).body["rows"][0][0], 7);
}

TEST_F(SqlEndpoint, RefusesBadQueriesWithTheirPlace) {
  max_rows_ = 2;
  start();
  const Reply unknown = post("/sql", {{"sql", "SELECT amont FROM sales"}});
  EXPECT_EQ(unknown.status, 400);
  EXPECT_NE(unknown.text.find("line 1, column 8"), std::string::npos) << unknown.text;
  EXPECT_NE(unknown.text.find("amount"), std::string::npos) << unknown.text;
  EXPECT_EQ(post("/sql", {{"sql", "SELEC 1"}}).status, 400);
  EXPECT_EQ(post("/sql", {{"query", "SELECT 1"}}).status, 400);
  EXPECT_EQ(post("/sql", {{"sql", "SELECT 1 / 0 FROM sales"}}).status, 400);
  const Reply too_many = post("/sql", {{"sql", "SELECT amount FROM sales"}});
  EXPECT_EQ(too_many.status, 400);
  EXPECT_NE(too_many.text.find("more than 2 rows"), std::string::npos) << too_many.text;
  EXPECT_EQ(get("/sql").status, 405);
}

TEST_F(SqlEndpoint, ServesADatabaseWithoutACube) {
  service_.reset();
  HttpOptions options = http_options_;
  options.port = 0;
  sql_ = std::make_unique<SqlApi>(table::Database(database_), max_rows_);
  http_ = std::make_unique<HttpApi>(nullptr, sql_.get(), nullptr, options, Limits{}.max_body_bytes);
  port_ = http_->bind();
  thread_ = std::thread([this] { http_->serve(); });
  client_ = std::make_unique<httplib::Client>("127.0.0.1", port_);
  EXPECT_EQ(post("/sql", {{"sql", "SELECT MAX(amount) FROM sales"}}).body["rows"][0][0], 10);
  const Reply cube_route = get("/cube/info");
  EXPECT_EQ(cube_route.status, 404);
  EXPECT_NE(cube_route.text.find("serves no cube"), std::string::npos) << cube_route.text;
  EXPECT_FALSE(get("/server/info").body.contains("cube"));
}

}  // namespace
}  // namespace gpuolap::server::testing
