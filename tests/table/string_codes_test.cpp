// StringCodes against a std::map, and merged dictionaries against a sort.
#include "table/string_codes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <set>

#include "gpuolap/error.hpp"

namespace gpuolap::table {
namespace {

// Strings with long shared prefixes, empty ones, bytes above 0x7f and NULs.
std::vector<std::string> random_strings(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    std::string s = rng() % 3 ? "Customer#000" : "";
    const std::size_t len = rng() % 12;
    for (std::size_t c = 0; c < len; ++c) s.push_back(static_cast<char>(rng() % 4 ? '0' + rng() % 10 : rng() % 256));
    out.push_back(std::move(s));
  }
  return out;
}

TEST(StringCodes, CodesInTheOrderFirstSeenAcrossGrowth) {
  const auto strings = random_strings(200'000, 1);
  StringCodes codes;
  std::map<std::string, std::int32_t> expected;
  for (std::string s : strings) {  // a copy, gone after the call: the codes keep their own
    const auto [it, added] = expected.try_emplace(s, static_cast<std::int32_t>(expected.size()));
    ASSERT_EQ(codes.code(s), it->second) << s;
  }
  EXPECT_EQ(codes.size(), expected.size());
  const std::vector<std::string_view>& distinct = codes.strings();
  ASSERT_EQ(distinct.size(), expected.size());
  for (const auto& [s, code] : expected) EXPECT_EQ(distinct[static_cast<std::size_t>(code)], s);
}

TEST(StringCodes, CodingAGroupAtOnceGivesTheCodesOfOneAtATime) {
  const auto strings = random_strings(100'000, 4);
  const std::vector<std::string_view> views(strings.begin(), strings.end());
  StringCodes one, all;
  std::vector<std::int32_t> codes(views.size());
  // Spans of uneven sizes, across the table's growth.
  for (std::size_t begin = 0, step = 1; begin < views.size(); begin += step, step = step * 3 % 97 + 1)
    all.code_all(std::span(views).subspan(begin, std::min(step, views.size() - begin)), codes.data() + begin);
  for (std::size_t i = 0; i < views.size(); ++i) ASSERT_EQ(codes[i], one.code(views[i])) << i;
  EXPECT_EQ(all.strings(), one.strings());
}

TEST(StringCodes, MovedFromIsEmptyAndUsableAndAnEmptyStringMayHaveNoPointer) {
  StringCodes codes;
  EXPECT_EQ(codes.code(std::string_view(nullptr, 0)), 0);  // an Arrow buffer of empty strings may be null
  EXPECT_EQ(codes.code(""), 0);
  for (int i = 0; i < 3000; ++i) codes.code("s" + std::to_string(i));
  StringCodes moved = std::move(codes);
  EXPECT_EQ(moved.size(), 3001u);
  EXPECT_EQ(moved.code("s2999"), 3000);
  EXPECT_EQ(codes.size(), 0u);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(codes.code("s2999"), 0);
  EXPECT_EQ(codes.code("x"), 1);
  EXPECT_EQ(codes.code("s2999"), 0);
}

TEST(StringCodes, MergedPartsMakeOneDictionaryInByteOrder) {
  const auto strings = random_strings(50'000, 2);
  // Four parts, each coding its share; some strings in several parts.
  std::vector<StringCodes> coders(4);
  std::vector<std::vector<std::int32_t>> local(4);
  for (std::size_t i = 0; i < strings.size(); ++i) local[i % 4].push_back(coders[i % 4].code(strings[i]));
  coders.emplace_back();  // an empty part
  std::vector<const StringCodes*> parts;
  for (const StringCodes& c : coders) parts.push_back(&c);
  const MergedDictionary merged = merge_dictionaries(parts, "column x");
  const std::set<std::string> sorted(strings.begin(), strings.end());  // std::string's order is byte order
  EXPECT_TRUE(std::equal(sorted.begin(), sorted.end(), merged.dictionary.begin(), merged.dictionary.end()));
  ASSERT_EQ(merged.codes.size(), 5u);
  for (std::size_t i = 0; i < strings.size(); ++i)
    EXPECT_EQ(merged.dictionary[static_cast<std::size_t>(merged.codes[i % 4][static_cast<std::size_t>(local[i % 4][i / 4])])],
              strings[i]);
}

TEST(StringCodes, MergedDictionaryOrdersLongSharedPrefixesTrailingZerosAndRepeatsOverManyParts) {
  // Enough strings that the sort's first levels run in parallel (runs of
  // more than 2^16 equal words): prefixes shared for 0 to 70 bytes (several
  // levels of 8), strings that differ only by trailing NUL bytes, one string
  // as long as 300 shared bytes, and every string in several of 40 parts.
  std::mt19937 rng(11);
  const std::string shared(300, 'q');
  std::vector<std::string> strings;
  for (std::size_t i = 0; i < 200'000; ++i) {
    std::string s = shared.substr(0, std::array<std::size_t, 5>{0, 7, 8, 23, 70}[rng() % 5]);
    const std::size_t len = rng() % 10;
    for (std::size_t c = 0; c < len; ++c) s.push_back(static_cast<char>(rng() % 3 ? 'a' + rng() % 3 : rng() % 256));
    if (rng() % 4 == 0) s.append(rng() % 9, '\0');
    strings.push_back(std::move(s));
  }
  strings.push_back(shared);
  strings.push_back(shared + std::string(1, '\0'));
  strings.push_back("");
  std::vector<StringCodes> coders(40);
  std::vector<std::vector<std::pair<std::int32_t, std::size_t>>> coded(40);  // (local code, string) per part
  for (std::size_t i = 0; i < strings.size(); ++i)
    for (std::size_t k = 0; k < 1 + i % 3; ++k) {
      const std::size_t part = (i * 7 + k * 13) % 40;
      coded[part].emplace_back(coders[part].code(strings[i]), i);
    }
  std::vector<const StringCodes*> parts;
  for (const StringCodes& c : coders) parts.push_back(&c);
  const MergedDictionary merged = merge_dictionaries(parts, "column x");
  const std::set<std::string> sorted(strings.begin(), strings.end());
  ASSERT_EQ(merged.dictionary.size(), sorted.size());
  EXPECT_TRUE(std::equal(sorted.begin(), sorted.end(), merged.dictionary.begin(), merged.dictionary.end()));
  for (std::size_t part = 0; part < 40; ++part)
    for (const auto& [local, i] : coded[part])
      ASSERT_EQ(merged.dictionary[static_cast<std::size_t>(merged.codes[part][static_cast<std::size_t>(local)])],
                strings[i])
          << part << " " << i;
}

TEST(StringCodes, CodedInByteOrderWithoutPartsSkipsNullsAndSharesCodesOfEqualStrings) {
  // Mostly distinct strings, but also one 90-byte string 100,000 times (a
  // run of equal strings past the sort's parallel depth), NULL rows whose
  // text must be ignored, and empty strings that are not NULL.
  auto strings = random_strings(150'000, 4);
  const std::string repeated = std::string(90, 'r') + "!";
  std::mt19937 rng(12);
  std::vector<std::uint8_t> nulls;
  strings.insert(strings.end(), 100'000, repeated);
  std::shuffle(strings.begin(), strings.end(), rng);
  for (std::size_t i = 0; i < strings.size(); ++i) nulls.push_back(rng() % 10 == 0);
  strings.push_back("only under a NULL");
  nulls.push_back(1);
  const std::vector<std::string_view> views(strings.begin(), strings.end());
  std::vector<std::int32_t> codes(views.size(), -7);
  const Dictionary dictionary = code_in_byte_order(views, nulls, codes.data(), "column x");
  std::set<std::string> expected;
  for (std::size_t i = 0; i < strings.size(); ++i)
    if (!nulls[i]) expected.insert(strings[i]);
  ASSERT_EQ(dictionary.size(), expected.size());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), dictionary.begin(), dictionary.end()));
  for (std::size_t i = 0; i < strings.size(); ++i) {
    if (nulls[i]) {
      ASSERT_EQ(codes[i], 0) << i;
    } else {
      ASSERT_EQ(dictionary[static_cast<std::size_t>(codes[i])], strings[i]) << i;
    }
  }
  // No NULL flags: every text coded.
  std::vector<std::int32_t> all(views.size());
  EXPECT_EQ(code_in_byte_order(views, {}, all.data(), "column x").size(),
            std::set<std::string>(strings.begin(), strings.end()).size());
}

TEST(StringCodes, BytesLessIsStdStringOrder) {
  const auto strings = random_strings(2'000, 3);
  for (std::size_t i = 0; i + 1 < strings.size(); ++i)
    EXPECT_EQ(bytes_less(strings[i], strings[i + 1]), strings[i] < strings[i + 1]) << i;
}

TEST(StringCodes, BytesEqualSeesEveryByteOfEveryLength) {
  // Each length from 0 to 40 (the word loop, the overlapping last word, the
  // 4-byte and byte tails), one byte changed at each place in turn.
  std::mt19937 rng(9);
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string a(n, '\0');
    for (char& c : a) c = static_cast<char>(rng() % 256);
    const std::string same = a;  // other memory, equal bytes
    EXPECT_TRUE(bytes_equal(a, same)) << n;
    for (std::size_t at = 0; at < n; ++at) {
      std::string b = a;
      b[at] = static_cast<char>(b[at] ^ (1 << (at % 8)));
      EXPECT_FALSE(bytes_equal(a, b)) << n << " " << at;
    }
    if (n > 0) {
      EXPECT_FALSE(bytes_equal(a, std::string_view(a).substr(1))) << n;
    }
  }
  EXPECT_TRUE(bytes_equal(std::string_view(nullptr, 0), ""));
}

}  // namespace
}  // namespace gpuolap::table
