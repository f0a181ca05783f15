#include "gpuolap/fact_store.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

namespace gpuolap {
namespace {

const KeyCodec kCodec({4, 4}, {"x", "y"}, "test");

CellWrite row(uint64_t key, std::vector<double> values, std::vector<bool> present = {true, true}) {
  return CellWrite{key, std::move(values), std::move(present)};
}

FactStore two_cells() {
  return FactStore(kCodec, FactTable(kCodec, {3, 7}, {{1.0, 2.0}, {10.0, kNoValue}}, 1));
}

TEST(FactStore, ReadsSeeEveryWriteAfterMerge) {
  FactStore s = two_cells();
  s.apply(WriteMode::set, row(5, {4.0, 40.0}));
  EXPECT_EQ(s.pending_writes(), 1u);
  const FactTable& t = s.table();
  EXPECT_EQ(s.pending_writes(), 0u);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.keys()[1], 5u);
  EXPECT_EQ(t.values(0)[1], 4.0);
  EXPECT_EQ(t.values(1)[1], 40.0);
}

TEST(FactStore, SetOverwritesNamedMeasuresAndKeepsOthers) {
  FactStore s = two_cells();
  s.apply(WriteMode::set, row(3, {9.0, kNoValue}, {true, false}));
  const FactTable& t = s.table();
  EXPECT_EQ(t.values(0)[0], 9.0);
  EXPECT_EQ(t.values(1)[0], 10.0);
}

TEST(FactStore, SetWithEmptyFieldsClearsValuesAndDropsAnEmptiedCell) {
  FactStore s = two_cells();
  s.apply(WriteMode::set, row(7, {kNoValue, kNoValue}));
  const FactTable& t = s.table();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.keys()[0], 3u);
}

TEST(FactStore, AddSumsOntoExistingAndAbsentValues) {
  FactStore s = two_cells();
  s.apply(WriteMode::add, row(7, {1.5, 2.5}));
  s.apply(WriteMode::add, row(7, {1.0, kNoValue}));
  s.apply(WriteMode::add, row(9, {5.0, kNoValue}));
  const FactTable& t = s.table();
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t.values(0)[1], 4.5);
  EXPECT_EQ(t.values(1)[1], 2.5);
  EXPECT_EQ(t.keys()[2], 9u);
  EXPECT_EQ(t.values(0)[2], 5.0);
  EXPECT_FALSE(has_value(t.values(1)[2]));
}

TEST(FactStore, DeleteRemovesCellsAndLaterWritesSeeTheDeletion) {
  FactStore s = two_cells();
  s.apply(WriteMode::remove, row(3, {}, {false, false}));
  s.apply(WriteMode::add, row(3, {1.0, kNoValue}));
  s.apply(WriteMode::remove, row(7, {}, {false, false}));
  s.apply(WriteMode::remove, row(11, {}, {false, false}));  // absent: no effect
  const FactTable& t = s.table();
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.keys()[0], 3u);
  EXPECT_EQ(t.values(0)[0], 1.0);
  EXPECT_FALSE(has_value(t.values(1)[0]));
}

TEST(FactTable, SummarisesPagesPerDimension) {
  // keys (x, y): (1,2) (1,9) | (2,0) (3,15) | (15,1)
  auto k = [](uint32_t x, uint32_t y) { return (uint64_t{x} << 4) | y; };
  FactTable t(kCodec, {k(1, 2), k(1, 9), k(2, 0), k(3, 15), k(15, 1)}, {{1, 2, 3, 4, 5}}, 2);
  ASSERT_EQ(t.page_count(), 3u);
  EXPECT_EQ(t.page_min(0, 0), 1u);
  EXPECT_EQ(t.page_max(0, 0), 1u);
  EXPECT_EQ(t.page_min(0, 1), 2u);
  EXPECT_EQ(t.page_max(0, 1), 9u);
  EXPECT_EQ(t.page_min(1, 1), 0u);
  EXPECT_EQ(t.page_max(1, 1), 15u);
  EXPECT_EQ(t.page_end(2), 5u);
  EXPECT_EQ(t.find(k(3, 15)), 3u);
  EXPECT_EQ(t.find(k(3, 14)), 5u);
  EXPECT_LE(t.bytes(), 5u * 16 + 3 * 2 * 2 * 4);
}

