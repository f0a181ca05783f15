// The several-GPU engine's plain parts (no GPU needed): the facts cut into
// slices (FactTable::split), the parts of a query merged (merge_parts), and
// --gpus parsed. The engine itself is tested on a GPU (tests/gpu/).
#include <gtest/gtest.h>

#include <map>

#include <random>

#include "gpuolap/error.hpp"
#include "gpuolap/gpu_options.hpp"
#include "molap/cpu_engines.hpp"
#include "molap/planning/part_merge.hpp"
#include "molap/random_cube.hpp"
#include "molap/result_check.hpp"

namespace gpuolap {
namespace {

// A table of `n` keys 0, 3, 6, ... in pages of `page` cells.
FactTable table_of(size_t n, size_t page) {
  const KeyCodec codec({20}, {"d"}, "test");
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = 3 * i;
  return FactTable(codec, keys, {std::vector<double>(n, 1.0)}, page);
}

TEST(FactSplit, WholePagesBalancedAndEveryKeyOwnedOnce) {
  for (const size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{64}, size_t{1000}, size_t{1001}})
    for (const size_t parts : {size_t{1}, size_t{2}, size_t{3}, size_t{4}, size_t{8}}) {
      const FactTable t = table_of(n, 16);
      const std::vector<FactSlice> slices = t.split(parts);
      ASSERT_FALSE(slices.empty());
      EXPECT_EQ(slices.size(), std::max<size_t>(1, std::min(parts, t.page_count()))) << n << " cells, " << parts;
      EXPECT_EQ(slices.front().begin, 0u);
      EXPECT_EQ(slices.back().end, n);
      size_t largest = 0, smallest = SIZE_MAX;
      for (size_t i = 0; i < slices.size(); ++i) {
        const FactSlice& s = slices[i];
        EXPECT_EQ(s.begin % 16, 0u) << "slice " << i << " starts inside a page";
        if (i > 0) {
          EXPECT_EQ(s.begin, slices[i - 1].end);
        }
        largest = std::max(largest, s.end - s.begin);
        smallest = std::min(smallest, s.end - s.begin);
        // Its own cells are its own.
        for (size_t c = s.begin; c < s.end; ++c) EXPECT_TRUE(s.owns(t.keys()[c])) << "cell " << c << " slice " << i;
      }
      if (n > 0) {
        EXPECT_LE(largest - smallest, 16u) << "unbalanced by more than a page";
      }
      // Every key, filled or not (a later write), has exactly one owner.
      for (uint64_t key = 0; key < 3 * n + 5; ++key) {
        int owners = 0;
        for (const FactSlice& s : slices) owners += s.owns(key);
        EXPECT_EQ(owners, 1) << "key " << key << " of " << n << " cells in " << parts << " parts";
      }
      int owners_of_max = 0;
      for (const FactSlice& s : slices) owners_of_max += s.owns(UINT64_MAX);
      EXPECT_EQ(owners_of_max, 1);
    }
}

// A random query answered over slices of the facts, each by cpu-serial (a
// sum or avg as exact sums on the whole table's grid, as the gpu engine's
// parts are), and merged, equals the answer over all the facts to the bit.
TEST(MergeParts, PartsOverSlicesMergeToTheWholeAnswer) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    RandomCube cube = random_cube(seed, 1 + seed % 13);
    std::mt19937_64 rng(seed);
    const size_t parts = 1 + seed % 4;
    const std::vector<FactSlice> slices = cube.facts.split(parts);
    for (int q = 0; q < 6; ++q) {
      const AreaQuery query = random_query(rng, cube.schema);
      const AggregationMap map(cube.schema, query);
      const AreaResult want = CpuSerialEngine().run(cube.facts, map, query);
      const SumGrid grid = map.sum_grid(cube.facts, query.measure);
      std::vector<QueryPart> got;
      for (const FactSlice& s : slices) {
        std::vector<uint64_t> keys(cube.facts.keys().begin() + s.begin, cube.facts.keys().begin() + s.end);
        std::vector<std::vector<double>> values;
        for (size_t m = 0; m < cube.facts.measure_count(); ++m)
          values.emplace_back(cube.facts.values(m).begin() + s.begin, cube.facts.values(m).begin() + s.end);
        const FactTable part(cube.schema.codec(), keys, values, cube.facts.page_size());
        QueryPart p;
        if (query.aggregate == Aggregate::avg) {
          AreaQuery sums = query, counts = query;
          sums.aggregate = Aggregate::sum;
          counts.aggregate = Aggregate::count;
          p.result = CpuSerialEngine().run(part, map, sums);
          p.counts = CpuSerialEngine().run(part, map, counts).values;
        } else {
          p.result = CpuSerialEngine().run(part, map, query);
        }
        if (query.aggregate == Aggregate::sum || query.aggregate == Aggregate::avg) {
          std::map<uint64_t, ExactSum> sums;
          for (size_t i = 0; i < part.size(); ++i)
            if (has_value(part.values(query.measure)[i]))
              map.for_each_target(part.keys()[i], [&](uint64_t t, double w) {
                sums[t].add_product(part.values(query.measure)[i], w, grid);
              });
          for (const auto& [t, s] : sums) p.sums.push_back(s);
          ASSERT_EQ(p.sums.size(), p.result.targets.size());
        }
        got.push_back(std::move(p));
      }
      const AreaResult merged = merge_parts(got, query.aggregate, grid);
      EXPECT_EQ(compare_results(want, merged),
                "")
          << "seed " << seed << " query " << q << " " << aggregate_name(query.aggregate) << " in " << slices.size()
          << " parts";
    }
  }
}

