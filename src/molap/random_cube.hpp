#pragma once
// Random cubes for checking engines against the oracle (the tests and
// `gpuolap selfcheck`): random hierarchies (depth up to 5, shared children,
// weights such as 0.5, 2, -1 and 0), random sparse facts with some absent
// values, and random areas. Deterministic for a seed.
#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gpuolap/area_query.hpp"
#include "gpuolap/fact_table.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {

struct RandomCube {
  Schema schema;
  FactTable facts;
};

inline Dimension random_dimension(std::mt19937_64& rng, const std::string& name) {
  const double weights[] = {1.0, 1.0, 1.0, 0.5, 2.0, -1.0, 0.0, 0.25};
  std::uniform_int_distribution<int> base_count_dist(1, 40);
  const int bases = base_count_dist(rng);
  std::vector<ElementSpec> specs;
  std::vector<std::vector<std::string>> levels(1);
  for (int b = 0; b < bases; ++b) {
    specs.push_back({name + "_b" + std::to_string(b), {}});
    levels[0].push_back(specs.back().name);
  }
  const int depth = std::uniform_int_distribution<int>(1, 5)(rng);
  for (int level = 1; level < depth; ++level) {
    const int count = std::uniform_int_distribution<int>(1, 6)(rng);
    levels.emplace_back();
    for (int c = 0; c < count; ++c) {
      ElementSpec spec{name + "_l" + std::to_string(level) + "_" + std::to_string(c), {}};
      // Children from any lower level, so children are shared and levels mix.
      std::set<std::string> chosen;
      const int n_children = std::uniform_int_distribution<int>(1, 6)(rng);
      for (int k = 0; k < n_children; ++k) {
        const auto& pool = levels[std::uniform_int_distribution<size_t>(0, level - 1)(rng)];
        chosen.insert(pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)]);
      }
      for (const auto& child : chosen)
        spec.children.emplace_back(child, weights[std::uniform_int_distribution<int>(0, 7)(rng)]);
      levels.back().push_back(spec.name);
      specs.push_back(std::move(spec));
    }
  }
  // Declare in random order: children may come before or after parents.
  std::shuffle(specs.begin(), specs.end(), rng);
  return Dimension::build(name, specs, "random dimension " + name);
}

inline RandomCube random_cube(uint64_t seed, size_t page_size = 64) {
  std::mt19937_64 rng(seed);
  const int k = std::uniform_int_distribution<int>(1, 5)(rng);
  std::vector<Dimension> dims;
  for (int d = 0; d < k; ++d) dims.push_back(random_dimension(rng, "D" + std::to_string(d)));
  Schema schema("random", std::move(dims), {"M0", "M1"}, "random cube");

  double cells = schema.base_cell_count();
  const size_t wanted = static_cast<size_t>(std::min(cells * 0.3, 3000.0)) + 1;
  std::set<uint64_t> keys;
  std::vector<uint32_t> ids(schema.dimension_count());
  for (size_t i = 0; i < wanted * 2 && keys.size() < wanted; ++i) {
    for (size_t d = 0; d < ids.size(); ++d)
      ids[d] = std::uniform_int_distribution<uint32_t>(0, schema.dimension(d).base_count() - 1)(rng);
    keys.insert(schema.codec().encode(ids));
  }
  std::vector<std::vector<double>> values(2);
  std::uniform_int_distribution<int> value_dist(-1000, 1000);
  for (size_t i = 0; i < keys.size(); ++i) {
    values[0].push_back(value_dist(rng) / 8.0);
    // M1 is sometimes absent, and sometimes a large magnitude.
    const int r = std::uniform_int_distribution<int>(0, 9)(rng);
    values[1].push_back(r == 0 ? kNoValue : (r == 1 ? value_dist(rng) * 1e6 : value_dist(rng) * 0.01));
  }
  FactTable facts(schema.codec(), std::vector<uint64_t>(keys.begin(), keys.end()), std::move(values),
                  page_size);
  return RandomCube{std::move(schema), std::move(facts)};
}

// The cube's cells with one measure of the given values (one a cell):
// data whose sums need another grid.
inline FactTable with_values(const RandomCube& cube, std::vector<double> values) {
  return FactTable(cube.schema.codec(), std::vector<uint64_t>(cube.facts.keys().begin(), cube.facts.keys().end()),
                   {std::move(values)}, cube.facts.page_size());
}

inline AreaQuery random_query(std::mt19937_64& rng, const Schema& schema) {
  AreaQuery q;
  q.measure = std::uniform_int_distribution<size_t>(0, schema.measures().size() - 1)(rng);
  q.aggregate = static_cast<Aggregate>(std::uniform_int_distribution<int>(0, 4)(rng));
  for (const Dimension& dim : schema.dimensions()) {
    std::vector<ElementId> list;
    if (std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
      for (ElementId e = 0; e < dim.element_count(); ++e) list.push_back(e);
    } else {
      const int n = std::uniform_int_distribution<int>(1, 6)(rng);
      for (int i = 0; i < n; ++i)
        list.push_back(std::uniform_int_distribution<ElementId>(0, dim.element_count() - 1)(rng));
    }
    q.area.push_back(std::move(list));
  }
  return q;
}

}  // namespace gpuolap
