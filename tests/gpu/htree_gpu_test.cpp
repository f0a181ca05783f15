// The gpu H-tree against cpu-serial (node for node: keys, parents,
// children, header tables, aggregates) and against a scan of the tuples
// (every query), under every knob: packed and per-dimension sorts, both
// online-cubing kernels and block sizes, batches read in place (pinned) or
// copied; builds, updates of every kind, values new to the dictionaries,
// empty batches, batches of more online queries than the grid has blocks.
#include <gtest/gtest.h>

#include <random>

#include "gpuolap/error.hpp"
#include "htree/gpu/htree_gpu.hpp"
#include "htree/htree.hpp"
#include "htree/htree_io.hpp"
#include "htree/htree_cases.hpp"

namespace gpuolap::htree {
namespace {

using namespace testing;

std::vector<GpuKnobs> every_knob() {
  std::vector<GpuKnobs> all;
  for (SortKeys s : {SortKeys::Packed, SortKeys::PerDimension})
    for (OnlineKernel k : {OnlineKernel::BlockPerQuery, OnlineKernel::Balanced})
      for (unsigned threads : {32u, 128u})
        for (QueryIo io : {QueryIo::Mapped, QueryIo::Copied})
          for (PathLookup path : {PathLookup::Walk, PathLookup::LeafJump}) {
            if (k == OnlineKernel::Balanced && threads != 128) continue;
            all.push_back({s, k, threads, io, path});
          }
  return all;
}

// The same batch in the gpu engine's pinned query memory.
QueryBatch pinned_copy(const QueryBatch& q) {
  return {q.dimensions, std::pmr::vector<std::uint32_t>(q.codes.begin(), q.codes.end(), query_memory(Engine::Gpu))};
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
    auto q = random_queries(rng, cards, 300);
    const QueryBatch along = tuple_path_queries(rng, cards, tuples, 300);
    q.codes.insert(q.codes.end(), along.codes.begin(), along.codes.end());
    for (const GpuKnobs& k : every_knob()) {
      const std::string where = "round " + std::to_string(round) + " sort " + std::string(sort_keys_name(k.sort)) +
                                " online " + std::string(online_kernel_name(k.online)) + " threads " +
                                std::to_string(k.block_threads) + " io " + std::string(query_io_name(k.query_io)) +
                                " path " + std::string(path_lookup_name(k.path_lookup));
      GpuHTree g(-1, k);
      g.build(cards, tuples);
      HTree got = shell(cards);
      g.download(got);
      check_tree(got);
      expect_same_tree(want, got, where);
      QueryStats st, pinned_st;
      const auto answers = g.query(q, &st);
      const QueryBatch in_place = pinned_copy(q);
      const Answers pinned_answers = g.query(in_place, &pinned_st);
      ASSERT_EQ(answers.size(), q.size());
      ASSERT_EQ(pinned_answers.size(), q.size());
      EXPECT_EQ(pinned_answers.memory(), query_memory(Engine::Gpu));
      for (std::size_t i = 0; i < q.size(); ++i) {
        const Aggregate want_i = brute_force(tuples, q.query(i));
        expect_same(want_i, answers[i], where + " query " + std::to_string(i));
        expect_same(want_i, pinned_answers[i], where + " pinned query " + std::to_string(i));
      }
      if (tuples.size()) {
        std::size_t online = 0;
        for (std::size_t i = 0; i < q.size(); ++i) online += !on_popular_path(q.query(i), cards.size());
        EXPECT_EQ(st.online, online) << where;
        EXPECT_EQ(st.popular_path + st.online, q.size());
        EXPECT_EQ(pinned_st.online, st.online);
        EXPECT_EQ(pinned_st.side_link_nodes, st.side_link_nodes);
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
      const std::string where = "round " + std::to_string(round) + " sort " + std::string(sort_keys_name(k.sort)) +
                                " path " + std::string(path_lookup_name(k.path_lookup));
      // Built on the GPU, and uploaded from the host: both paths update.
      for (bool uploaded : {false, true}) {
        GpuHTree g(-1, k);
        if (uploaded) {
          HTree host = shell(small);
          build(host, base, Engine::CpuParallel);
          g.upload(host);
          // The uploaded tree answers before any update (its leaf rows made from the levels).
          const auto before = tuple_path_queries(rng, small, base, 50);
          const auto before_answers = g.query(before);
          for (std::size_t i = 0; i < before.size(); ++i)
            expect_same(brute_force(base, before.query(i)), before_answers[i], where + " uploaded, before the update");
          if (round % 2) g.reserve_for_updates();  // as the server does
        } else {
          g.build(small, base);
        }
        g.update(grown, batch);
        HTree got = shell(grown);
        g.download(got);
        check_tree(got);
        expect_same_tree(want, got, where + (uploaded ? " uploaded" : " built"));
        const auto all = concat(base, batch);
        auto q = random_queries(rng, grown, 100);
        const QueryBatch along = tuple_path_queries(rng, grown, all, 100);
        q.codes.insert(q.codes.end(), along.codes.begin(), along.codes.end());
        const auto answers = g.query(q);
        for (std::size_t i = 0; i < q.size(); ++i) expect_same(brute_force(all, q.query(i)), answers[i], where);
      }
    }
  }
}

// More online queries than block-per-query's grid has blocks (each block
// takes every gridDim-th listed query), mixed with popular-path ones, against
// cpu-parallel's answers and counts.
TEST(HTreeGpu, BigHybridBatchesEqualCpuParallel) {
  std::mt19937_64 rng(31);
  const std::vector<std::uint32_t> cards{6, 9, 4, 13, 5};
  const auto tuples = random_tuples(rng, cards, 20000, true);
  HTree host = shell(cards);
  build(host, tuples, Engine::CpuParallel);
  const auto q = random_queries(rng, cards, 30000);
  QueryStats want_st;
  const Answers want = query_levels(host, q, &want_st);
  ASSERT_GT(want_st.online, 10000u);
  for (const GpuKnobs& k : every_knob()) {
    if (k.sort != SortKeys::Packed) continue;
    GpuHTree g(-1, k);
    g.upload(host);
    const QueryBatch pinned = pinned_copy(q);
    for (const QueryBatch* batch_of : {&q, &pinned}) {
      const QueryBatch& batch = *batch_of;
      QueryStats st;
      const Answers got = g.query(batch, &st);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t i = 0; i < q.size(); ++i) expect_same(want[i], got[i], "query " + std::to_string(i));
      EXPECT_EQ(st.online, want_st.online);
      EXPECT_EQ(st.popular_path, want_st.popular_path);
      EXPECT_EQ(st.side_link_nodes, want_st.side_link_nodes);
    }
    // A batch of popular-path queries only (no online grid is launched),
    // between two hybrid ones: each reports its own counts.
    QueryBatch popular{cards.size(), {}};
    std::vector<std::size_t> popular_rows;
    for (std::size_t i = 0; i < q.size(); ++i)
      if (on_popular_path(q.query(i), cards.size())) {
        popular.codes.insert(popular.codes.end(), q.query(i), q.query(i) + cards.size());
        popular_rows.push_back(i);
      }
    ASSERT_GT(popular_rows.size(), 1000u);
    QueryStats st;
    const Answers got = g.query(popular, &st);
    for (std::size_t j = 0; j < popular_rows.size(); ++j)
      expect_same(want[popular_rows[j]], got[j], "popular-path query " + std::to_string(popular_rows[j]));
    EXPECT_EQ(st.online, 0u);
    EXPECT_EQ(st.popular_path, popular_rows.size());
    EXPECT_EQ(st.side_link_nodes, 0u);
    g.query(q, &st);
    EXPECT_EQ(st.online, want_st.online);
    EXPECT_EQ(st.side_link_nodes, want_st.side_link_nodes);
  }
}

// A query file read as the server reads it lands in the pinned query memory
// and is answered there, equal to cpu-parallel.
TEST(HTreeGpu, AQueryFileIsReadIntoPinnedMemoryAndAnsweredThere) {
  std::mt19937_64 rng(37);
  const std::vector<std::uint32_t> cards{3, 4, 5};
  HTree tree = shell(cards);
  build(tree, random_tuples(rng, cards, 500, false), Engine::CpuParallel);
  const QueryFile q = parse_query_csv(tree, "d0,d1,d2\n1,*,*\n*,2,*\n0,1,2\n*,*,*\n", "q.csv", query_memory(Engine::Gpu));
  EXPECT_EQ(q.batch.codes.get_allocator().resource(), query_memory(Engine::Gpu));
  GpuHTree g;
  g.upload(tree);
  const Answers got = g.query(q.batch);
  EXPECT_EQ(got.memory(), query_memory(Engine::Gpu));
  const Answers want = query_levels(tree, q.batch);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) expect_same(want[i], got[i], "query " + std::to_string(i));
}

