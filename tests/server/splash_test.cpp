// Writing consolidated cells by splashing, as Palo does, checked by hand on
// the Shop cube: (a,2024) 10, (b,2024) 20, (a,2025) 30, (c,2025) 5;
// All = a + 2 b, Pair = a + c, Diff = a - c, Y = 2024 + 2025.
#include <gtest/gtest.h>

#include "server_fixture.hpp"

namespace gpuolap::server::testing {
namespace {

using nlohmann::json;

class SplashTest : public ServerTest {
 protected:
  Reply replace(const json& body) { return post("/cell/replace", body); }
};

TEST_F(SplashTest, ProportionalScalesTheFilledBaseCells) {
  start();
  Reply r = replace({{"path", "All,2024"}, {"value", 100}});  // 50 -> 100: everything under it doubles
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.body["cells_written"], 2);
  EXPECT_EQ(value("a,2024"), 20.0);
  EXPECT_EQ(value("b,2024"), 40.0);
  EXPECT_EQ(value("All,2024"), 100.0);
  EXPECT_EQ(value("a,2025"), 30.0);
  // mode add: the new total is the current one plus the value.
  ASSERT_EQ(replace({{"path", "Pair,Y"}, {"value", 55}, {"mode", "add"}, {"splash", "proportional"}}).status, 200);
  // Pair,Y was 20 + 30 + 5 = 55, now 110: each doubles.
  EXPECT_EQ(value("a,2024"), 40.0);
  EXPECT_EQ(value("a,2025"), 60.0);
  EXPECT_EQ(value("c,2025"), 10.0);
  EXPECT_EQ(value("b,2024"), 40.0);
  EXPECT_TRUE(value("c,2024").is_null());  // empty cells stay empty
}

TEST_F(SplashTest, AnEmptyConsolidatedCellIsFilledEvenlyByWeight) {
  start();
  // Units under (Pair, 2025) are empty: 10 spreads as 5 + 5.
  ASSERT_EQ(replace({{"path", "Pair,2025"}, {"value", 10}, {"measure", "Units"}}).status, 200);
  EXPECT_EQ(value("a,2025", "Units"), 5.0);
  EXPECT_EQ(value("c,2025", "Units"), 5.0);
  // Under (All, 2025) the weights are a 1, b 2: each base cell gets 30 / 3.
  ASSERT_EQ(replace({{"path", "b,2025"}, {"value", nullptr}, {"measure", "Units"}}).status, 200);
  ASSERT_EQ(replace({{"path", "a,2025"}, {"value", nullptr}, {"measure", "Units"}}).status, 200);
  ASSERT_EQ(replace({{"path", "All,2025"}, {"value", 30}, {"measure", "Units"}}).status, 200);
  EXPECT_EQ(value("a,2025", "Units"), 10.0);
  EXPECT_EQ(value("b,2025", "Units"), 10.0);
  EXPECT_EQ(value("All,2025", "Units"), 30.0);
  EXPECT_TRUE(value("b,2025").is_null());  // the other measure is untouched
  // Weights summing to 0 (Diff = a - c) cannot reach a value.
  const Reply r = replace({{"path", "Diff,2024"}, {"value", 4}, {"measure", "Units"}, {"splash", "proportional"}});
  ASSERT_EQ(r.status, 200) << r.text;  // a,2024 holds 1 unit: proportional
  EXPECT_EQ(value("a,2024", "Units"), 4.0);
  const Reply zero = replace({{"path", "Diff,Y"}, {"value", 4}, {"measure", "Sales"}, {"mode", "set"}});
  ASSERT_EQ(zero.status, 200) << zero.text;  // 10 + 30 - 5 = 35 -> 4
  ASSERT_EQ(post("/cell/replace", {{"path", "Diff,Y"}, {"mode", "delete"}}).status, 200);
  const Reply refused = replace({{"path", "Diff,Y"}, {"value", 4}});
  EXPECT_EQ(refused.status, 400);
  EXPECT_NE(refused.body["detail"].get<std::string>().find("sum to 0"), std::string::npos) << refused.text;
}

TEST_F(SplashTest, AddAndSetReachEveryBaseCellUnderTheCell) {
  start();
  ASSERT_EQ(replace({{"path", "Pair,Y"}, {"value", 1}, {"splash", "add"}}).status, 200);
  EXPECT_EQ(value("a,2024"), 11.0);
  EXPECT_EQ(value("a,2025"), 31.0);
  EXPECT_EQ(value("c,2024"), 1.0);  // was empty
  EXPECT_EQ(value("c,2025"), 6.0);
  EXPECT_EQ(value("b,2024"), 20.0);
  ASSERT_EQ(replace({{"path", "All,2024"}, {"value", 7}, {"splash", "set"}}).status, 200);
  EXPECT_EQ(value("a,2024"), 7.0);
  EXPECT_EQ(value("b,2024"), 7.0);
  EXPECT_EQ(value("All,2024"), 21.0);
}

TEST_F(SplashTest, DeleteRemovesEveryBaseCellUnderTheCell) {
  start();
  ASSERT_EQ(replace({{"path", "Pair,2025"}, {"mode", "delete"}}).status, 200);
  EXPECT_TRUE(value("a,2025").is_null());
  EXPECT_TRUE(value("c,2025").is_null());
  EXPECT_EQ(value("a,2024"), 10.0);
  EXPECT_EQ(get("/cube/info").body["filled_cells"], 2);
}

TEST_F(SplashTest, NoneRefusesAndTheLimitHolds) {
  Limits limits;
  limits.max_cells = 3;
  start(limits);
  Reply r = replace({{"path", "All,Y"}, {"value", 1}, {"splash", "none"}});
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["detail"].get<std::string>().find("is consolidated"), std::string::npos) << r.text;
  r = replace({{"path", "All,Y"}, {"value", 1}, {"splash", "set"}});
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body["detail"].get<std::string>().find("would write 4 base cells; the limit is 3"), std::string::npos) << r.text;
  // Scaling the filled cells counts them: All,Y has 3 (a 2024, a 2025, b 2024), Pair,Y 3, Y of b 1.
  EXPECT_EQ(replace({{"path", "Pair,Y"}, {"value", 1}}).status, 200);
  EXPECT_EQ(replace({{"path", "All,Y"}, {"value", 1}}).status, 200);
  ASSERT_EQ(replace({{"path", "c,2024"}, {"value", 1}}).status, 200);
  r = replace({{"path", "Pair,Y"}, {"value", 1}});
  EXPECT_EQ(r.status, 413) << r.text;
  EXPECT_EQ(replace({{"path", "Pair,Y"}, {"mode", "delete"}}).status, 413);
  EXPECT_EQ(replace({{"path", "All,Y"}, {"value", 1}, {"splash", "sideways"}}).status, 400);
  EXPECT_DOUBLE_EQ(value("All,Y").get<double>(), 1.0);
}

