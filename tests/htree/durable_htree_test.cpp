// The durable H-tree: batches appended, the process gone, the tree opened
// again from its snapshot and log equals a tree built from every tuple;
// a checkpoint starts a new log; a log older than the snapshot (a
// checkpoint cut short) is never replayed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "gpuolap/error.hpp"
#include "htree/durable_htree.hpp"
#include "htree/htree_io.hpp"
#include "htree_cases.hpp"
#include "support/test_path.hpp"

namespace gpuolap::htree {
namespace {

using namespace testing;
namespace fs = std::filesystem;

// A table of three int64 dimensions and a double measure, NULLs among them.
table::Table random_table(std::mt19937_64& rng, std::size_t rows, int spread) {
  table::Table t;
  t.name = "t";
  for (const char* name : {"a", "b", "c"}) {
    table::Column c;
    c.name = name;
    for (std::size_t r = 0; r < rows; ++r) c.int64s.push_back(static_cast<std::int64_t>(rng() % spread) - 2);
    t.columns.push_back(c);
  }
  table::Column m;
  m.name = "m";
  m.type = table::ColumnType::Double;
  m.nulls.assign(rows, 0);
  for (std::size_t r = 0; r < rows; ++r) {
    m.doubles.push_back(static_cast<double>(rng() % 1000) / 4);
    m.nulls[r] = rng() % 9 == 0;
  }
  t.columns.push_back(m);
  return t;
}

table::Table concat(const std::vector<table::Table>& parts) {
  table::Table all = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i)
    for (std::size_t c = 0; c < all.columns.size(); ++c) {
      auto& to = all.columns[c];
      const auto& from = parts[i].columns[c];
      to.int64s.insert(to.int64s.end(), from.int64s.begin(), from.int64s.end());
      to.doubles.insert(to.doubles.end(), from.doubles.begin(), from.doubles.end());
      to.nulls.insert(to.nulls.end(), from.nulls.begin(), from.nulls.end());
    }
  return all;
}

// The tree of every row, coded in the order the durable tree met them.
HTree built_from(const table::Table& all) {
  HTree t = tree_shell(all, {"a", "b", "c"}, "m");
  build(t, code_rows(t, all, "all"), Engine::CpuSerial);
  return t;
}

TEST(DurableHTree, ReopenedTreesEqualABuildOfEveryBatch) {
  const fs::path dir = ::gpuolap::testing::fresh_test_path("durable_htree");
  std::mt19937_64 rng(17);
  std::vector<table::Table> parts{random_table(rng, 200, 5)};
  DurableHTree::create(dir, built_from(parts[0]), false);
  for (int round = 0; round < 4; ++round) {
    {
      DurableHTree t(dir, Engine::CpuParallel);
      for (int b = 0; b < 3; ++b) {
        parts.push_back(random_table(rng, rng() % 60, 5 + round * 3));  // later batches bring new values
        t.append(parts.back(), "batch");
      }
      if (round == 2) t.checkpoint();
    }
    DurableHTree again(dir, Engine::CpuSerial);
    const HTree want = built_from(concat(parts));
    EXPECT_EQ(again.meta().tuples, want.tuples);
    expect_same_tree(want, again.meta(), "round " + std::to_string(round));
    EXPECT_EQ(again.report().replayed_batches, round == 2 ? 0u : round < 2 ? 3u * (round + 1) : 3u);
  }
  fs::remove_all(dir);
}

TEST(DurableHTree, ALogOlderThanTheSnapshotIsNotReplayed) {
  const fs::path dir = ::gpuolap::testing::fresh_test_path("durable_htree");
  std::mt19937_64 rng(19);
  const table::Table base = random_table(rng, 100, 4), batch = random_table(rng, 30, 4);
  DurableHTree::create(dir, built_from(base), false);
  {
    DurableHTree t(dir, Engine::CpuParallel);
    t.append(batch, "batch");
  }
  fs::copy_file(dir / "htree.log", dir / "old.log");
  {
    DurableHTree t(dir, Engine::CpuParallel);
    t.checkpoint();  // the batch is in the snapshot now
  }
  fs::rename(dir / "old.log", dir / "htree.log");  // as if the checkpoint stopped before its new log
  DurableHTree t(dir, Engine::CpuParallel);
  EXPECT_NE(t.report().log_problem.find("older than the snapshot"), std::string::npos) << t.report().log_problem;
  EXPECT_EQ(t.meta().tuples, 130u);
  expect_same_tree(built_from(concat({base, batch})), t.meta(), "after a stale log");
  fs::remove_all(dir);
}

TEST(DurableHTree, ACorruptSnapshotIsRefusedNamingTheFile) {
  const fs::path dir = ::gpuolap::testing::fresh_test_path("durable_htree");
  std::mt19937_64 rng(23);
  DurableHTree::create(dir, built_from(random_table(rng, 50, 4)), false);
  {
    std::fstream f(dir / "htree.snapshot", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(40);
    f.put('\x7f');
  }
  try {
    DurableHTree t(dir, Engine::CpuParallel);
    FAIL() << "a corrupt snapshot was opened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("htree.snapshot: corrupt"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuolap::htree
