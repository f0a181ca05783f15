// The overlay that resolves writes ahead of the store must give every cell
// the values the store gives it after the same records: both apply
// write_cell, and this holds them to it for random records.
#include "olap/cell_overlay.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "gpuolap/fact_store.hpp"
#include "gpuolap/write.hpp"

namespace gpuolap::olap {
namespace {

const KeyCodec kCodec({3, 3}, {"x", "y"}, "test");
constexpr size_t kMeasures = 2;
constexpr uint64_t kKeys = 64;  // every cell of the codec

double random_value(std::mt19937_64& rng) {
  return rng() % 5 == 0 ? kNoValue : static_cast<double>(rng() % 9) - 4;
}

FactTable random_table(std::mt19937_64& rng) {
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(kMeasures);
  for (uint64_t key = 0; key < kKeys; ++key) {
    if (rng() % 3 != 0) continue;
    keys.push_back(key);
    values[0].push_back(static_cast<double>(rng() % 9) + 1);  // a filled cell has a value
    values[1].push_back(random_value(rng));
  }
  return FactTable(kCodec, keys, values, 4);
}

// As the server writes them: a deletion names no measure and carries no values.
WriteBatch random_batch(std::mt19937_64& rng, size_t rows) {
  WriteBatch b;
  b.mode = static_cast<WriteMode>(rng() % 3);
  b.values.resize(kMeasures);
  for (size_t m = 0; m < kMeasures; ++m) b.present.push_back(b.mode != WriteMode::remove && rng() % 3 != 0);
  for (size_t i = 0; i < rows; ++i) {
    b.keys.push_back(rng() % kKeys);  // repeats, and cells in and out of the table
    for (size_t m = 0; m < kMeasures; ++m)
      if (b.present[m]) b.values[m].push_back(random_value(rng));
  }
  return b;
}

LogRecord random_record(std::mt19937_64& rng, size_t rows) {
  LogRecord record;
  const size_t batches = 1 + rng() % 3;
  for (size_t i = 0; i < batches; ++i) record.batches.push_back(random_batch(rng, rows));
  return record;
}

bool same(double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; }

// Every cell as `reader` sees it against the store's table.
void expect_same_cells(const CellReader& reader, FactStore& store, int round) {
  const FactTable& table = store.table();
  for (uint64_t key = 0; key < kKeys; ++key) {
    const std::optional<std::vector<double>> cell = reader.cell(key);
    const size_t i = table.find(key);
    ASSERT_EQ(cell.has_value(), i != table.size()) << "round " << round << " key " << key;
    if (!cell) continue;
    for (size_t m = 0; m < kMeasures; ++m)
      ASSERT_TRUE(same((*cell)[m], table.values(m)[i])) << "round " << round << " key " << key << " measure " << m;
  }
  size_t visited = 0;
  reader.for_each([](uint64_t) { return true; },
                  [&](uint64_t key, const double* values) {
                    ++visited;
                    const size_t i = table.find(key);
                    ASSERT_NE(i, table.size()) << "round " << round << " key " << key;
                    for (size_t m = 0; m < kMeasures; ++m) ASSERT_TRUE(same(values[m], table.values(m)[i]));
                  });
  EXPECT_EQ(visited, table.size()) << "round " << round;
}

TEST(CellOverlay, GivesTheCellsTheStoreGivesForRandomRecords) {
  std::mt19937_64 rng(16);
  for (int round = 0; round < 300; ++round) {
    const FactTable table = random_table(rng);
    FactStore store(kCodec, table);
    Overlay group;
    const CellReader reader(table, group);
    // Records resolved one after another, as a group commit does.
    const size_t records = 1 + rng() % 4;
    for (size_t r = 0; r < records; ++r) {
      const LogRecord record = random_record(rng, 1 + rng() % 40);
      lay_over(group, reader, record, kMeasures);
      apply_record(store, record);
    }
    expect_same_cells(reader, store, round);
    // A bulk write's earlier cells laid over the group's.
    Overlay mine;
    const CellReader layered = reader.layered(mine);
    const LogRecord record = random_record(rng, 1 + rng() % 40);
    lay_over(mine, layered, record, kMeasures);
    apply_record(store, record);
    expect_same_cells(layered, store, round);
  }
}

TEST(CellOverlay, AgreesWithTheStoresBatchMerge) {
  // Large batches take the store's one-pass merge rather than its delta.
  std::mt19937_64 rng(17);
  for (int round = 0; round < 5; ++round) {
    const FactTable table = random_table(rng);
    FactStore store(kCodec, table);
    Overlay overlay;
    const CellReader reader(table, overlay);
    const LogRecord record = random_record(rng, 5000);
    lay_over(overlay, reader, record, kMeasures);
    apply_record(store, record);
    expect_same_cells(reader, store, round);
  }
}

}  // namespace
}  // namespace gpuolap::olap