TEST(FactStore, ABatchEqualsTheSameWritesOneByOne) {
  std::mt19937_64 rng(3);
  for (int round = 0; round < 200; ++round) {
    const WriteMode mode = static_cast<WriteMode>(rng() % 3);
    const std::vector<bool> present{rng() % 4 != 0, rng() % 2 == 0};
    std::vector<uint64_t> keys;
    std::vector<std::vector<double>> values(2);
    for (int i = 0; i < 30; ++i) {
      keys.push_back(rng() % 40);  // repeats, and cells in and out of the table
      for (auto& column : values) column.push_back(rng() % 5 == 0 ? kNoValue : static_cast<double>(rng() % 9) - 4);
    }
    FactStore one_by_one = two_cells(), batch = two_cells();
    if (round % 3 == 0) {  // a pending single write must come first
      one_by_one.apply(WriteMode::add, row(7, {1.0, 1.0}));
      batch.apply(WriteMode::add, row(7, {1.0, 1.0}));
    }
    for (size_t i = 0; i < keys.size(); ++i)
      one_by_one.apply(mode, CellWrite{keys[i], {values[0][i], values[1][i]}, present});
    batch.apply(mode, keys, values, present);
    const FactTable& a = one_by_one.table();
    const FactTable& b = batch.table();
    ASSERT_EQ(std::vector<uint64_t>(a.keys().begin(), a.keys().end()),
              std::vector<uint64_t>(b.keys().begin(), b.keys().end()))
        << "round " << round;
    for (size_t m = 0; m < 2; ++m)
      for (size_t i = 0; i < a.size(); ++i) {
        const double x = a.values(m)[i], y = b.values(m)[i];
        ASSERT_TRUE((std::isnan(x) && std::isnan(y)) || x == y) << "round " << round << " cell " << a.keys()[i];
      }
  }
}

// Rebuilds a table from an earlier one of the same base and the changes
// recorded after the earlier one's generation.
std::map<uint64_t, std::vector<double>> replay(const FactTable& earlier, uint64_t after, const TableChanges& c) {
  std::map<uint64_t, std::vector<double>> cells;
  for (size_t i = 0; i < earlier.size(); ++i) cells[earlier.keys()[i]] = {earlier.values(0)[i], earlier.values(1)[i]};
  for (size_t e = 0; e < c.size(); ++e)
    if (c.generations[e] > after) cells[c.keys[e]] = {c.values[0][e], c.values[1][e]};
  std::erase_if(cells, [](const auto& kv) { return !has_value(kv.second[0]) && !has_value(kv.second[1]); });
  return cells;
}

std::map<uint64_t, std::vector<double>> cells_of(const FactTable& t) {
  std::map<uint64_t, std::vector<double>> cells;
  for (size_t i = 0; i < t.size(); ++i) cells[t.keys()[i]] = {t.values(0)[i], t.values(1)[i]};
  return cells;
}

bool same_cells(const std::map<uint64_t, std::vector<double>>& a, const std::map<uint64_t, std::vector<double>>& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j)
    for (size_t m = 0; m < 2; ++m)
      if (i->first != j->first || !((std::isnan(i->second[m]) && std::isnan(j->second[m])) || i->second[m] == j->second[m]))
        return false;
  return true;
}

