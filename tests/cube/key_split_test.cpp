// The key ranges that cut a coded table over GPU contexts (key_split.hpp):
// every row in exactly one range, the ranges about even where the keys
// allow, and each range's rows copied in table order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "cube/coded_table.hpp"
#include "cube/cube_cases.hpp"
#include "cube/key_split.hpp"

namespace gpuolap::cube {
namespace {

CodedTable coded_of(const table::Table& t) { return code_table(t, test::make_spec(test::spec_cases().front(), t)); }

TEST(KeySplit, EveryRowInOneRangeAndTheRangesAboutEven) {
  for (bool sorted : {false, true}) {
    const table::Table facts = test::random_table(200000, 3, sorted);
    const CodedTable coded = coded_of(facts);
    for (std::size_t parts : {1, 2, 3, 4, 8}) {
      const KeySplit split = split_by_key(coded, parts);
      ASSERT_EQ(split.cuts.size(), parts + 1);
      ASSERT_EQ(split.rows.size(), parts);
      EXPECT_EQ(split.cuts.front(), 0u);
      EXPECT_TRUE(std::is_sorted(split.cuts.begin(), split.cuts.end()));
      std::vector<std::size_t> want(parts, 0);
      for (std::uint64_t key : coded.keys)
        ++want[static_cast<std::size_t>(std::upper_bound(split.cuts.begin(), split.cuts.end(), key) -
                                        split.cuts.begin()) - 1];
      EXPECT_EQ(split.rows, want) << parts << " parts" << (sorted ? ", sorted" : "");
      // `a, b, c` has 1,440 cells of about 140 rows: a range is off an
      // even share by a cell's rows and the sample's error.
      EXPECT_LT(split.imbalance(), 1.1) << parts << " parts" << (sorted ? ", sorted" : "");
    }
  }
}

TEST(KeySplit, OneKeyIsNeverCutApart) {
  table::Table facts = test::random_table(10000, 4);
  for (std::size_t col = 0; col < 3; ++col)  // a, b, c: the spec's columns
    for (std::size_t r = 0; r < facts.row_count(); ++r) {
      table::Column& c = facts.columns[col];
      if (!c.int64s.empty()) c.int64s[r] = c.int64s[0];
      if (!c.int32s.empty()) c.int32s[r] = c.int32s[0];
      c.nulls[r] = c.nulls[0];
    }
  const KeySplit split = split_by_key(coded_of(facts), 4);
  EXPECT_EQ(*std::max_element(split.rows.begin(), split.rows.end()), facts.row_count());
  EXPECT_DOUBLE_EQ(split.imbalance(), 4.0);
}

TEST(KeySplit, ARangesRowsAreCopiedInTableOrder) {
  for (bool sorted : {false, true}) {
    const table::Table facts = test::random_table(1'500'000, 5, sorted);  // a block of 2^20 rows and a rest
    const CodedTable coded = coded_of(facts);
    const KeySplit split = split_by_key(coded, 3);
    for (std::size_t p = 0; p < 3; ++p) {
      std::vector<std::uint64_t> want_keys;
      std::vector<std::int64_t> want_y;
      std::vector<std::uint8_t> want_nulls;
      for (std::size_t r = 0; r < coded.rows; ++r)
        if (coded.keys[r] >= split.cuts[p] && coded.keys[r] < split.cuts[p + 1]) {
          want_keys.push_back(coded.keys[r]);
          want_y.push_back(facts.columns[6].int64s[r]);
          want_nulls.push_back(facts.columns[5].nulls[r]);
        }
      std::vector<std::uint64_t> keys(split.rows[p]);
      std::vector<std::int64_t> y(split.rows[p]);
      std::vector<std::uint8_t> nulls(split.rows[p]);
      const std::size_t copied = copy_key_range(coded.keys.data(), coded.rows, coded.sorted, split.cuts[p],
                                                split.cuts[p + 1],
                                                {{coded.keys.data(), 8, keys.data()},
                                                 {facts.columns[6].int64s.data(), 8, y.data()},
                                                 {facts.columns[5].nulls.data(), 1, nulls.data()}});
      EXPECT_EQ(copied, split.rows[p]);
      EXPECT_EQ(keys, want_keys) << "range " << p << (sorted ? ", sorted" : "");
      EXPECT_EQ(y, want_y) << "range " << p << (sorted ? ", sorted" : "");
      EXPECT_EQ(nulls, want_nulls) << "range " << p << (sorted ? ", sorted" : "");
    }
  }
}

}  // namespace
}  // namespace gpuolap::cube
