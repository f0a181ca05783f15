// The gpu engine's maps as byte images (gpu/map_images.hpp), read back on
// the host: the query's own map keeps every dimension that is not a total,
// with its CSR arrays; a lean map's packed form gives each base its part of
// the target number (position x stride) and its weight; phase 1's class
// map gives each relevant base its class; phase 2's map keeps the classes'
// lists.
#include "molap/planning/map_images.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "molap/random_cube.hpp"
#include "support/random_maps.hpp"

namespace gpuolap {
namespace {

template <class T>
std::vector<T> read(const gpu::ByteImage& image, uint32_t at, size_t n) {
  std::vector<T> out(n);
  if (n > 0) std::memcpy(out.data(), image.bytes.data() + at, n * sizeof(T));
  return out;
}

// The dimensions a kernel walks: those that are not totals.
std::vector<size_t> walked(const AggregationMap& map) {
  std::vector<size_t> dims;
  for (size_t d = 0; d < map.dimension_count(); ++d) {
    const DimensionMap& m = map.dimension(d);
    if (!gpu::is_total(m.offsets, m.positions, m.weights)) dims.push_back(d);
  }
  return dims;
}

TEST(MapImages, TheDirectMapKeepsTheWalkedDimensionsAndPacksLeanOnes) {
  int lean_maps = 0;
  testing::for_random_maps(30, 6, [&](const AggregationMap& map) {
    const gpu::MapImage image = gpu::direct_map_image(map);
    const std::vector<size_t> dims = walked(map);
    ASSERT_EQ(image.view.dims, static_cast<int>(dims.size()));
    bool single = true;
    for (size_t a = 0; a < dims.size(); ++a) {
      const DimensionMap& m = map.dimension(dims[a]);
      EXPECT_EQ(image.view.stride[a], map.stride(dims[a]));
      EXPECT_EQ(read<uint32_t>(image.image, image.view.offsets_at[a], m.offsets.size()), m.offsets);
      EXPECT_EQ(read<uint32_t>(image.image, image.view.positions_at[a], m.positions.size()), m.positions);
      EXPECT_EQ(read<double>(image.image, image.view.weights_at[a], m.weights.size()), m.weights);
      for (size_t b = 0; b + 1 < m.offsets.size(); ++b) single = single && m.offsets[b + 1] - m.offsets[b] <= 1;
    }
    EXPECT_EQ(image.view.single, single);
    EXPECT_EQ(gpu::direct_map_is_lean(map), image.is_lean());
    if (!image.is_lean() || !image.narrow) return;
    ++lean_maps;
    // The packed map: per walked dimension and base, position x stride
    // (kNoPosition outside the area); weights only where one is not 1.
    const auto parts = read<uint32_t>(image.lean_image, image.lean.positions_at, image.lean.entries);
    ASSERT_EQ(image.lean.dims, static_cast<int>(dims.size()));
    bool weighted = false;
    for (size_t a = 0; a < dims.size(); ++a) {
      const DimensionMap& m = map.dimension(dims[a]);
      EXPECT_EQ(image.lean.shift[a], map.codec().shift(dims[a]));
      EXPECT_EQ(image.lean.mask[a], map.codec().mask(dims[a]));
      const size_t bases = m.offsets.size() - 1;
      std::vector<double> weights(bases, 0.0);
      bool all_one = true;
      for (size_t b = 0; b < bases; ++b) {
        const uint32_t part = parts[image.lean.first[a] + b];
        if (m.offsets[b + 1] == m.offsets[b]) {
          EXPECT_EQ(part, gpu::kNoPosition) << "dimension " << dims[a] << " base " << b;
          continue;
        }
        EXPECT_EQ(part, uint64_t{m.positions[m.offsets[b]]} * map.stride(dims[a]))
            << "dimension " << dims[a] << " base " << b;
        weights[b] = m.weights[m.offsets[b]];
        all_one = all_one && weights[b] == 1.0;
      }
      if (all_one) {
        EXPECT_EQ(image.lean.weights_at[a], gpu::kNoWeights) << "dimension " << dims[a];
      } else {
        weighted = true;
        ASSERT_NE(image.lean.weights_at[a], gpu::kNoWeights) << "dimension " << dims[a];
        EXPECT_EQ(read<double>(image.lean_image, image.lean.weights_at[a], bases), weights);
      }
    }
    EXPECT_EQ(image.lean.weighted, weighted);
  });
  EXPECT_GT(lean_maps, 10);
}

TEST(MapImages, TheClassMapsGiveEachRelevantBaseItsClassAndEachClassItsList) {
  testing::for_random_maps(20, 4, [](const AggregationMap& map) {
    const gpu::TargetClasses classes = gpu::target_classes(map, uint64_t{1} << 40);
    // Phase 1: one target per relevant base, its class x the class stride.
    const gpu::MapImage phase1 = gpu::class_map_image(map, classes);
    EXPECT_TRUE(phase1.view.single);
    int a = 0;
    for (size_t d = 0; d < map.dimension_count(); ++d) {
      const std::vector<uint32_t>& class_of = classes.dims[d].class_of_base;
      bool total = true;  // every base in class 0: the class map leaves the dimension out
      for (uint32_t c : class_of) total = total && c == 0;
      if (total) continue;
      ASSERT_LT(a, phase1.view.dims);
      const auto offsets = read<uint32_t>(phase1.image, phase1.view.offsets_at[a], class_of.size() + 1);
      const auto positions = read<uint32_t>(phase1.image, phase1.view.positions_at[a], offsets.back());
      EXPECT_EQ(phase1.view.stride[a], classes.strides[d]);
      for (size_t b = 0; b < class_of.size(); ++b) {
        if (class_of[b] == gpu::kNoClass) {
          EXPECT_EQ(offsets[b + 1], offsets[b]) << "dimension " << d << " base " << b;
        } else {
          ASSERT_EQ(offsets[b + 1], offsets[b] + 1) << "dimension " << d << " base " << b;
          EXPECT_EQ(positions[offsets[b]], class_of[b]) << "dimension " << d << " base " << b;
        }
      }
      ++a;
    }
    EXPECT_EQ(phase1.view.dims, a);
    // Its packed form, where the class map is lean: class x stride per
    // base, no weights.
    if (phase1.is_lean()) {
      EXPECT_EQ(phase1.lean.dims, a);
      EXPECT_FALSE(phase1.lean.weighted);
      const auto parts = read<uint32_t>(phase1.lean_image, phase1.lean.positions_at, phase1.lean.entries);
      int l = 0;
      uint64_t largest = 0;
      for (size_t d = 0; d < map.dimension_count(); ++d) {
        const std::vector<uint32_t>& class_of = classes.dims[d].class_of_base;
        bool total = true;
        for (uint32_t c : class_of) total = total && c == 0;
        if (total) continue;
        EXPECT_EQ(phase1.lean.shift[l], map.codec().shift(d));
        EXPECT_EQ(phase1.lean.weights_at[l], gpu::kNoWeights);
        uint64_t most = 0;
        for (size_t b = 0; b < class_of.size(); ++b) {
          const uint64_t part = class_of[b] == gpu::kNoClass ? 0 : uint64_t{class_of[b]} * classes.strides[d];
          most = std::max(most, part);
          if (part >= gpu::kNoPosition) continue;
          EXPECT_EQ(parts[phase1.lean.first[l] + b], class_of[b] == gpu::kNoClass ? gpu::kNoPosition : part)
              << "dimension " << d << " base " << b;
        }
        largest += most;
        ++l;
      }
      EXPECT_EQ(phase1.narrow, largest < gpu::kNoPosition);
    }
    // Phase 2: each class's list, with the area's target strides.
    const gpu::ExpandImage phase2 = gpu::expand_image(map, classes);
    ASSERT_EQ(phase2.view.dims, static_cast<int>(map.dimension_count()));
    for (size_t d = 0; d < map.dimension_count(); ++d) {
      const gpu::DimensionClasses& c = classes.dims[d];
      const DimensionMap& m = map.dimension(d);
      EXPECT_EQ(phase2.view.class_stride[d], classes.strides[d]);
      EXPECT_EQ(phase2.view.target_stride[d], map.stride(d));
      // Class k's list: its representative's, in class order.
      std::vector<uint32_t> offsets{0}, positions;
      std::vector<double> weights;
      for (uint32_t r : c.representative) {
        const auto pos = m.positions_of(r);
        const auto w = m.weights_of(r);
        positions.insert(positions.end(), pos.begin(), pos.end());
        weights.insert(weights.end(), w.begin(), w.end());
        offsets.push_back(static_cast<uint32_t>(positions.size()));
      }
      EXPECT_EQ(read<uint32_t>(phase2.image, phase2.view.offsets_at[d], offsets.size()), offsets);
      EXPECT_EQ(read<uint32_t>(phase2.image, phase2.view.positions_at[d], positions.size()), positions);
      EXPECT_EQ(read<double>(phase2.image, phase2.view.weights_at[d], weights.size()), weights);
    }
  });
}

}  // namespace
}  // namespace gpuolap