TEST(MergeParts, CombinesEachAggregate) {
  const auto parts = [](std::vector<double> a_values, std::vector<double> b_values) {
    std::vector<QueryPart> p(2);
    p[0].result = {{1, 4, 9}, std::move(a_values)};
    p[1].result = {{0, 4, 9, 12}, std::move(b_values)};
    return p;
  };
  auto p = parts({1, 2, 3}, {10, 20, 30, 40});
  EXPECT_EQ(merge_parts(p, Aggregate::sum).values, (std::vector<double>{10, 1, 22, 33, 40}));
  p = parts({1, 2, 3}, {10, -20, 30, 40});
  const AreaResult lows = merge_parts(p, Aggregate::min);
  EXPECT_EQ(lows.targets, (std::vector<uint64_t>{0, 1, 4, 9, 12}));
  EXPECT_EQ(lows.values, (std::vector<double>{10, 1, -20, 3, 40}));
  p = parts({1, 2, 3}, {10, -20, 30, 40});
  EXPECT_EQ(merge_parts(p, Aggregate::max).values, (std::vector<double>{10, 1, 2, 30, 40}));
  p = parts({2, 6, 3}, {10, 2, 9, 4});
  p[0].counts = {1, 2, 3};
  p[1].counts = {5, 2, 3, 4};
  EXPECT_EQ(merge_parts(p, Aggregate::avg).values, (std::vector<double>{2, 2, 2, 2, 1}));
  std::vector<QueryPart> mismatched(1);
  mismatched[0].result = {{1, 2}, {1.0}};
  EXPECT_THROW(merge_parts(mismatched, Aggregate::sum), std::logic_error);
}

// Four parts at once, as on four GPUs: one empty, the largest target id
// (whose head looks like an exhausted part's), disjoint and shared targets.
TEST(MergeParts, MergesManyPartsIncludingEmptyOnesAndTheLargestTarget) {
  std::vector<QueryPart> p(5);
  p[0].result = {{2, 5, UINT64_MAX}, {1, 1, 1}};
  p[1].result = {{}, {}};
  p[2].result = {{0, 5}, {2, 2}};
  p[3].result = {{UINT64_MAX}, {4}};
  p[4].result = {{1, 2, 3}, {8, 8, 8}};
  const AreaResult sums = merge_parts(p, Aggregate::sum);
  EXPECT_TRUE(p.empty()) << "the parts are consumed";
  EXPECT_EQ(sums.targets, (std::vector<uint64_t>{0, 1, 2, 3, 5, UINT64_MAX}));
  EXPECT_EQ(sums.values, (std::vector<double>{2, 8, 9, 8, 3, 5}));
  std::vector<QueryPart> empty(3);
  EXPECT_TRUE(merge_parts(empty, Aggregate::max).targets.empty());
  std::vector<QueryPart> none;
  EXPECT_TRUE(merge_parts(none, Aggregate::sum).targets.empty());
}

TEST(GpuSet, ParsesAllAndDeviceListsAndNamesTheFlagOnBadInput) {
  EXPECT_TRUE(parse_gpu_set("all", "--gpus").all);
  EXPECT_EQ(parse_gpu_set("0,1,3", "--gpus").devices, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(parse_gpu_set("0,0", "--gpus").devices, (std::vector<int>{0, 0}));
  EXPECT_EQ(gpu_set_name(parse_gpu_set("2,0", "--gpus")), "2,0");
  EXPECT_EQ(gpu_set_name(GpuSet{}), "auto");
  for (const char* bad : {"", ",", "0,", "a", "-1", "1,,2", "0x1", "99999", "All"}) {
    try {
      parse_gpu_set(bad, "--gpus");
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--gpus"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace gpuolap
