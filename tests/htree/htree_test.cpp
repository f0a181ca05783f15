// The CPU H-trees: cpu-serial (the pointer tree) and cpu-parallel (the SoA
// tree) give the same tree node for node, and every query the answer of a
// scan of the tuples, after builds and after updates of every kind.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory_resource>
#include <random>
#include <set>

#include "gpuolap/error.hpp"
#include "htree/child_search.hpp"
#include "htree/htree.hpp"
#include "htree/htree_io.hpp"
#include "htree/key_packing.hpp"
#include "htree_cases.hpp"

namespace gpuolap::htree {
namespace {

using namespace testing;

std::vector<std::uint32_t> random_cards(std::mt19937_64& rng) {
  std::vector<std::uint32_t> cards(1 + rng() % 6);
  for (auto& c : cards) c = 1 + static_cast<std::uint32_t>(rng() % 9);
  return cards;
}

// The tuples of `t` whose paths `base` does not have.
CodedTuples without_paths_of(const CodedTuples& t, const CodedTuples& base) {
  std::set<std::vector<std::uint32_t>> seen;
  auto path = [](const CodedTuples& x, std::size_t r) {
    std::vector<std::uint32_t> p;
    for (const auto& col : x.codes) p.push_back(col[r]);
    return p;
  };
  for (std::size_t r = 0; r < base.size(); ++r) seen.insert(path(base, r));
  CodedTuples out;
  out.codes.resize(t.codes.size());
  for (std::size_t r = 0; r < t.size(); ++r) {
    if (seen.count(path(t, r))) continue;
    for (std::size_t d = 0; d < t.codes.size(); ++d) out.codes[d].push_back(t.codes[d][r]);
    out.measure.push_back(t.measure[r]);
    if (!t.measure_null.empty()) out.measure_null.push_back(t.measure_null[r]);
  }
  return out;
}

void expect_answers(const HTree& tree, const CodedTuples& tuples, const QueryBatch& q, Engine e, const std::string& where) {
  const auto got = query(tree, q, e);
  ASSERT_EQ(got.size(), q.size());
  for (std::size_t i = 0; i < q.size(); ++i) expect_same(brute_force(tuples, q.query(i)), got[i], where + " query " + std::to_string(i));
}

TEST(HTree, EnginesBuildTheSameTreeAndAnswerAsAScan) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 60; ++round) {
    const auto cards = random_cards(rng);
    const auto tuples = random_tuples(rng, cards, rng() % 300, round % 2);
    HTree serial = shell(cards), parallel = shell(cards);
    build(serial, tuples, Engine::CpuSerial);
    build(parallel, tuples, Engine::CpuParallel);
    const std::string where = "round " + std::to_string(round);
    check_tree(serial);
    check_tree(parallel);
    EXPECT_EQ(serial.tuples, tuples.size());
    EXPECT_EQ(parallel.tuples, tuples.size());
    expect_same_tree(serial, parallel, where);
    const auto q = random_queries(rng, cards, 80);
    expect_answers(serial, tuples, q, Engine::CpuSerial, where + " cpu-serial");
    expect_answers(parallel, tuples, q, Engine::CpuParallel, where + " cpu-parallel");
  }
}

TEST(HTree, UpdatesEqualABuildOfEveryTuple) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 60; ++round) {
    const auto cards = random_cards(rng);
    const auto base = random_tuples(rng, cards, rng() % 200, round % 2, 0);
    // kind 0: a batch of only new paths (codes the base never used), 1: only
    // paths already there, 2: both, 3: an empty batch.
    const int kind = round % 4;
    CodedTuples batch;
    if (kind == 1 && base.size()) {
      batch = base;
      for (auto& v : batch.measure) v += 1;
    } else {
      batch = random_tuples(rng, cards, kind == 3 ? 0 : rng() % 150, true);
      if (kind == 0) batch = without_paths_of(batch, base);
    }
    const std::string where = "round " + std::to_string(round) + " kind " + std::to_string(kind);
    HTree whole = shell(cards);
    build(whole, concat(base, batch), Engine::CpuSerial);
    for (Engine e : {Engine::CpuSerial, Engine::CpuParallel}) {
      HTree t = shell(cards);
      build(t, base, e);
      update(t, batch, e);
      check_tree(t);
      EXPECT_EQ(t.tuples, base.size() + batch.size());
      expect_same_tree(whole, t, where + " " + std::string(engine_name(e)));
      expect_answers(t, concat(base, batch), random_queries(rng, cards, 40), e, where);
    }
  }
}

TEST(HTree, UpdatesWithValuesNewToTheDictionaries) {
  std::mt19937_64 rng(5);
  const std::vector<std::uint32_t> small{3, 2, 4}, grown{9, 5, 300};
  const auto base = random_tuples(rng, small, 100, false);
  const auto batch = random_tuples(rng, grown, 400, false);
  HTree whole = shell(grown);
  build(whole, concat(base, batch), Engine::CpuSerial);
  HTree t = shell(small);
  build(t, base, Engine::CpuParallel);
  t.dictionaries = shell(grown).dictionaries;  // the batch's new values, coded after the old ones
  update(t, batch, Engine::CpuParallel);
  expect_same_tree(whole, t, "grown");
}