// The limit bounds a whole bulk write too: splashes each within it must not
// add up to a record of any size (memory, and a log record past 4 GiB).
TEST_F(SplashTest, TheLimitHoldsForABulkWriteAsAWhole) {
  Limits limits;
  limits.max_cells = 3;
  start(limits);
  const json splash{{"path", "All,2024"}, {"value", 1}, {"mode", "add"}, {"splash", "add"}};  // a and b: 2 cells
  Reply r = post("/cell/replace_bulk", {{"cells", {splash}}});
  ASSERT_EQ(r.status, 200) << r.text;
  r = post("/cell/replace_bulk", {{"cells", {splash, splash}}});
  EXPECT_EQ(r.status, 413) << r.text;
  EXPECT_EQ(r.body["error"], "too_many_cells");
  EXPECT_NE(r.text.find("cell 2"), std::string::npos) << r.text;
  r = post("/cell/replace_bulk", {{"cells", {{{"path", "a,2024"}, {"value", 1}}, {{"path", "b,2024"}, {"value", 1}},
                                             {{"path", "c,2024"}, {"value", 1}}, {{"path", "a,2025"}, {"value", 1}}}}});
  EXPECT_EQ(r.status, 413) << r.text;
  EXPECT_EQ(value("a,2024"), 11.0);
  EXPECT_EQ(value("b,2024"), 21.0);
}

TEST_F(SplashTest, LaterCellsOfABulkWriteSeeTheEarlierOnes) {
  start();
  const Reply r = post("/cell/replace_bulk", json::parse(R"({"cells": [
      {"path": "b,2024", "value": 0}, {"path": "All,2024", "value": 100}]})"));
  ASSERT_EQ(r.status, 200) << r.text;
  // After the first cell All,2024 is 10 + 2 * 0 = 10, so the splash scales by 10.
  EXPECT_EQ(value("a,2024"), 100.0);
  EXPECT_EQ(value("b,2024"), 0.0);
}

}  // namespace
}  // namespace gpuolap::server::testing
