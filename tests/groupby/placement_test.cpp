// The placement optimizer's invariants on random Zipf columns: every row
// names a copy of its own value, the budget holds, an unbounded budget
// leaves no conflict, one thread is deterministic; its statistics against
// the paper's Table 1; the placement file's round trip and its refusals;
// and the CPU form of the shared-memory operators.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpuolap/error.hpp"
#include "groupby/shared_memory/placement.hpp"
#include "groupby/shared_memory/placement_file.hpp"
#include "groupby/shared_memory/shared_aggregation.hpp"
#include "groupby/shared_memory_cases.hpp"

namespace gpuolap::groupby {
namespace {

LaunchShape small_shape(int word_bytes) { return LaunchShape{64, 1024, word_bytes}; }

TEST(Placement, EveryRowNamesACopyOfItsValueWithinTheBudget) {
  std::uint64_t seed = 1;
  for (double theta : {0.0, 1.0, 2.0})
    for (std::uint32_t c : {1u, 7u, 64u, 1024u})
      for (PlacementGoal goal : {PlacementGoal::Read, PlacementGoal::Write})
        for (int word : {4, 8})
          for (double budget : {1.0, 2.0, 4.0, 0.0}) {
            const auto codes = test::zipf_codes(10'007, c, theta, ++seed);
            PlacementOptions o;
            o.goal = goal;
            o.shape = small_shape(word);
            o.budget = budget;
            o.window = static_cast<int>(seed % 5);
            o.threads = static_cast<int>(seed % 3) + 1;
            const Placement p = optimize_placement(codes, c, o);
            SCOPED_TRACE(::testing::Message() << "theta " << theta << " C " << c << " goal " << int(goal) << " word "
                                              << word << " budget " << budget << " window " << o.window);
            EXPECT_NO_THROW(check_placement(p, codes));
            const std::uint64_t base = (c + p.banks() - 1) / p.banks() * p.banks();
            if (budget > 0) {
              EXPECT_LE(p.slot_value.size(), std::max<std::uint64_t>(base, budget * c));
            }
            if (budget == 1.0) {
              EXPECT_EQ(p.column, codes);
            }
            if (budget == 0.0) {
              // Unbounded: no chunk has a conflict of the goal's kind.
              if (goal == PlacementGoal::Write) {
                EXPECT_EQ(p.stats.after.write_conflicted_chunks, 0u);
                EXPECT_EQ(p.stats.after.window_conflicts, 0u);
              } else {
                EXPECT_EQ(p.stats.after.read_conflicted_chunks, 0u);
              }
            }
          }
}

TEST(Placement, OneThreadPlacesTheSameEveryRun) {
  const auto codes = test::zipf_codes(50'000, 1024, 1.0, 3);
  PlacementOptions o;
  o.shape = small_shape(8);
  o.threads = 1;
  const Placement a = optimize_placement(codes, 1024, o);
  const Placement b = optimize_placement(codes, 1024, o);
  EXPECT_EQ(a.column, b.column);
  EXPECT_EQ(a.slot_value, b.slot_value);
}

TEST(Placement, ChunkStatisticsMatchThePapersTableOne) {
  // Uniform codes over 1,024 values, 4-byte words: the paper's Table 1 has
  // 20.42 distinct banks, 3.54 write and 3.44 read rounds per chunk.
  const auto codes = test::zipf_codes(1 << 20, 1024, 0.0, 5);
  const ChunkStats s = chunk_stats(codes, LaunchShape{512, 1 << 18, 4}, 0);
  EXPECT_NEAR(s.distinct_banks, 20.42, 0.2);
  EXPECT_NEAR(s.write_rounds, 3.54, 0.15);
  EXPECT_NEAR(s.read_rounds, 3.44, 0.15);
}

TEST(Placement, WritesGetFewerRoundsAndSkewMoreCopiesOfItsHeavyHitters) {
  const auto codes = test::zipf_codes(1 << 18, 1024, 2.0, 7);
  PlacementOptions o;
  o.shape = LaunchShape{512, 1 << 16, 8};
  o.budget = 4;
  o.window = 4;
  const Placement p = optimize_placement(codes, 1024, o);
  EXPECT_LT(p.stats.after.write_rounds, p.stats.before.write_rounds / 3);
  EXPECT_GT(p.stats.max_copies, 32u);  // value 0 is 60% of the rows
  EXPECT_LE(p.stats.copies_per_value, 4.0);
}

TEST(Placement, ValueConflictsOnlyLeaveBankConflicts) {
  // The paper's fig. 7: without banks, no two rows of a chunk (or of the
  // window) share a slot, but banks still collide.
  const auto codes = test::zipf_codes(1 << 16, 1024, 1.0, 11);
  PlacementOptions o;
  o.shape = LaunchShape{256, 1 << 14, 4};
  o.budget = 0;
  o.window = 4;
  o.banks = false;
  const Placement p = optimize_placement(codes, 1024, o);
  EXPECT_NO_THROW(check_placement(p, codes));
  EXPECT_EQ(p.stats.after.window_conflicts, 0u);
  EXPECT_GT(p.stats.after.write_conflicted_chunks, p.stats.chunks / 2);  // bank conflicts remain
  for (std::size_t r = 0; r < codes.size(); r += kChunkRows)
    for (std::size_t i = r; i < r + kChunkRows; ++i)
      for (std::size_t j = r; j < i; ++j) ASSERT_NE(p.column[i], p.column[j]) << "rows " << i << ", " << j;
  o.banks = true;
  EXPECT_EQ(optimize_placement(codes, 1024, o).stats.after.write_conflicted_chunks, 0u);
}

TEST(Placement, BadInputIsNamed) {
  PlacementOptions o;
  EXPECT_THROW(
      {
        try {
          optimize_placement({0, 1, 5}, 4, o);
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("row 3"), std::string::npos) << e.what();
          throw;
        }
      },
      InputError);
  o.shape.block_threads = 48;
  EXPECT_THROW(optimize_placement({0}, 4, o), InputError);
  o.shape = LaunchShape{};
  o.shape.rows_per_block = 1000;
  EXPECT_THROW(optimize_placement({0}, 4, o), InputError);
  o.shape = LaunchShape{};
  o.budget = 0.5;
  EXPECT_THROW(optimize_placement({0}, 4, o), InputError);
}

TEST(SharedAuto, PicksThreadsByTheStatesShareAndTheVariantBySkew) {
  EXPECT_EQ(auto_block_threads(12 * 1024, 228 * 1024), 512);
  EXPECT_EQ(auto_block_threads(98 * 1024, 228 * 1024), 1024);
  std::string why;
  GroupedInput in;
  in.groups = 1024;
  const auto uniform = test::zipf_codes(1 << 16, 1024, 0.0, 1);
  const auto skewed = test::zipf_codes(1 << 16, 1024, 1.5, 2);
  const std::vector<double> x(1 << 16, 1.0);
  in.rows = uniform.size();
  in.codes = uniform.data();
  EXPECT_EQ(choose_shared_variant(in, false, why), SharedVariant::OneCopy);  // COUNT: native atomics
  EXPECT_EQ(choose_shared_variant(in, true, why), SharedVariant::OneCopy);
  in.values = x.data();
  EXPECT_EQ(choose_shared_variant(in, false, why), SharedVariant::OneCopy) << why;
  in.codes = skewed.data();
  EXPECT_EQ(choose_shared_variant(in, false, why), SharedVariant::WarpAggregation) << why;
  EXPECT_EQ(choose_shared_variant(in, true, why), SharedVariant::Placement);
  EXPECT_TRUE(same_chunks(LaunchShape{256, 1 << 18, 8}, LaunchShape{1024, 1 << 18, 8}));
  EXPECT_FALSE(same_chunks(LaunchShape{256, 1 << 18, 8}, LaunchShape{256, 1 << 18, 4}));
}

TEST(PlacementFile, RoundTripsAndRefusesACorruptOrForeignFile) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpuolap-placement-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto codes = test::zipf_codes(5'000, 100, 1.0, 9);
  StoredPlacement s;
  s.table = "f";
  s.column = "a";
  s.table_stamp = 42;
  PlacementOptions o;
  o.shape = small_shape(4);
  s.placement = optimize_placement(codes, 100, o);
  store_placement(dir, s);
  EXPECT_FALSE(load_placement(dir, "f", "a", PlacementGoal::Read).has_value());
  const auto back = load_placement(dir, "f", "a", PlacementGoal::Write);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->table_stamp, 42u);
  EXPECT_EQ(back->placement.column, s.placement.column);
  EXPECT_EQ(back->placement.slot_value, s.placement.slot_value);
  EXPECT_EQ(back->placement.shape, s.placement.shape);
  EXPECT_EQ(back->placement.stats.after.write_rounds, s.placement.stats.after.write_rounds);

  const auto path = placement_path(dir, "f", "a", PlacementGoal::Write);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x7f');
  }
  EXPECT_THROW(load_placement(dir, "f", "a", PlacementGoal::Write), InputError);
  std::filesystem::resize_file(path, 20);
  EXPECT_THROW(load_placement(dir, "f", "a", PlacementGoal::Write), InputError);
  std::filesystem::remove_all(dir);
}

TEST(SharedCpu, GroupsAndJoinsRowByRow) {
  const std::vector<std::uint32_t> codes{2, 0, 2, 2, 1};
  const std::vector<double> x{1.5, -2, 3, -0.0, 7};
  GroupedInput in;
  in.rows = codes.size();
  in.groups = 4;
  in.codes = codes.data();
  in.values = x.data();
  in.min_max = true;
  const GroupedResult r = grouped_cpu(in);
  EXPECT_EQ(r.count, (std::vector<std::int64_t>{1, 1, 3, 0}));
  EXPECT_EQ(r.sum_doubles[2], 4.5);
  EXPECT_EQ(r.min_doubles[2], -0.0);
  EXPECT_TRUE(std::signbit(r.min_doubles[2]));
  EXPECT_EQ(r.max_doubles[2], 3);

  const std::vector<std::int32_t> b{10, 20, 30};
  const std::vector<std::uint32_t> fk{0, 2, 2, 5, 1};
  JoinInput j;
  j.rows = fk.size();
  j.keys = fk.data();
  j.dim_rows = 3;
  j.dim_values = b.data();
  const JoinResult jr = join_cpu(j);
  EXPECT_EQ(jr.matched, 4);
  EXPECT_EQ(jr.sum_int, 90);
  EXPECT_THROW(check_join_input(j, SharedVariant::SortReduce), InputError);
  EXPECT_THROW(check_grouped_input(in, SharedVariant::Placement), InputError);
}

}  // namespace
}  // namespace gpuolap::groupby