TEST(HTree, AnEmptyTreeAnswersNothingAndTheTotalForStar) {
  HTree t = shell({3, 3});
  build(t, CodedTuples{{{}, {}}, {}, {}}, Engine::CpuParallel);
  QueryBatch q{2, {kAny, kAny, 1, kAny}};
  for (Engine e : {Engine::CpuSerial, Engine::CpuParallel})
    for (const Aggregate& a : query(t, q, e)) EXPECT_EQ(a.count, 0u);
}

// A query file read into a memory resource is coded there, and every
// engine answers it in the same memory (the gpu engine reads a batch made in
// its pinned query memory in place). A batch made elsewhere and assigned
// would keep its first resource: this is what the server relies on.
TEST(HTree, QueryBatchesAndTheirAnswersLiveInTheMemoryAsked) {
  std::mt19937_64 rng(41);
  const std::vector<std::uint32_t> cards{3, 4};
  HTree tree = shell(cards);
  build(tree, random_tuples(rng, cards, 200, false), Engine::CpuParallel);
  std::pmr::unsynchronized_pool_resource memory;
  const QueryFile q = parse_query_csv(tree, "d0,d1\n1,*\n*,2\n", "q.csv", &memory);
  ASSERT_EQ(q.batch.size(), 2u);
  EXPECT_EQ(q.batch.codes.get_allocator().resource(), &memory);
  for (Engine e : {Engine::CpuSerial, Engine::CpuParallel}) {
    const Answers a = query(tree, q.batch, e);
    EXPECT_EQ(a.memory(), &memory);
    ASSERT_EQ(a.size(), 2u);
    EXPECT_GT(a[0].count + a[1].count, 0u);
  }
}

TEST(HTree, PackingKeepsTheTuplesOrder) {
  const KeyPacking p = make_packing({40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 40, 2, 1, 160});
  EXPECT_EQ(p.words, 2);  // 10 six-bit dimensions fill 60 bits of the first word
  EXPECT_EQ(make_packing({40, 40}, true).words, 2);
  std::uint64_t w[2] = {0, 0};
  w[p.word[13]] |= std::uint64_t{159} << p.shift[13];
  w[p.word[0]] |= std::uint64_t{39} << p.shift[0];
  EXPECT_EQ(p.code(w, 13), 159u);
  EXPECT_EQ(p.code(w, 0), 39u);
  EXPECT_EQ(p.code(w, 12), 0u);
  EXPECT_THROW(make_packing({}), InputError);
}

// The multi-probe search (child_search.hpp) answers as a binary search does
// over runs of every length up to a few rounds of probes, for each key
// present and for keys below, between and above them.
TEST(HTree, FindChildAnswersAsABinarySearch) {
  std::mt19937_64 rng(11);
  for (std::uint32_t len = 0; len <= 3 * kChildProbes * kChildProbes; ++len) {
    std::set<std::uint32_t> unique;
    while (unique.size() < len + 10) unique.insert(1 + static_cast<std::uint32_t>(rng() % (4 * len + 40)) * 2);
    const std::vector<std::uint32_t> keys(unique.begin(), unique.end());
    const std::uint32_t lo = 5, hi = lo + len;  // a run inside the array, as siblings are
    for (std::uint32_t key = 0; key <= keys[hi + 1] + 1; ++key) {
      const auto it = std::lower_bound(keys.begin() + lo, keys.begin() + hi, key);
      const std::uint32_t want = it != keys.begin() + hi && *it == key ? static_cast<std::uint32_t>(it - keys.begin()) : hi;
      ASSERT_EQ(find_child(keys.data(), lo, hi, key), want) << "run of " << len << ", key " << key;
    }
  }
}

TEST(HTree, OnlyPrefixesAreOnThePopularPath) {
  const std::uint32_t a[] = {1, 2, kAny}, b[] = {kAny, 2, kAny}, c[] = {kAny, kAny, kAny}, d[] = {1, kAny, 3};
  EXPECT_TRUE(on_popular_path(a, 3));
  EXPECT_FALSE(on_popular_path(b, 3));
  EXPECT_TRUE(on_popular_path(c, 3));
  EXPECT_FALSE(on_popular_path(d, 3));
}

TEST(HTree, ACorruptTreeIsRefusedNamingTheNode) {
  std::mt19937_64 rng(3);
  HTree t = shell({4, 4, 4});
  build(t, random_tuples(rng, {4, 4, 4}, 50, false), Engine::CpuParallel);
  t.levels[1].key[0] = 1000;
  try {
    check_tree(t);
    FAIL() << "a key outside the dictionary was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("level 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuolap::htree
