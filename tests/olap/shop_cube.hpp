#pragma once
// A small cube whose answers are checked by hand, shared by the olap and the
// server tests. Product: All = a + 2 b; Pair = a + c; Diff = a - c.
// Year: Y = 2024 + 2025. Measures Sales and Units; the filled cells are
// (a,2024) 10 / 1 unit, (b,2024) 20, (a,2025) 30, (c,2025) 5.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "gpuolap/cube.hpp"
#include "gpuolap/formats.hpp"

namespace gpuolap::testing {

inline const char* kShopSchema = R"({"name": "Shop", "dimensions": [
  {"name": "Product", "elements": [
     {"name": "All", "children": [{"name": "a"}, {"name": "b", "weight": 2}]},
     {"name": "Pair", "children": [{"name": "a"}, {"name": "c"}]},
     {"name": "a"}, {"name": "b"}, {"name": "c"},
     {"name": "Diff", "children": [{"name": "a"}, {"name": "c", "weight": -1}]}]},
  {"name": "Year", "elements": [{"name": "Y", "children": [{"name": "2024"}, {"name": "2025"}]},
                                {"name": "2024"}, {"name": "2025"}]}],
  "measures": ["Sales", "Units"]})";

inline Cube shop_cube() {
  Schema s = parse_schema_json(kShopSchema, "shop schema");
  auto key = [&](uint32_t p, uint32_t y) {
    const uint32_t ids[] = {p, y};
    return s.codec().encode(ids);
  };
  std::vector<std::pair<uint64_t, std::pair<double, double>>> cells{
      {key(0, 0), {10, 1}}, {key(1, 0), {20, kNoValue}}, {key(0, 1), {30, kNoValue}}, {key(2, 1), {5, kNoValue}}};
  std::sort(cells.begin(), cells.end());
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(2);
  for (const auto& [k, v] : cells) {
    keys.push_back(k);
    values[0].push_back(v.first);
    values[1].push_back(v.second);
  }
  FactTable facts(s.codec(), keys, values);
  return Cube{std::move(s), std::move(facts)};
}

}  // namespace gpuolap::testing
