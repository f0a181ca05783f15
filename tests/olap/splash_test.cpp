// Writing cells of the Shop cube (shop_cube.hpp) by resolve_assignment,
// without HTTP: the base-cell writes of a splash, applied to a fact store.
// All = a + 2 b, Pair = a + c, Diff = a - c, Y = 2024 + 2025.
#include "olap/splash.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "gpuolap/fact_store.hpp"
#include "olap/over_limit.hpp"
#include "olap/shop_cube.hpp"

namespace gpuolap::olap {
namespace {

class ResolveAssignmentTest : public ::testing::Test {
 protected:
  CellAssignment assignment(const std::string& path, double value, Splash splash = Splash::proportional,
                            WriteMode mode = WriteMode::set, size_t measure = 0) const {
    CellAssignment a;
    a.path = parse_cell_path_text(shop_.schema, path, "test");
    a.value = value;
    a.splash = splash;
    a.mode = mode;
    a.measure = measure;
    return a;
  }

  // Resolves against the store's facts and applies the record; returns the base cells written.
  size_t write(const CellAssignment& a, uint64_t max_cells = 1000) {
    const auto facts = store_.snapshot();
    const Overlay none;
    LogRecord record;
    resolve_assignment(shop_.schema, CellReader(*facts, none), a, max_cells, record);
    apply_record(store_, record);
    size_t cells = 0;
    for (const WriteBatch& b : record.batches) cells += b.size();
    return cells;
  }

  // A base cell's value, nullopt when empty.
  std::optional<double> value(const std::string& path, size_t measure = 0) {
    const FactTable& t = store_.table();
    const size_t i = t.find(parse_cell_path_text(shop_.schema, path, "test").key);
    if (i == t.size() || !has_value(t.values(measure)[i])) return std::nullopt;
    return t.values(measure)[i];
  }

  const Cube shop_ = ::gpuolap::testing::shop_cube();
  FactStore store_{shop_.schema.codec(), shop_.facts};
};

TEST_F(ResolveAssignmentTest, ProportionalScalesTheFilledBaseCells) {
  EXPECT_EQ(write(assignment("All,2024", 100)), 2u);  // 10 + 2 * 20 = 50 -> 100: each doubles
  EXPECT_EQ(value("a,2024"), 20.0);
  EXPECT_EQ(value("b,2024"), 40.0);
  EXPECT_EQ(value("a,2025"), 30.0);
  // mode add: the new total is the current one plus the value. (Pair,Y) 20 + 30 + 5 = 55 -> 110.
  write(assignment("Pair,Y", 55, Splash::proportional, WriteMode::add));
  EXPECT_EQ(value("a,2024"), 40.0);
  EXPECT_EQ(value("a,2025"), 60.0);
  EXPECT_EQ(value("c,2025"), 10.0);
  EXPECT_EQ(value("c,2024"), std::nullopt);  // empty cells stay empty
}

TEST_F(ResolveAssignmentTest, AnEmptyCellIsFilledEvenlyByWeight) {
  // Units under (All, 2025) are empty; the weights are a 1, b 2: each base cell gets 30 / 3.
  EXPECT_EQ(write(assignment("All,2025", 30, Splash::proportional, WriteMode::set, 1)), 2u);
  EXPECT_EQ(value("a,2025", 1), 10.0);
  EXPECT_EQ(value("b,2025", 1), 10.0);
  EXPECT_EQ(value("b,2025", 0), std::nullopt);  // the other measure is untouched
  // Weights summing to 0 (Diff = a - c) cannot reach a value from nothing.
  write(assignment("Diff,Y", 0, Splash::proportional, WriteMode::remove));
  EXPECT_THROW(write(assignment("Diff,Y", 4)), InputError);
}

TEST_F(ResolveAssignmentTest, AddAndSetReachEveryBaseCellUnderTheCell) {
  EXPECT_EQ(write(assignment("Pair,2025", 1, Splash::add)), 2u);
  EXPECT_EQ(value("a,2025"), 31.0);
  EXPECT_EQ(value("c,2025"), 6.0);
  EXPECT_EQ(write(assignment("All,Y", 7, Splash::set)), 4u);
  for (const char* cell : {"a,2024", "b,2024", "a,2025", "b,2025"}) EXPECT_EQ(value(cell), 7.0) << cell;
  EXPECT_EQ(value("c,2025"), 6.0);
}

TEST_F(ResolveAssignmentTest, DeleteRemovesTheFilledBaseCellsUnderTheCell) {
  EXPECT_EQ(write(assignment("Pair,Y", 0, Splash::proportional, WriteMode::remove)), 3u);
  EXPECT_EQ(value("a,2024"), std::nullopt);
  EXPECT_EQ(value("c,2025"), std::nullopt);
  EXPECT_EQ(value("b,2024"), 20.0);
}

TEST_F(ResolveAssignmentTest, NoneRefusesAConsolidatedCellAndTheLimitHolds) {
  EXPECT_THROW(write(assignment("All,Y", 1, Splash::none)), InputError);
  EXPECT_EQ(write(assignment("a,2024", 1, Splash::none)), 1u);  // a base cell needs no splash
  try {
    write(assignment("All,Y", 1, Splash::set), 3);  // 4 base cells
    ADD_FAILURE() << "a splash of 4 cells passed a limit of 3";
  } catch (const OverLimit& e) {
    EXPECT_EQ(e.code(), "too_many_cells");
  }
  EXPECT_EQ(value("b,2024"), 20.0);  // nothing of it applied
}

TEST_F(ResolveAssignmentTest, ALaterAssignmentReadsThroughTheEarlierOnes) {
  // As a bulk write resolves its cells: each laid over the facts for the next.
  const auto facts = store_.snapshot();
  const Overlay none;
  const CellReader reader(*facts, none);
  Overlay mine;
  const CellReader layered = reader.layered(mine);
  LogRecord record;
  for (const CellAssignment& a : {assignment("c,2024", 40), assignment("Pair,2024", 100)}) {
    LogRecord one;
    resolve_assignment(shop_.schema, layered, a, 1000, one);
    lay_over(mine, layered, one, shop_.schema.measures().size());
    for (WriteBatch& b : one.batches) record.batches.push_back(std::move(b));
  }
  apply_record(store_, record);
  // (Pair,2024) was 10 + 40 = 50 once c,2024 was written: both double.
  EXPECT_EQ(value("a,2024"), 20.0);
  EXPECT_EQ(value("c,2024"), 80.0);
}

}  // namespace
}  // namespace gpuolap::olap
