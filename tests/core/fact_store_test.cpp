#include "gpuolap/fact_store.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace gpuolap
