// Many readers and writers at once. Writers move amounts between the two
// children of Pair (a and c in 2024) and count their writes in (b, 2025),
// all in one bulk write; readers check, in every answer, that Pair is
// unchanged and equals the sum of its children (no half-applied write, one
// snapshot per query) and that every write acknowledged before the query
// started is in it. Writers start only once every reader has answered
// once, and readers go on until the writers are done, so reads overlap the
// writes whatever the machine's timing; counts, not durations.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <atomic>
#include <random>

#include "server_fixture.hpp"

namespace gpuolap::server::testing {
namespace {

using nlohmann::json;

class ConcurrencyTest : public ServerTest {};

TEST_F(ConcurrencyTest, ReadersSeeWholeWritesAndEveryAcknowledgedOne) {
  start();
  constexpr int kWriters = 4, kWritesEach = 100, kReaders = 4, kReadsEach = 150;
  std::atomic<int> acknowledged{0};
  std::atomic<int> failures{0};
  std::atomic<int> readers_started{0}, writers_done{0};
  std::atomic<int> reads_during_writes{0};  // reads that saw some writes, not all
  auto wait_for_readers = [&] {
    while (readers_started.load() < kReaders) std::this_thread::yield();
  };
  std::vector<std::string> problems(kReaders + kWriters + 1);

  std::atomic<int> moved{0};  // the sum of every v moved from c to a
  std::vector<std::thread> threads;
  // A splasher writes Pair,2024 back to its value (10): proportional scaling by
  // 1, which leaves a and c as they are only if it reads them as they are
  // after the writes queued before it, in its commit group too.
  threads.emplace_back([&] {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(60, 0);
    wait_for_readers();
    for (int i = 0; i < kWritesEach; ++i) {
      const auto r = client.Post("/cell/replace", R"({"path": "Pair,2024", "value": 10})", "application/json");
      if (!r || r->status != 200) {
        ++failures;
        problems[kReaders + kWriters] = r ? r->body : "no answer";
        break;
      }
    }
    ++writers_done;
  });
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      httplib::Client client("127.0.0.1", port_);
      client.set_read_timeout(60, 0);
      std::mt19937 rng(w);
      wait_for_readers();
      for (int i = 0; i < kWritesEach; ++i) {
        const int v = std::uniform_int_distribution<int>(-50, 50)(rng);
        const json body{{"mode", "add"},
                        {"cells", {{{"path", "a,2024"}, {"value", v}}, {{"path", "c,2024"}, {"value", -v}},
                                   {{"path", "b,2025"}, {"value", 1}}}}};
        const auto r = client.Post("/cell/replace_bulk", body.dump(), "application/json");
        if (!r || r->status != 200) {
          ++failures;
          problems[kReaders + w] = r ? r->body : "no answer";
          break;
        }
        moved += v;
        ++acknowledged;
      }
      ++writers_done;
    });
  }
  for (int reader = 0; reader < kReaders; ++reader) {
    threads.emplace_back([&, reader] {
      httplib::Client client("127.0.0.1", port_);
      client.set_read_timeout(60, 0);
      bool started = false;
      for (int i = 0; i < kReadsEach || writers_done.load() < kWriters + 1; ++i) {
        if (i == 1) started = true, ++readers_started;
        const int acked_before = acknowledged.load();
        double pair, a, c, count;
        if (i % 2 == 0) {
          const auto r = client.Post("/cell/values", R"({"paths": ["Pair,2024", "a,2024", "c,2024", "b,2025"]})",
                                     "application/json");
          if (!r || r->status != 200) {
            problems[reader] = r ? r->body : "no answer";
            ++failures;
            break;
          }
          const json cells = json::parse(r->body)["cells"];
          auto v = [&](int k) { return cells[k]["value"].is_null() ? 0.0 : cells[k]["value"].get<double>(); };
          pair = v(0), a = v(1), c = v(2), count = v(3);
        } else {
          const auto r = client.Post(
              "/cell/area", R"({"measure": "Sales", "area": {"Product": ["Pair", "a", "c", "b"], "Year": ["2024", "2025"]}})",
              "application/json");
          if (!r || r->status != 200) {
            problems[reader] = r ? r->body : "no answer";
            ++failures;
            break;
          }
          std::map<std::string, double> got;
          const json answer = json::parse(r->body);
          for (const json& cell : answer["cells"])
            got[cell["path"][0].get<std::string>() + "," + cell["path"][1].get<std::string>()] = cell["value"].get<double>();
          pair = got["Pair,2024"], a = got["a,2024"], c = got["c,2024"], count = got["b,2025"];
        }
        if (pair != 10 || a + c != pair || count < acked_before) {
          problems[reader] = fmt::format("read {}: Pair {} = a {} + c {}? count {} >= acknowledged {}?", i, pair, a, c, count,
                                         acked_before);
          ++failures;
          break;
        }
        if (count > 0 && count < kWriters * kWritesEach) ++reads_during_writes;
      }
      if (!started) ++readers_started;  // a reader that failed at once holds no writer back
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& p : problems) EXPECT_EQ(p, "");
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(reads_during_writes.load(), 0);
  EXPECT_EQ(value("b,2025"), double{kWriters * kWritesEach});
  EXPECT_EQ(value("Pair,2024"), 10.0);
  // Every move is there: no splash wrote back values it read before a move.
  EXPECT_EQ(value("a,2024"), 10.0 + moved.load());
  EXPECT_EQ(value("c,2024"), -double(moved.load()));
  // Group commit: fewer log syncs than writes is allowed, never more.
  EXPECT_LE(service_->stats().groups, static_cast<uint64_t>((kWriters + 1) * kWritesEach));
  EXPECT_EQ(service_->stats().writes, static_cast<uint64_t>((kWriters + 1) * kWritesEach));
}

}  // namespace
}  // namespace gpuolap::server::testing
