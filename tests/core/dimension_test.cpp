#include "gpuolap/dimension.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "gpuolap/error.hpp"
#include "support/input_error.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {
namespace {

ElementSpec base(const std::string& n) { return {n, {}}; }
ElementSpec cons(const std::string& n, std::vector<std::pair<std::string, double>> children) {
  return {n, std::move(children)};
}

using testing::error_of;

TEST(Dimension, NumbersBaseElementsDenselyInSchemaOrder) {
  const Dimension d = Dimension::build("D", {cons("All", {{"a", 1}, {"b", 1}}), base("a"), base("b")}, "test");
  EXPECT_EQ(d.base_count(), 2u);
  EXPECT_EQ(d.base_id(*d.find("a")), 0u);
  EXPECT_EQ(d.base_id(*d.find("b")), 1u);
  EXPECT_EQ(d.base_id(*d.find("All")), kNotBase);
  EXPECT_EQ(d.depth(), 2);
  EXPECT_EQ(d.key_bits(), 1);
}

TEST(Dimension, SumsWeightsOverEveryPathOfADag) {
  // Top -> G1 (2) -> a (0.5); Top -> a (1); Top -> G2 (-1) -> a, b
  const Dimension d = Dimension::build(
      "D", {base("a"), base("b"), cons("G1", {{"a", 0.5}}), cons("G2", {{"a", 1}, {"b", 3}}),
            cons("Top", {{"G1", 2}, {"a", 1}, {"G2", -1}})},
      "test");
  const auto w = d.base_weights(*d.find("Top"));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], (std::pair<BaseId, double>{0, 2 * 0.5 + 1 - 1}));
  EXPECT_EQ(w[1], (std::pair<BaseId, double>{1, -3}));
  EXPECT_EQ(d.depth(), 3);
}

// Built, a dimension holds its elements' base weights up to a budget (2^18
// entries); the elements past it are computed when first asked, the same.
TEST(Dimension, BaseWeightsPastTheEagerBudgetAreComputedWhenAsked) {
  constexpr int kBases = 150'000;  // bases 150 K, then each total 150 K: the third total is past 2^18
  std::vector<ElementSpec> specs;
  for (const char* total : {"T1", "T2", "T3"}) specs.push_back(cons(total, {}));
  for (int i = 0; i < kBases; ++i) {
    specs.push_back(base("b" + std::to_string(i)));
    for (int t = 0; t < 3; ++t) specs[t].children.emplace_back("b" + std::to_string(i), t + 1.0);
  }
  const Dimension d = Dimension::build("D", specs, "test");
  for (int t = 0; t < 3; ++t) {
    const auto& w = d.base_weights(*d.find(specs[t].name));
    ASSERT_EQ(w.size(), static_cast<size_t>(kBases));
    EXPECT_EQ(w.front(), (std::pair<BaseId, double>{0, t + 1.0}));
    EXPECT_EQ(w.back(), (std::pair<BaseId, double>{kBases - 1, t + 1.0}));
  }
}

TEST(Dimension, BaseWeightsAreComputedOnceAndSharedByThreadsAndCopies) {
  std::vector<ElementSpec> specs{cons("All", {})};
  for (int i = 0; i < 200; ++i) {
    specs.push_back(base("b" + std::to_string(i)));
    specs[0].children.emplace_back("b" + std::to_string(i), 0.5 * (i % 3));
  }
  const Dimension d = Dimension::build("D", specs, "test");
  const ElementId all = *d.find("All");
  std::vector<const std::vector<std::pair<BaseId, double>>*> seen(8);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < seen.size(); ++t) threads.emplace_back([&, t] { seen[t] = &d.base_weights(all); });
  for (auto& t : threads) t.join();
  for (const auto* s : seen) EXPECT_EQ(s, seen[0]);
  EXPECT_EQ(seen[0]->size(), 133u);  // every third base has weight 0
  const Dimension copy = d;
  EXPECT_EQ(&copy.base_weights(all), seen[0]);
}

TEST(Dimension, LeavesOutBasesWhoseWeightIsZero) {
  const Dimension d = Dimension::build(
      "D", {base("a"), base("b"), cons("Z", {{"a", 0}, {"b", 1}}), cons("X", {{"a", 1}}),
            cons("C", {{"X", 1}, {"a", -1}, {"b", 1}})},
      "test");
  EXPECT_EQ(d.base_weights(*d.find("Z")), (std::vector<std::pair<BaseId, double>>{{1, 1.0}}));
  EXPECT_EQ(d.base_weights(*d.find("C")), (std::vector<std::pair<BaseId, double>>{{1, 1.0}}));
  EXPECT_EQ(d.base_weights(*d.find("a")), (std::vector<std::pair<BaseId, double>>{{0, 1.0}}));
}