// One tree fed batch after batch, as the server feeds it: the leaf rows the
// queries' leaf jump reads are kept from one update to the next, made again
// when a batch widens the packing, and kept through reserve_for_updates —
// also after an empty batch that widened only the cardinalities. Each step
// is queried in place along the tuples' paths, one of them with the stage
// timing on (the stream's wait instead of the report's).
TEST(HTreeGpu, ChainedUpdatesKeepTheLeafRowsTheQueriesRead) {
  std::mt19937_64 rng(41);
  for (SortKeys sort : {SortKeys::Packed, SortKeys::PerDimension}) {
    std::vector<std::uint32_t> cards{5, 3, 7, 2, 6, 4};
    CodedTuples all = random_tuples(rng, cards, 3000, false);
    GpuKnobs k;
    k.sort = sort;
    GpuHTree g(-1, k);
    g.build(cards, all);
    for (int step = 0; step < 8; ++step) {
      const bool widen = step % 3 == 1, empty = step == 4;
      if (widen)
        for (auto& c : cards) c += 1 + static_cast<std::uint32_t>(rng() % 30);  // new values, wider codes
      const CodedTuples batch = random_tuples(rng, cards, empty ? 0 : 500 + rng() % 1500, false);
      g.update(cards, batch);
      all = concat(all, batch);
      if (step == 4 || step == 6) g.reserve_for_updates();
      g.set_timing(step == 5);
      auto q = tuple_path_queries(rng, cards, all, 400);
      const QueryBatch mixed = random_queries(rng, cards, 200);
      q.codes.insert(q.codes.end(), mixed.codes.begin(), mixed.codes.end());
      const QueryBatch pinned = pinned_copy(q);
      const Answers got = g.query(pinned);
      const std::string where = std::string(sort_keys_name(sort)) + " step " + std::to_string(step);
      for (std::size_t i = 0; i < q.size(); ++i) expect_same(brute_force(all, q.query(i)), got[i], where);
    }
  }
  GpuKnobs bad;
  bad.block_threads = 0;
  EXPECT_THROW({ GpuHTree refused(-1, bad); }, gpuolap::InputError);
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
