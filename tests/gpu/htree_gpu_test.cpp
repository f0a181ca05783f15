// The gpu H-tree against cpu-serial (node for node: keys, parents,
// children, header tables, aggregates) and against a scan of the tuples
// (every query), under every knob: packed and per-dimension sorts, both
// online-cubing kernels and block sizes; builds, updates of every kind,
// values new to the dictionaries, empty batches.
#include <gtest/gtest.h>

#include <random>

#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "htree/htree_cases.hpp"

namespace gpuolap::htree {
namespace {

using namespace testing;

std::vector<GpuKnobs> every_knob() {
  std::vector<GpuKnobs> all;
  for (SortKeys s : {SortKeys::Packed, SortKeys::PerDimension})
    for (OnlineKernel k : {OnlineKernel::BlockPerQuery, OnlineKernel::Balanced})
      for (unsigned threads : {32u, 128u}) {
        if (k == OnlineKernel::Balanced && threads != 128) continue;
        all.push_back({s, k, threads});
      }
  return all;
}

TEST(HTreeGpu, BuildsTheTreeOfCpuSerialAndAnswersAsAScan) {
  ASSERT_TRUE(gpu_available());
  std::mt19937_64 rng(21);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::uint32_t> cards(1 + rng() % 8);
    for (auto& c : cards) c = 1 + static_cast<std::uint32_t>(rng() % (round % 3 == 0 ? 300 : 12));
    const auto tuples = random_tuples(rng, cards, round == 0 ? 0 : rng() % 5000, round % 2);
    HTree want = shell(cards);
    build(want, tuples, Engine::CpuSerial);
    const auto q = random_queries(rng, cards, 300);
    for (const GpuKnobs& k : every_knob()) {
      const std::string where = "round " + std::to_string(round) + " sort " + std::string(sort_keys_name(k.sort)) +
                                " online " + std::string(online_kernel_name(k.online)) + " threads " +
                                std::to_string(k.block_threads);
      GpuHTree g(-1, k);
      g.build(cards, tuples);
      HTree got = shell(cards);
      g.download(got);
      check_tree(got);
      expect_same_tree(want, got, where);
      QueryStats st;
      const auto answers = g.query(q, &st);
      ASSERT_EQ(answers.size(), q.size());
      for (std::size_t i = 0; i < q.size(); ++i) {
        expect_same(brute_force(tuples, q.query(i)), answers[i], where + " query " + std::to_string(i));
      }
      if (tuples.size()) {
        EXPECT_EQ(st.popular_path + st.online, q.size());
      }
    }
  }
}

TEST(HTreeGpu, UpdatesEqualCpuSerialsTree) {
  std::mt19937_64 rng(23);
  for (int round = 0; round < 40; ++round) {
    std::vector<std::uint32_t> small(1 + rng() % 6);
    for (auto& c : small) c = 1 + static_cast<std::uint32_t>(rng() % 10);
    auto grown = small;
    if (round % 2)
      for (auto& c : grown) c += static_cast<std::uint32_t>(rng() % 5);  // the batch brings new values
    const auto base = random_tuples(rng, small, round % 5 == 0 ? 0 : rng() % 3000, true);
    const int kind = round % 3;  // 0: mixed, 1: only existing paths, 2: empty
    CodedTuples batch = kind == 1 ? base : random_tuples(rng, grown, kind == 2 ? 0 : rng() % 2000, round % 4 == 1);
    HTree want = shell(grown);
    build(want, concat(base, batch), Engine::CpuSerial);
    for (const GpuKnobs& k : every_knob()) {
      const std::string where = "round " + std::to_string(round) + " sort " + std::string(sort_keys_name(k.sort));
      // Built on the GPU, and uploaded from the host: both paths update.
      for (bool uploaded : {false, true}) {
        GpuHTree g(-1, k);
        if (uploaded) {
          HTree host = shell(small);
          build(host, base, Engine::CpuParallel);
          g.upload(host);
        } else {
          g.build(small, base);
        }
        g.update(grown, batch);
        HTree got = shell(grown);
        g.download(got);
        check_tree(got);
        expect_same_tree(want, got, where + (uploaded ? " uploaded" : " built"));
        const auto q = random_queries(rng, grown, 100);
        const auto answers = g.query(q);
        const auto all = concat(base, batch);
        for (std::size_t i = 0; i < q.size(); ++i) expect_same(brute_force(all, q.query(i)), answers[i], where);
      }
    }
  }
}

TEST(HTreeGpu, TheEngineInterfaceRunsOnTheGpu) {
  std::mt19937_64 rng(29);
  const std::vector<std::uint32_t> cards{5, 7, 3, 11};
  const auto a = random_tuples(rng, cards, 2000, true), b = random_tuples(rng, cards, 500, false);
  HTree want = shell(cards), got = shell(cards);
  build(want, a, Engine::CpuParallel);
  update(want, b, Engine::CpuParallel);
  build(got, a, Engine::Gpu);
  update(got, b, Engine::Gpu);
  EXPECT_EQ(got.tuples, 2500u);
  expect_same_tree(want, got, "engine");
  const auto q = random_queries(rng, cards, 200);
  const auto x = query(want, q, Engine::CpuSerial), y = query(got, q, Engine::Auto);
  for (std::size_t i = 0; i < q.size(); ++i) expect_same(x[i], y[i], "query " + std::to_string(i));
}

}  // namespace
}  // namespace gpuolap::htree