// Issue 24, item 6: "*" over a 10,000-level hierarchy took 41 s, a walk of
// each element's whole subtree. Kept totals make the chain linear: before,
// the 20,000 elements here cost 2e8 subtree steps (many seconds); now they
// cost 20,000 (milliseconds). The bound is far from both.
TEST(Dimension, BaseWeightsOfEveryLevelOfADeepChainCostWhatTheyHold) {
  constexpr int kLevels = 20000;
  std::vector<ElementSpec> specs{base("L0")};
  for (int i = 1; i < kLevels; ++i) specs.push_back(cons("L" + std::to_string(i), {{"L" + std::to_string(i - 1), 1.0}}));
  const Dimension d = Dimension::build("Chain", specs, "test");
  const auto start = std::chrono::steady_clock::now();
  for (ElementId e = 0; e < kLevels; ++e) ASSERT_EQ(d.base_weights(e).size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

// The totals are kept per element and an element's are summed from its
// children's, in child order: the same bits whether its children were asked
// for first or not.
TEST(Dimension, BaseWeightsDoNotDependOnWhatWasAskedBefore) {
  const std::vector<ElementSpec> specs{base("a"), base("b"), cons("G1", {{"a", 0.1}, {"b", 0.7}}),
                                       cons("G2", {{"a", 0.3}, {"G1", 0.9}}), cons("Top", {{"G2", 1.3}, {"G1", 0.2}, {"a", 0.6}})};
  const Dimension top_first = Dimension::build("D", specs, "test");
  const Dimension children_first = Dimension::build("D", specs, "test");
  children_first.base_weights(*children_first.find("G1"));
  children_first.base_weights(*children_first.find("G2"));
  EXPECT_EQ(top_first.base_weights(*top_first.find("Top")), children_first.base_weights(*children_first.find("Top")));
}

TEST(Dimension, KeyBitsAreCeilLog2OfBaseCount) {
  auto flat = [](int n) {
    std::vector<ElementSpec> specs;
    for (int i = 0; i < n; ++i) specs.push_back(base("e" + std::to_string(i)));
    return Dimension::build("D", specs, "test").key_bits();
  };
  EXPECT_EQ(flat(1), 0);
  EXPECT_EQ(flat(2), 1);
  EXPECT_EQ(flat(3), 2);
  EXPECT_EQ(flat(4), 2);
  EXPECT_EQ(flat(5), 3);
  EXPECT_EQ(flat(1024), 10);
  EXPECT_EQ(flat(1025), 11);
}

TEST(Dimension, RejectsACycleAndNamesIt) {
  const std::string e = error_of([] {
    Dimension::build("D", {base("a"), cons("P", {{"Q", 1}}), cons("Q", {{"R", 1}, {"a", 1}}), cons("R", {{"P", 1}})},
                     "s.json: dimension 'D'");
  });
  EXPECT_NE(e.find("s.json: dimension 'D': consolidation cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("'P'"), std::string::npos) << e;
  EXPECT_NE(e.find("'R'"), std::string::npos) << e;
}

TEST(Dimension, RejectsASelfLoop) {
  EXPECT_NE(error_of([] { Dimension::build("D", {base("a"), cons("P", {{"P", 1}, {"a", 1}})}, "t"); })
                .find("cycle: 'P' -> 'P'"),
            std::string::npos);
}

TEST(Dimension, RejectsMissingChildDuplicateNamesAndBadWeights) {
  EXPECT_NE(error_of([] { Dimension::build("D", {cons("P", {{"nope", 1}})}, "t"); })
                .find("element 'P' has child 'nope', which does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([] { Dimension::build("D", {base("a"), base("a")}, "t"); }).find("'a' is declared twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              Dimension::build("D", {base("a"), cons("P", {{"a", std::numeric_limits<double>::infinity()}})}, "t");
            }).find("not finite"),
            std::string::npos);
  EXPECT_NE(error_of([] { Dimension::build("D", {}, "t"); }).find("no elements"), std::string::npos);
}

TEST(Schema, RefusesKeysWiderThan64Bits) {
  std::vector<Dimension> dims;
  std::vector<ElementSpec> specs;
  for (int i = 0; i < 3000; ++i) specs.push_back(base("e" + std::to_string(i)));  // 12 bits
  for (int d = 0; d < 6; ++d) dims.push_back(Dimension::build("D" + std::to_string(d), specs, "t"));
  const std::string e = error_of([&] { Schema("wide", dims, {"V"}, "wide.json"); });
  EXPECT_NE(e.find("wide.json: the cell key needs 72 bits"), std::string::npos) << e;
  dims.pop_back();
  EXPECT_EQ(Schema("ok", dims, {"V"}, "t").codec().total_bits(), 60);
}

TEST(KeyCodec, RoundTripsAndSortsByFirstDimension) {
  KeyCodec c({3, 0, 5}, {"a", "b", "c"}, "t");
  const uint32_t ids[] = {5, 0, 17};
  const uint64_t key = c.encode(ids);
  EXPECT_EQ(c.decode(key, 0), 5u);
  EXPECT_EQ(c.decode(key, 1), 0u);
  EXPECT_EQ(c.decode(key, 2), 17u);
  const uint32_t lower[] = {4, 0, 31};
  EXPECT_LT(c.encode(lower), key);
}

TEST(Schema, RefusesMoreThan64Dimensions) {
  // One-element dimensions take no key bits, so only the count limits them.
  std::vector<Dimension> dims;
  for (int d = 0; d < 65; ++d) dims.push_back(Dimension::build("D" + std::to_string(d), {base("x")}, "t"));
  EXPECT_NE(error_of([&] { Schema("many", dims, {"V"}, "many.json"); }).find("65 dimensions; at most 64"),
            std::string::npos);
  dims.pop_back();
  EXPECT_EQ(Schema("ok", dims, {"V"}, "t").codec().total_bits(), 0);
}

}  // namespace
}  // namespace gpuolap