TEST(FactStore, RecordedChangesRebuildTheTableFromItsBase) {
  std::mt19937_64 rng(11);
  FactStore s = two_cells();
  std::shared_ptr<const FactTable> base = s.snapshot(), previous = base;
  EXPECT_EQ(base->changes(), nullptr);
  uint64_t last_generation = 0;
  for (int round = 0; round < 60; ++round) {
    const WriteMode mode = static_cast<WriteMode>(rng() % 3);
    if (round % 2 == 0) {
      for (int i = 0; i < 5; ++i)
        s.apply(mode, row(rng() % 40, {static_cast<double>(rng() % 9), kNoValue}, {true, rng() % 2 == 0}));
    } else {
      std::vector<uint64_t> keys;
      std::vector<std::vector<double>> values(2);
      for (int i = 0; i < 5; ++i) {
        keys.push_back(rng() % 40);
        values[0].push_back(static_cast<double>(rng() % 9));
        values[1].push_back(rng() % 3 == 0 ? kNoValue : 1.0);
      }
      s.apply(mode, keys, values, {true, true});
    }
    const std::shared_ptr<const FactTable> now = s.snapshot();
    ASSERT_NE(now->changes(), nullptr) << "round " << round;
    const TableChanges& c = *now->changes();
    EXPECT_EQ(c.base_id, base->id());
    EXPECT_GT(c.generation, last_generation);
    for (uint64_t g : c.generations) EXPECT_LE(g, c.generation);
    EXPECT_TRUE(same_cells(replay(*base, 0, c), cells_of(*now))) << "round " << round;
    EXPECT_TRUE(same_cells(replay(*previous, last_generation, c), cells_of(*now))) << "round " << round;
    last_generation = c.generation;
    previous = now;
  }
}

TEST(FactStore, StoresMadeFromCopiesOfOneTableHaveDifferentBases) {
  const FactTable table(kCodec, {3, 7}, {{1.0, 2.0}, {10.0, kNoValue}}, 1);
  FactStore a(kCodec, table), b(kCodec, table);
  a.apply(WriteMode::set, row(5, {1.0, 1.0}));
  b.apply(WriteMode::set, row(5, {2.0, 2.0}));
  ASSERT_NE(a.table().changes(), nullptr);
  ASSERT_NE(b.table().changes(), nullptr);
  EXPECT_NE(a.table().changes()->base_id, b.table().changes()->base_id);
  EXPECT_NE(a.table().changes()->base_id, table.id());
}

TEST(FactStore, ASnapshotIsUnchangedByLaterWrites) {
  FactStore s = two_cells();
  const std::shared_ptr<const FactTable> before = s.snapshot();
  s.apply(WriteMode::remove, row(3, {0.0, 0.0}));
  s.apply(WriteMode::set, row(9, {5.0, 5.0}));
  EXPECT_EQ(s.table().size(), 2u);
  ASSERT_EQ(before->size(), 2u);
  EXPECT_EQ(before->keys()[0], 3u);
  EXPECT_EQ(before->values(0)[0], 1.0);
  EXPECT_NE(before->id(), s.table().id());
}

TEST(FactStore, ManyChangesStartANewBase) {
  const KeyCodec codec({16, 16}, {"x", "y"}, "test");
  FactStore s(codec, FactTable(codec, {1, 2}, {{1.0, 2.0}, {kNoValue, kNoValue}}));
  ASSERT_EQ(s.rebase_threshold(), 4096u);
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(2);
  for (uint64_t k = 10; k < 10 + 4000; ++k) {
    keys.push_back(k);
    values[0].push_back(1.0);
    values[1].push_back(kNoValue);
  }
  s.apply(WriteMode::set, keys, values, {true, true});
  ASSERT_NE(s.table().changes(), nullptr);
  EXPECT_EQ(s.table().changes()->size(), 4000u);
  for (auto& k : keys) k += 5000;
  s.apply(WriteMode::set, keys, values, {true, true});
  EXPECT_EQ(s.table().changes(), nullptr);  // 8,000 changes: the table is the new base
  s.apply(WriteMode::add, row(1, {1.0, kNoValue}));
  ASSERT_NE(s.table().changes(), nullptr);
  EXPECT_EQ(s.table().changes()->size(), 1u);
}

}  // namespace
}  // namespace gpuolap
