// A string column's dictionary: values in one buffer, read back as views.
#include "table/dictionary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace gpuolap::table {
namespace {

TEST(Dictionary, HoldsEachValueAsGivenEmptyOnesIncluded) {
  Dictionary d;
  EXPECT_TRUE(d.empty());
  for (std::string_view v : {"", "a", "", "long value past any small-string buffer", "z"}) d.push_back(v);
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0], "");
  EXPECT_EQ(d[1], "a");
  EXPECT_EQ(d[2], "");
  EXPECT_EQ(d[3], "long value past any small-string buffer");
  EXPECT_EQ(d.at(4), "z");
  EXPECT_THROW(d.at(5), std::out_of_range);
  EXPECT_EQ(d.bytes(), "along value past any small-string bufferz");
  EXPECT_EQ(d.ends(), (std::vector<std::uint64_t>{0, 1, 1, 40, 41}));
}

TEST(Dictionary, IteratesInOrderAndFindsACodeByBinarySearch) {
  const Dictionary d{"apple", "pear", "plum"};
  std::vector<std::string> seen;
  for (std::string_view v : d) seen.emplace_back(v);
  EXPECT_EQ(seen, (std::vector<std::string>{"apple", "pear", "plum"}));
  EXPECT_EQ(std::lower_bound(d.begin(), d.end(), std::string("pear")) - d.begin(), 1);
  EXPECT_EQ(std::lower_bound(d.begin(), d.end(), std::string("peach")) - d.begin(), 1);
  EXPECT_EQ(std::lower_bound(d.begin(), d.end(), std::string("zz")) - d.begin(), 3);
  EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
}

TEST(Dictionary, TheFileLayoutIsAdoptedAsItIs) {
  const Dictionary from_file(std::string("abcd"), std::vector<std::uint64_t>{1, 1, 4});
  EXPECT_EQ(from_file, (Dictionary{"a", "", "bcd"}));
  EXPECT_NE(from_file, (Dictionary{"a", "b", "cd"}));  // same bytes, other cuts
  EXPECT_EQ(Dictionary(std::vector<std::string>{"x", "y"}), (Dictionary{"x", "y"}));
  Dictionary moved = from_file;
  Dictionary taken = std::move(moved);
  EXPECT_EQ(taken.size(), 3u);
  moved.clear();  // a moved-from dictionary is usable
  moved.push_back("again");
  EXPECT_EQ(moved[0], "again");
}

}  // namespace
}  // namespace gpuolap::table
