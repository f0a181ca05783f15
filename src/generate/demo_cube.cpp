// The embedded demo: a small sales cube, so the main job needs no input.
//   Years:    All Years -> 2023..2025 -> quarters -> months ("2024-03")
//   Products: All Products -> Bikes, Parts, Clothing -> products; plus
//             "Top Sellers", which shares products across groups (a DAG)
//   Regions:  World -> Europe, Americas, Asia -> countries
//   Measures: Revenue, Units
#include <fmt/format.h>


#include "gpuolap/generate.hpp"
#include "fact_sampler.hpp"

namespace gpuolap {

namespace {

using Tree = std::vector<ElementSpec>;

ElementSpec node(std::string name, std::vector<std::string> children) {
  ElementSpec spec{std::move(name), {}};
  for (auto& c : children) spec.children.emplace_back(std::move(c), 1.0);
  return spec;
}

Dimension years_dimension() {
  Tree t;
  std::vector<std::string> years;
  for (int y = 2023; y <= 2025; ++y) {
    std::vector<std::string> quarters;
    for (int q = 1; q <= 4; ++q) {
      std::vector<std::string> months;
      for (int m = 3 * q - 2; m <= 3 * q; ++m) {
        months.push_back(fmt::format("{}-{:02}", y, m));
        t.push_back(node(months.back(), {}));
      }
      quarters.push_back(fmt::format("{} Q{}", y, q));
      t.push_back(node(quarters.back(), months));
    }
    years.push_back(std::to_string(y));
    t.push_back(node(years.back(), quarters));
  }
  t.push_back(node("All Years", years));
  return Dimension::build("Years", t, "demo: dimension 'Years'");
}

// A dimension of groups of base elements under one top element, followed by
// any extra consolidated elements.
Dimension grouped_dimension(const std::string& name, const std::string& top,
                            const std::vector<std::pair<std::string, std::vector<std::string>>>& groups,
                            const Tree& extra = {}) {
  Tree t;
  std::vector<std::string> group_names;
  for (const auto& [group, members] : groups) {
    for (const auto& m : members) t.push_back(node(m, {}));
    t.push_back(node(group, members));
    group_names.push_back(group);
  }
  t.push_back(node(top, group_names));
  t.insert(t.end(), extra.begin(), extra.end());
  return Dimension::build(name, t, "demo: dimension '" + name + "'");
}

Dimension products_dimension() {
  return grouped_dimension("Products", "All Products",
                           {{"Bikes", {"City Bike", "Mountain Bike", "Road Bike", "E-Bike"}},
                            {"Parts", {"Wheel", "Saddle", "Chain", "Brake"}},
                            {"Clothing", {"Helmet", "Jersey", "Gloves", "Shorts"}}},
                           // Shares products with the groups: the hierarchy is a DAG.
                           {node("Top Sellers", {"E-Bike", "Helmet", "Chain"})});
}

Dimension regions_dimension() {
  return grouped_dimension("Regions", "World",
                           {{"Europe", {"Germany", "France", "Italy"}},
                            {"Americas", {"United States", "Brazil", "Canada"}},
                            {"Asia", {"Japan", "India"}}});
}

}  // namespace

GeneratedCube generate_demo(uint64_t seed) {
  std::vector<Dimension> dims;
  dims.push_back(years_dimension());
  dims.push_back(products_dimension());
  dims.push_back(regions_dimension());
  Schema schema("Sales", std::move(dims), {"Revenue", "Units"}, "demo");

  // About 40 % of the base cells are filled; prices depend on the product.
  const Dimension& years = schema.dimension(0);
  const Dimension& products = schema.dimension(1);
  const Dimension& regions = schema.dimension(2);
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(2);
  uint64_t index = 0;
  for (uint32_t y = 0; y < years.base_count(); ++y)
    for (uint32_t p = 0; p < products.base_count(); ++p)
      for (uint32_t r = 0; r < regions.base_count(); ++r) {
        const uint64_t h = generate_detail::mix(seed, index++);
        if (h % 100 >= 40) continue;
        const uint32_t ids[3] = {y, p, r};
        keys.push_back(schema.codec().encode(ids));
        const double units = static_cast<double>(1 + (h >> 8) % 50);
        const double price = (p < 4 ? 900.0 : 40.0) + static_cast<double>(p * 15);
        values[0].push_back(units * price);
        values[1].push_back(units);
      }
  // Keys are generated in key order already (first dimension slowest).
  FactTable facts(schema.codec(), std::move(keys), std::move(values));

  std::vector<NamedQuery> queries{
      {"revenue_by_year_and_group",
       R"({"measure": "Revenue", "aggregate": "sum",
  "area": {"Years": ["2023", "2024", "2025", "All Years"],
           "Products": ["Bikes", "Parts", "Clothing", "Top Sellers", "All Products"],
           "Regions": ["World"]}})"},
      {"units_by_quarter_2025_europe",
       R"({"measure": "Units", "aggregate": "sum",
  "area": {"Years": ["2025 Q1", "2025 Q2", "2025 Q3", "2025 Q4"],
           "Products": ["All Products"],
           "Regions": ["Germany", "France", "Italy", "Europe"]}})"},
      {"average_bike_revenue_by_region",
       R"({"measure": "Revenue", "aggregate": "avg",
  "area": {"Years": ["All Years"], "Products": ["Bikes"], "Regions": ["Europe", "Americas", "Asia"]}})"},
      {"largest_order_per_product_2024",
       R"({"measure": "Revenue", "aggregate": "max",
  "area": {"Years": ["2024"], "Products": ["City Bike", "Mountain Bike", "Road Bike", "E-Bike"],
           "Regions": ["World"]}})"},
      {"filled_cells_per_year",
       R"({"measure": "Units", "aggregate": "count",
  "area": {"Years": ["2023", "2024", "2025"], "Products": ["All Products"], "Regions": ["World"]}})"},
  };
  return GeneratedCube{std::move(schema), std::move(facts), std::move(queries)};
}

}  // namespace gpuolap
