// Durability: a server killed with kill -9 at random moments under a write
// load loses no acknowledged write and applies none in part; a log corrupt
// before whole records is refused until the operator discards them, then its
// valid prefix is kept and the server carries on.
//
// The load: one client per product p moves amounts v between (p, 2024) and
// (p, 2025) with bulk writes (+v, -v). The test keeps its own replay of the
// acknowledged writes; a write cut off by the kill may or may not be in the
// cube, and the restarted cube says which: any other state is a failure.
#include <gtest/gtest.h>
#include <httplib.h>

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <random>

#include "server_fixture.hpp"
#include "server_process.hpp"

namespace gpuolap::server::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

const std::vector<std::string> kProducts{"a", "b", "c"};
// Sales of (product, year) in the Shop cube as written by write_shop_store.
const std::map<std::string, double> kInitial{{"a,2024", 10}, {"b,2024", 20}, {"a,2025", 30}, {"c,2025", 5}};

class CrashRecoveryTest : public ShopCubeCommandTest {
 protected:
  CrashRecoveryTest() : ShopCubeCommandTest("crash_test") {}

  // Every filled cell's Sales, by "product,year", through cell/export.
  static std::map<std::string, double> cube_sales(int port) {
    httplib::Client client("127.0.0.1", port);
    const auto r = client.Get("/cell/export?blocksize=1000&measure=Sales");
    EXPECT_TRUE(r && r->status == 200);
    std::map<std::string, double> out;
    if (!r) return out;
    const json answer = json::parse(r->body);
    for (const json& c : answer["cells"])
      out[c["path"][0].get<std::string>() + "," + c["path"][1].get<std::string>()] = c["value"].get<double>();
    return out;
  }
};

// The test's own replay: the Sales every cell must hold.
struct Model {
  std::map<std::string, double> sales = kInitial;
  std::vector<double> in_flight = std::vector<double>(kProducts.size(), 0);  // a write cut off by the kill

  void apply(size_t p, double v) {
    sales[kProducts[p] + ",2024"] += v;
    sales[kProducts[p] + ",2025"] -= v;
  }
  // Settles each cut-off write by what the cube holds; "" or the mismatch.
  std::string settle(const std::map<std::string, double>& cube) {
    for (size_t p = 0; p < kProducts.size(); ++p) {
      const std::string cell = kProducts[p] + ",2024";
      const double got = cube.count(cell) ? cube.at(cell) : 0.0;
      const double before = sales.count(cell) ? sales[cell] : 0.0;
      if (in_flight[p] != 0 && got == before + in_flight[p]) apply(p, in_flight[p]);
      in_flight[p] = 0;
    }
    if (cube != sales) {
      std::string diff;
      for (const auto& [k, v] : sales) diff += fmt::format("{}: want {} got {}\n", k, v, cube.count(k) ? cube.at(k) : -0.0);
      for (const auto& [k, v] : cube)
        if (!sales.count(k)) diff += fmt::format("{}: unexpected {}\n", k, v);
      return diff;
    }
    return "";
  }
};

TEST_F(CrashRecoveryTest, KilledServersLoseNoAcknowledgedWriteAndApplyNoneInPart) {
  Model model;
  std::mt19937 rng(20261122);
  constexpr int kRounds = 4;
  for (int round = 0; round <= kRounds; ++round) {
    ServerProcess server;
    // A small checkpoint threshold, so that kills also land around snapshots.
    ASSERT_TRUE(server.start(dir_ / "cube", dir_ / "serve.err", {"--checkpoint-bytes", "3000"}));
    const std::string mismatch = model.settle(cube_sales(server.port()));
    ASSERT_EQ(mismatch, "") << "after round " << round << "\n" << server.stderr_text();
    if (round == kRounds) {
      EXPECT_EQ(server.terminate(), 0);
      break;
    }
    const int kill_after = std::uniform_int_distribution<int>(10, 80)(rng);
    std::atomic<int> acknowledged{0}, writing{static_cast<int>(kProducts.size())};
    std::vector<std::vector<double>> acked(kProducts.size());
    std::vector<std::thread> clients;
    for (size_t p = 0; p < kProducts.size(); ++p) {
      clients.emplace_back([&, p, seed = rng()] {
        std::mt19937 values(seed);
        httplib::Client client("127.0.0.1", server.port());
        client.set_read_timeout(60, 0);
        // Writes until the kill cuts it off, so that the kill always lands in a write load.
        for (;;) {
          const double v = std::uniform_int_distribution<int>(1, 1000)(values);
          const json body{{"mode", "add"},
                          {"cells", {{{"path", {kProducts[p], "2024"}}, {"value", v}},
                                     {{"path", {kProducts[p], "2025"}}, {"value", -v}}}}};
          model.in_flight[p] = v;
          const auto r = client.Post("/cell/replace_bulk", body.dump(), "application/json");
          if (!r) break;  // killed: this write may or may not be in
          if (r->status != 200) {
            ADD_FAILURE() << r->status << " " << r->body;
            break;
          }
          model.in_flight[p] = 0;
          acked[p].push_back(v);
          ++acknowledged;
        }
        --writing;
      });
    }
    while (acknowledged.load() < kill_after && writing.load() == static_cast<int>(kProducts.size()))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    const bool all_writing = writing.load() == static_cast<int>(kProducts.size());
    server.kill9();
    for (auto& c : clients) c.join();
    ASSERT_TRUE(all_writing) << "a client stopped before the kill";
    for (size_t p = 0; p < kProducts.size(); ++p)
      for (double v : acked[p]) model.apply(p, v);
  }
  // The commands that read a store (snapshot plus log) agree.
  const fs::path query = dir_ / "q.json";
  std::ofstream(query) << R"({"measure": "Sales", "area": {"Product": ["a", "b", "c"], "Year": ["2024", "2025"]}})";
  const std::string out = (dir_ / "out.csv").string();
  ASSERT_EQ(std::system((std::string(GPUOLAP_BINARY) + " query --cube " + (dir_ / "cube").string() + " --query " +
                         query.string() + " >" + out).c_str()), 0);
  std::ifstream in(out);
  std::string line, want = "Product,Year,sum(Sales)\n", got;
  for (const auto& [cell, v] : model.sales) want += fmt::format("{},{}\n", cell, v);  // shortest round trip, as the CSV
  std::getline(in, line);
  got = line + "\n";
  while (std::getline(in, line)) got += line + "\n";
  EXPECT_EQ(got, want);
}

