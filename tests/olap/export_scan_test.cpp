// The export scan on the Shop cube (shop_cube.hpp), without HTTP: pages,
// resuming after a page's last cell, conditions and progress, for base and
// aggregated cells.
#include "olap/export_scan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "gpuolap/engine.hpp"
#include "olap/over_limit.hpp"
#include "olap/shop_cube.hpp"

namespace gpuolap::olap {
namespace {

using Cells = std::vector<std::pair<std::string, double>>;  // "a,2024" -> value

class ExportScanTest : public ::testing::Test {
 protected:
  AreaQuery area(const std::vector<std::vector<std::string>>& names, Aggregate aggregate = Aggregate::sum) const {
    AreaQuery q;
    q.aggregate = aggregate;
    for (size_t d = 0; d < names.size(); ++d) {
      q.area.emplace_back();
      for (const std::string& n : names[d]) q.area.back().push_back(*shop_.schema.dimension(d).find(n));
    }
    return q;
  }
  AreaQuery whole_cube() const { return area({{"a", "b", "c"}, {"2024", "2025"}}); }

  ExportScan scan(const AreaQuery& q, bool base_only, uint64_t max_cells = 1000) const {
    const AreaRunner run = [](const FactTable& f, const AggregationMap& m, const AreaQuery& query) {
      return make_engine("cpu-serial", f.size()).engine->run(f, m, query);
    };
    return ExportScan(shop_.schema, shop_.facts, q, base_only, max_cells, run, "export");
  }

  CellPath path(const std::string& text) const { return parse_cell_path_text(shop_.schema, text, "test"); }

  Cells cells(const ExportPage& page) const {
    Cells out;
    for (const ExportedCell& c : page.cells) {
      std::string names;
      for (size_t d = 0; d < c.path.size(); ++d)
        names += (d ? "," : "") + shop_.schema.dimension(d).element(c.path[d]).name;
      out.emplace_back(names, c.value);
    }
    return out;
  }

  // Every page of a scan, each resuming after the one before.
  std::vector<ExportPage> all_pages(const ExportScan& s, uint64_t block_size, const ValueCondition& condition = {}) const {
    std::vector<ExportPage> pages{s.page(std::nullopt, block_size, condition)};
    while (!pages.back().done()) pages.push_back(s.page(pages.back().next, block_size, condition));
    return pages;
  }

