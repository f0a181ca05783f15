// Random H-tree cases and their brute-force answers, for the CPU tests and
// the gpu tests alike: every engine is checked against a scan of the tuples.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "htree/htree.hpp"

namespace gpuolap::htree::testing {

// A tree shell of `m` int64 dimensions whose dictionaries hold cards[d] values.
inline HTree shell(const std::vector<std::uint32_t>& cards) {
  HTree t;
  for (std::size_t d = 0; d < cards.size(); ++d) {
    t.dimensions.push_back("d" + std::to_string(d));
    Dictionary dict;
    for (std::uint32_t v = 0; v < cards[d]; ++v) dict.code(std::to_string(v));
    t.dictionaries.push_back(std::move(dict));
  }
  t.measure = "m";
  t.levels.assign(cards.size(), {});
  return t;
}

// n random tuples; skew > 0 draws small codes more often; some measures NULL.
inline CodedTuples random_tuples(std::mt19937_64& rng, const std::vector<std::uint32_t>& cards, std::size_t n,
                                 bool nulls, std::uint32_t code_limit = 0) {
  CodedTuples t;
  t.codes.assign(cards.size(), std::vector<std::uint32_t>(n));
  for (std::size_t d = 0; d < cards.size(); ++d) {
    const std::uint32_t top = code_limit ? std::min(code_limit, cards[d]) : cards[d];
    std::uniform_int_distribution<std::uint32_t> pick(0, top - 1);
    for (auto& c : t.codes[d]) c = std::min(pick(rng), pick(rng));  // skewed toward 0
  }
  std::uniform_int_distribution<int> value(-1000, 1000);
  for (std::size_t r = 0; r < n; ++r) t.measure.push_back(value(rng) / 8.0);
  if (nulls) {
    t.measure_null.resize(n);
    for (auto& f : t.measure_null) f = (rng() % 7) == 0;
  }
  return t;
}

inline CodedTuples concat(const CodedTuples& a, const CodedTuples& b) {
  CodedTuples t = a;
  for (std::size_t d = 0; d < t.codes.size(); ++d) t.codes[d].insert(t.codes[d].end(), b.codes[d].begin(), b.codes[d].end());
  t.measure.insert(t.measure.end(), b.measure.begin(), b.measure.end());
  if (!a.measure_null.empty() || !b.measure_null.empty()) {
    t.measure_null = a.measure_null;
    t.measure_null.resize(a.size(), 0);
    for (std::size_t r = 0; r < b.size(); ++r) t.measure_null.push_back(b.measure_null.empty() ? 0 : b.measure_null[r]);
  }
  return t;
}

// Queries of every kind: each dimension `*`, a value, or one no tuple has.
inline QueryBatch random_queries(std::mt19937_64& rng, const std::vector<std::uint32_t>& cards, std::size_t n) {
  QueryBatch q;
  q.dimensions = cards.size();
  for (std::size_t i = 0; i < n; ++i) {
    const int style = static_cast<int>(rng() % 3);  // 0: popular path, 1: online, 2: anything
    const std::size_t prefix = rng() % (cards.size() + 1);
    for (std::size_t d = 0; d < cards.size(); ++d) {
      std::uint32_t c = kAny;
      const bool instantiate = style == 0 ? d < prefix : (rng() % 3) == 0;
      if (instantiate) c = (rng() % 17) == 0 ? kAbsent : static_cast<std::uint32_t>(rng() % (cards[d] + 1));
      if (c != kAny && c != kAbsent && c >= cards[d]) c = kAbsent;
      q.codes.push_back(c);
    }
  }
  return q;
}

// Popular-path queries along the tuples' own paths: a tuple's first k
// codes, half of them with one code changed (to another value, or absent),
// so that a path is followed deep into the tree and then left, where a
// lookup that stops early must still check the rest.
inline QueryBatch tuple_path_queries(std::mt19937_64& rng, const std::vector<std::uint32_t>& cards,
                                     const CodedTuples& t, std::size_t n) {
  QueryBatch q;
  q.dimensions = cards.size();
  if (t.size() == 0) return q;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t r = rng() % t.size(), k = 1 + rng() % cards.size();
    std::vector<std::uint32_t> c(cards.size(), kAny);
    for (std::size_t d = 0; d < k; ++d) c[d] = t.codes[d][r];
    if (rng() % 2) {
      const std::size_t d = rng() % k;
      c[d] = rng() % 5 == 0 ? kAbsent : static_cast<std::uint32_t>(rng() % cards[d]);
    }
    q.codes.insert(q.codes.end(), c.begin(), c.end());
  }
  return q;
}

inline Aggregate brute_force(const CodedTuples& t, const std::uint32_t* q) {
  Aggregate a;
  for (std::size_t r = 0; r < t.size(); ++r) {
    bool match = true;
    for (std::size_t d = 0; d < t.codes.size() && match; ++d) match = q[d] == kAny || q[d] == t.codes[d][r];
    if (match && (t.measure_null.empty() || !t.measure_null[r])) a.add(t.measure[r]);
  }
  return a;
}

inline void expect_same(const Aggregate& want, const Aggregate& got, const std::string& where) {
  ASSERT_EQ(want.count, got.count) << where;
  if (want.count == 0) return;
  EXPECT_NEAR(want.sum, got.sum, 1e-9 * (std::abs(want.sum) + 1e3 * static_cast<double>(want.count))) << where;
  EXPECT_EQ(want.min, got.min) << where;
  EXPECT_EQ(want.max, got.max) << where;
}

// Two trees node for node (sums within rounding).
inline void expect_same_tree(const HTree& want, const HTree& got, const std::string& where) {
  ASSERT_EQ(want.levels.size(), got.levels.size()) << where;
  expect_same(want.total, got.total, where + " total");
  for (std::size_t i = 0; i < want.levels.size(); ++i) {
    const Level& a = want.levels[i];
    const Level& b = got.levels[i];
    const std::string at = where + " level " + std::to_string(i);
    ASSERT_EQ(a.key, b.key) << at;
    ASSERT_EQ(a.parent, b.parent) << at;
    ASSERT_EQ(a.first_child, b.first_child) << at;
    ASSERT_EQ(a.child_count, b.child_count) << at;
    ASSERT_EQ(a.side_links, b.side_links) << at;
    ASSERT_EQ(a.header_key, b.header_key) << at;
    ASSERT_EQ(a.header_count, b.header_count) << at;
    ASSERT_EQ(a.header_first, b.header_first) << at;
    for (std::size_t k = 0; k < a.size(); ++k) expect_same(a.aggregate[k], b.aggregate[k], at + " node " + std::to_string(k));
  }
}

}  // namespace gpuolap::htree::testing