TEST_F(CrashRecoveryTest, ACorruptLogIsRefusedThenItsValidPrefixKeptWhenToldToDiscard) {
  {
    ServerProcess server;
    ASSERT_TRUE(server.start(dir_ / "cube", dir_ / "serve.err"));
    httplib::Client client("127.0.0.1", server.port());
    for (int i = 0; i < 30; ++i) {
      const json body{{"mode", "add"}, {"cells", {{{"path", "a,2024"}, {"value", 1}}, {{"path", "c,2024"}, {"value", -1}}}}};
      const auto r = client.Post("/cell/replace_bulk", body.dump(), "application/json");
      ASSERT_TRUE(r && r->status == 200);
    }
    server.kill9();
  }
  const fs::path log = dir_ / "cube" / "cube.wal";
  std::string bytes;
  {
    std::ifstream in(log, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  bytes[bytes.size() * 6 / 10] ^= 0x5a;
  std::ofstream(log, std::ios::binary | std::ios::trunc) << bytes;

  // Whole records follow the corruption: the server refuses the store and
  // `gpuolap check` says why, until the operator chooses to discard them.
  const std::string cube = (dir_ / "cube").string(), refused = (dir_ / "refused.err").string();
  int raw = std::system(("timeout 20 " + std::string(GPUOLAP_BINARY) + " serve --port 0 --cube " + cube + " 2>" +
                         refused + " </dev/null").c_str());
  EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 2);
  {
    std::ifstream in(refused);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    EXPECT_NE(text.find("whole records follow it"), std::string::npos) << text;
  }
  raw = std::system((std::string(GPUOLAP_BINARY) + " check --cube " + cube + " >" + refused).c_str());
  EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 2);
  {
    std::ifstream in(refused);
    const std::string text(std::istreambuf_iterator<char>(in), {});
    EXPECT_NE(text.find("corruption inside the log"), std::string::npos) << text;
  }
  EXPECT_EQ(fs::file_size(log), bytes.size());  // neither changed the log

  ServerProcess server;
  ASSERT_TRUE(server.start(dir_ / "cube", dir_ / "serve.err", {"--recovery", "discard-after-corruption"}));
  const std::string err = server.stderr_text();
  EXPECT_NE(err.find("cube.wal"), std::string::npos) << err;
  EXPECT_NE(err.find("bytes after them ignored"), std::string::npos) << err;
  // The discarded records' bytes are kept in a file of their own.
  uint64_t kept = 0;
  for (const auto& entry : fs::directory_iterator(dir_ / "cube"))
    if (entry.path().filename().string().rfind("cube.wal.discarded-", 0) == 0) kept += fs::file_size(entry.path());
  EXPECT_GT(kept, 0u);
  std::map<std::string, double> sales = cube_sales(server.port());
  const double a = sales["a,2024"] - 10;
  EXPECT_GT(a, 0);
  EXPECT_LT(a, 30);
  EXPECT_EQ(sales["c,2024"], -a);  // whole writes only
  // The server goes on writing after the repaired log, durably.
  httplib::Client client("127.0.0.1", server.port());
  ASSERT_EQ(client.Post("/cell/replace", R"({"path": "b,2025", "value": 9})", "application/json")->status, 200);
  server.kill9();
  ServerProcess again;
  ASSERT_TRUE(again.start(dir_ / "cube", dir_ / "serve.err"));
  sales = cube_sales(again.port());
  EXPECT_EQ(sales["b,2025"], 9);
  EXPECT_EQ(sales["a,2024"], 10 + a);
  EXPECT_EQ(again.stderr_text().find("warning"), std::string::npos) << again.stderr_text();
}

}  // namespace
}  // namespace gpuolap::server::testing