  const Cube shop_ = ::gpuolap::testing::shop_cube();
};

Cells sorted(Cells c) {
  std::sort(c.begin(), c.end());
  return c;
}

TEST_F(ExportScanTest, BaseCellsComeInKeyOrderAndPageByBlock) {
  const ExportScan s = scan(whole_cube(), true);
  const ExportPage all = s.page(std::nullopt, 100, {});
  EXPECT_TRUE(all.done());
  EXPECT_EQ(all.scanned, 4u);
  EXPECT_EQ(all.total, 4u);
  EXPECT_EQ(sorted(cells(all)), (Cells{{"a,2024", 10}, {"a,2025", 30}, {"b,2024", 20}, {"c,2025", 5}}));
  for (size_t i = 1; i < all.cells.size(); ++i)
    EXPECT_LT(cell_path(shop_.schema, all.cells[i - 1].path).key, cell_path(shop_.schema, all.cells[i].path).key);

  // One cell a page: each names its cell as the next one's resume point.
  const std::vector<ExportPage> pages = all_pages(s, 1);
  ASSERT_EQ(pages.size(), 4u);
  Cells paged;
  for (size_t p = 0; p < pages.size(); ++p) {
    ASSERT_EQ(pages[p].cells.size(), 1u);
    EXPECT_EQ(pages[p].scanned, p + 1);
    if (!pages[p].done()) {
      EXPECT_EQ(pages[p].next->elements, pages[p].cells.back().path);
    }
    paged.push_back(cells(pages[p])[0]);
  }
  EXPECT_EQ(paged, cells(all));
  // Resuming after a cell that is not filled goes on at the next filled one.
  EXPECT_EQ(cells(s.page(path("b,2025"), 100, {})), (Cells{{"c,2025", 5}}));
}

TEST_F(ExportScanTest, BaseCellsAreThoseUnderTheAreaThatMeetTheCondition) {
  const ExportScan pair = scan(area({{"Pair"}, {"Y"}}), true);
  EXPECT_EQ(sorted(cells(pair.page(std::nullopt, 100, {}))), (Cells{{"a,2024", 10}, {"a,2025", 30}, {"c,2025", 5}}));

  const ExportScan s = scan(whole_cube(), true);
  const ExportPage between = s.page(std::nullopt, 100, ValueCondition(">= 10 and < 30"));
  EXPECT_EQ(sorted(cells(between)), (Cells{{"a,2024", 10}, {"b,2024", 20}}));
  EXPECT_EQ(between.scanned, 4u);  // every cell looked at, two taken
  // A page of one cell that meets it, then the rest.
  const std::vector<ExportPage> pages = all_pages(s, 1, ValueCondition("< 6 or > 25"));
  Cells paged;
  for (const ExportPage& p : pages)
    for (const auto& c : cells(p)) paged.push_back(c);
  EXPECT_EQ(sorted(paged), (Cells{{"a,2025", 30}, {"c,2025", 5}}));
}

TEST_F(ExportScanTest, AggregatedCellsComeInAreaOrderAndResume) {
  // All = a + 2 b: (All,Y) = 10 + 40 + 30 = 80; (Pair,Y) = 10 + 30 + 5 = 45; (Diff,2024) = 10.
  const ExportScan s = scan(area({{"All", "Pair", "Diff"}, {"Y", "2024"}}), false);
  const ExportPage all = s.page(std::nullopt, 100, {});
  EXPECT_TRUE(all.done());
  EXPECT_EQ(all.total, 6u);  // every target cell is filled
  EXPECT_EQ(cells(all), (Cells{{"All,Y", 80}, {"All,2024", 50}, {"Pair,Y", 45}, {"Pair,2024", 10}, {"Diff,Y", 35},
                               {"Diff,2024", 10}}));
  EXPECT_EQ(cells(s.page(path("Pair,2024"), 2, {})), (Cells{{"Diff,Y", 35}, {"Diff,2024", 10}}));
  const ExportPage big = s.page(std::nullopt, 2, ValueCondition("> 40"));
  EXPECT_EQ(cells(big), (Cells{{"All,Y", 80}, {"All,2024", 50}}));
  ASSERT_FALSE(big.done());
  EXPECT_FALSE(big.next->base);
  EXPECT_EQ(cells(s.page(big.next, 2, ValueCondition("> 40"))), (Cells{{"Pair,Y", 45}}));

  const ExportScan counts = scan(area({{"All"}, {"Y"}}, Aggregate::count), false);
  EXPECT_EQ(cells(counts.page(std::nullopt, 10, {})), (Cells{{"All,Y", 3}}));
}

TEST_F(ExportScanTest, RefusesWhatItCannotPageThrough) {
  // Resuming base cells after a consolidated cell.
  EXPECT_THROW(scan(whole_cube(), true).page(path("All,Y"), 10, {}), InputError);
  // An aggregated export resumes after a path, which must name one cell of the area.
  EXPECT_THROW(scan(area({{"a", "a"}, {"Y"}}), false), InputError);
  EXPECT_THROW(scan(area({{"All"}, {"Y"}}), false).page(path("Pair,Y"), 10, {}), InputError);
  // An area over the limit is refused before it runs.
  try {
    scan(area({{"All", "Pair"}, {"Y", "2024"}}), false, 3);
    ADD_FAILURE() << "an area of 4 target cells passed a limit of 3";
  } catch (const OverLimit& e) {
    EXPECT_EQ(e.code(), "too_many_cells");
  }
  EXPECT_NO_THROW(scan(area({{"All", "Pair"}, {"Y", "2024"}}), true, 3));  // base cells: no limit
  EXPECT_THROW(scan(whole_cube(), true).page(std::nullopt, 0, {}), InputError);
}

}  // namespace
}  // namespace gpuolap::olap
