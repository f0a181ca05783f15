// The "biker" cube: a sales cube of the shape of the thesis' Biker cube
// (olap-aggregation-cuda-dynamic-parallelism, section 5.1) with its queries
// B1-B3: 8 dimensions, 6.68e12 base cells, 281,057,088 facts at scale 1
// (0.0042 % filled), measures Revenue and Units.
//
// Dimensions, in key order (base elements / all elements):
//   Datatypes    Actual, Budget; Variance = Actual - Budget            2 / 3
//   Years        All Years -> 2015..2024                              10 / 11
//   Months       Full Year -> H1, H2 -> Q1..Q4 -> Jan..Dec            12 / 19
//   Channels     All Channels -> the 8 channels; groups Direct,        8 / 12
//                Indirect, Online, where "Click & Collect" is both
//                Direct and Online and "Marketplace" both Indirect and
//                Online (All Channels lists the 8 channels directly, so
//                every channel has weight 1 under it)
//   Products     All Products -> Bikes, Components, Clothing -> 12      80 / 97
//                product lines -> 72 products; Accessories -> 8
//                products (no line)
//   Customers    All Customers -> 3 regions -> 12 countries ->        3624 / 3640
//                customers
//   Salespeople  All Salespeople -> 8 teams -> 120 reps                120 / 129
//   Promotions   All Promotions -> No Promotion, Discounts, Bundles,   100 / 104
//                Events -> 99 campaigns
// 2 * 10 * 12 * 8 * 80 * 3624 * 120 * 100 = 6,679,756,800,000 base cells.
//
// Queries (every fact is relevant to all three; "updates" = (fact, target)
// contributions, the thesis' #atomicAdd without preaggregation, table 5.2):
//   B1  Variance x every other dimension's total: 1 target, 1 update a fact.
//   B2  [Actual, Budget, Variance] x Months "*" x [All Channels, Direct,
//       Indirect, Online], totals elsewhere: 3 * 19 * 4 = 228 targets.
//       A fact reaches 2 datatypes * 4 months elements (month, quarter,
//       half, year) * 2 or 3 channel elements (3 for the two channels in
//       two groups), so updates = 16 N + 8 D, D = facts in those channels.
//       The thesis' 5,021,960,992 updates for N = 281,057,088 give
//       D = 65,630,948 (23.4 % of the facts; 2 of 8 channels would be 25 %).
//   B3  [Actual, Budget, Variance] x [Full Year, Q1..Q4] x Products "*" x
//       the 12 countries, totals elsewhere: 3 * 5 * 97 * 12 = 17,460
//       targets. A fact reaches 2 * 2 * (4 product elements - product, line,
//       group, total - or 3 for an accessory), so updates = 12 N + 4 L,
//       L = facts of products under a line. The thesis' 4,262,699,168
//       updates give L = 222,503,528 = 19/24 N.
// At scale s the fact count N, D and L are round(s * thesis count), so the
// updates per fact stay those of the thesis (exactly at s = 1).
//
// Placement: facts are drawn uniformly and distinct from 15,360 strata, one
// per (datatype, quarter, product, country, channel class), channel class
// being the 6 channels in one group or the 2 in two groups. The four classes
// (line product or accessory) x (one group or two) get their exact counts
// (whose margins are L and D), and each class's count is split over its
// strata in proportion to their number of cells. Every target of B3 is
// reached as soon as each (datatype, quarter, product, country) has a fact:
// the larger quota of its two strata reaches 1 at scale 8.5e-5, so from there
// on the counts hold for every seed (they do from 7e-5 in fact). B2's 72
// finest cells (datatype, month, channel group) each get over 1 % of the
// facts, so its 228 targets are all reached at any of these scales.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "fact_sampler.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/generate.hpp"

namespace gpuolap {

namespace {

using generate_detail::BaseSet;
using generate_detail::Stratum;
using json = nlohmann::ordered_json;

constexpr uint64_t kFacts = 281'057'088;
constexpr uint64_t kTwoGroupChannelFacts = 65'630'948;  // D above
constexpr uint64_t kLineProductFacts = 222'503'528;     // L above

// Element specs of one dimension, collected top-down.
class Tree {
 public:
  void add(std::string name, const std::vector<std::string>& children = {}, double weight = 1.0) {
    ElementSpec spec{std::move(name), {}};
    for (const std::string& c : children) spec.children.emplace_back(c, weight);
    specs_.push_back(std::move(spec));
  }
  void add_weighted(std::string name, std::vector<std::pair<std::string, double>> children) {
    specs_.push_back(ElementSpec{std::move(name), std::move(children)});
  }
  Dimension build(const std::string& name) const {
    return Dimension::build(name, specs_, fmt::format("biker: dimension '{}'", name));
  }

 private:
  std::vector<ElementSpec> specs_;
};

Dimension datatypes() {
  Tree t;
  t.add("Actual");
  t.add("Budget");
  t.add_weighted("Variance", {{"Actual", 1.0}, {"Budget", -1.0}});
  return t.build("Datatypes");
}

Dimension years() {
  std::vector<std::string> names;
  for (int y = 2015; y <= 2024; ++y) names.push_back(std::to_string(y));
  Tree t;
  t.add("All Years", names);
  for (const auto& y : names) t.add(y);
  return t.build("Years");
}

const std::vector<std::string> kMonthNames{"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

Dimension months() {
  Tree t;
  t.add("Full Year", {"H1", "H2"});
  t.add("H1", {"Q1", "Q2"});
  t.add("H2", {"Q3", "Q4"});
  for (int q = 0; q < 4; ++q)
    t.add(fmt::format("Q{}", q + 1),
          {kMonthNames[3 * q], kMonthNames[3 * q + 1], kMonthNames[3 * q + 2]});
  for (const auto& m : kMonthNames) t.add(m);
  return t.build("Months");
}

// Base channels in base-id order; the last two are in two channel groups.
const std::vector<std::string> kChannels{"Own Stores",      "Field Sales",  "Corporate Sales",
                                         "Dealers",         "Distributors", "Web Shop",
                                         "Click & Collect", "Marketplace"};

Dimension channels() {
  Tree t;
  t.add("All Channels", kChannels);
  t.add("Direct", {"Own Stores", "Field Sales", "Corporate Sales", "Click & Collect"});
  t.add("Indirect", {"Dealers", "Distributors", "Marketplace"});
  t.add("Online", {"Web Shop", "Click & Collect", "Marketplace"});
  for (const auto& c : kChannels) t.add(c);
  return t.build("Channels");
}

struct ProductLine {
  const char* group;
  const char* line;     // nullptr: the group's products hang directly under it
  const char* product;  // model name stem
  double price;         // list price of the first model
};

// Line products first, then accessories, so line products are base ids 0..71.
const std::vector<ProductLine> kProductLines{
    {"Bikes", "Mountain Bikes", "Mountain", 900}, {"Bikes", "Road Bikes", "Road", 1100},
    {"Bikes", "Touring Bikes", "Touring", 1000},  {"Bikes", "City Bikes", "City", 600},
    {"Bikes", "E-Bikes", "E-Bike", 2400},         {"Components", "Frames", "Frame", 350},
    {"Components", "Wheels", "Wheel", 180},       {"Components", "Drivetrains", "Drivetrain", 220},
    {"Components", "Brakes", "Brake", 90},        {"Clothing", "Jerseys", "Jersey", 60},
    {"Clothing", "Shorts", "Shorts", 45},         {"Clothing", "Jackets", "Jacket", 120}};
constexpr int kModelsPerLine = 6;
const std::vector<std::pair<std::string, double>> kAccessories{
    {"Helmet", 55},    {"Bottle Cage", 12}, {"Bike Lock", 35},      {"Pump", 25},
    {"Light Set", 40}, {"Tire Tube", 8},    {"Hydration Pack", 65}, {"Bike Stand", 90}};
constexpr uint32_t kLineProducts = 72;  // 12 lines * 6 models

Dimension products(std::vector<double>& prices) {
  Tree t;
  t.add("All Products", {"Bikes", "Components", "Clothing", "Accessories"});
  for (const char* group : {"Bikes", "Components", "Clothing"}) {
    std::vector<std::string> lines;
    for (const ProductLine& l : kProductLines)
      if (std::string(l.group) == group) lines.push_back(l.line);
    t.add(group, lines);
  }
  std::vector<std::string> accessories;
  for (const auto& [name, _] : kAccessories) accessories.push_back(name);
  t.add("Accessories", accessories);
  for (const ProductLine& l : kProductLines) {
    std::vector<std::string> models;
    for (int m = 0; m < kModelsPerLine; ++m)
      models.push_back(fmt::format("{}-{}", l.product, 100 * (m + 1)));
    t.add(l.line, models);
    for (int m = 0; m < kModelsPerLine; ++m) {
      t.add(models[m]);
      prices.push_back(l.price * (1.0 + 0.2 * m));
    }
  }
  for (const auto& [name, price] : kAccessories) {
    t.add(name);
    prices.push_back(price);
  }
  return t.build("Products");
}

struct Country {
  const char* region;
  const char* name;
  const char* code;
  uint32_t customers;
};
const std::vector<Country> kCountries{
    {"Europe", "Germany", "DE", 480},         {"Europe", "France", "FR", 360},
    {"Europe", "United Kingdom", "GB", 400},  {"Europe", "Italy", "IT", 240},
    {"Europe", "Spain", "ES", 200},           {"Europe", "Netherlands", "NL", 160},
    {"Americas", "United States", "US", 760}, {"Americas", "Canada", "CA", 240},
    {"Americas", "Brazil", "BR", 160},        {"Asia Pacific", "Japan", "JP", 280},
    {"Asia Pacific", "Australia", "AU", 200}, {"Asia Pacific", "China", "CN", 144}};

Dimension customers() {
  Tree t;
  const std::vector<std::string> regions{"Europe", "Americas", "Asia Pacific"};
  t.add("All Customers", regions);
  for (const auto& r : regions) {
    std::vector<std::string> countries;
    for (const Country& c : kCountries)
      if (r == c.region) countries.push_back(c.name);
    t.add(r, countries);
  }
  for (const Country& c : kCountries) {
    std::vector<std::string> names;
    for (uint32_t i = 1; i <= c.customers; ++i) names.push_back(fmt::format("{}-{:04}", c.code, i));
    t.add(c.name, names);
    for (const auto& n : names) t.add(n);
  }
  return t.build("Customers");
}

Dimension salespeople() {
  const std::vector<std::string> teams{"Team North",   "Team South",   "Team East",    "Team West",
                                       "Team Central", "Key Accounts", "Inside Sales", "Export"};
  Tree t;
  t.add("All Salespeople", teams);
  int rep = 1;
  for (const auto& team : teams) {
    std::vector<std::string> reps;
    for (int i = 0; i < 15; ++i) reps.push_back(fmt::format("Rep {:03}", rep++));
    t.add(team, reps);
    for (const auto& r : reps) t.add(r);
  }
  return t.build("Salespeople");
}

Dimension promotions() {
  const std::vector<std::pair<std::string, std::string>> kinds{
      {"Discounts", "Discount"}, {"Bundles", "Bundle"}, {"Events", "Event"}};
  Tree t;
  t.add("All Promotions", {"No Promotion", "Discounts", "Bundles", "Events"});
  t.add("No Promotion");
  for (const auto& [kind, stem] : kinds) {
    std::vector<std::string> campaigns;
    for (int i = 1; i <= 33; ++i) campaigns.push_back(fmt::format("{} {:02}", stem, i));
    t.add(kind, campaigns);
    for (const auto& c : campaigns) t.add(c);
  }
  return t.build("Promotions");
}

std::string query_json(const std::string& measure,
                       const std::vector<std::pair<std::string, json>>& area) {
  json q;
  q["measure"] = measure;
  q["aggregate"] = "sum";
  q["area"] = json::object();
  for (const auto& [dim, list] : area) q["area"][dim] = list;
  return q.dump();
}

// The facts' strata, with exact counts (see the comment at the top).
std::vector<Stratum> biker_strata(double scale) {
  const uint64_t n = generate_detail::scaled_count(scale, kFacts);
  const uint64_t two_group = generate_detail::scaled_count(scale, kTwoGroupChannelFacts);
  const uint64_t line = generate_detail::scaled_count(scale, kLineProductFacts);
  // Class counts with margins `line` and `two_group`, the two properties
  // independent of each other.
  const uint64_t line_two =
      n == 0 ? 0 : static_cast<uint64_t>(std::llround(static_cast<double>(line) * two_group / n));
  // class index = 2 * (accessory ? 1 : 0) + (two groups ? 1 : 0)
  const uint64_t class_count[4] = {line - line_two, line_two, n - line - two_group + line_two,
                                   two_group - line_two};

  auto one_group =
      std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
  auto two_groups = std::make_shared<const std::vector<uint32_t>>(std::vector<uint32_t>{6, 7});
  const uint32_t products = kLineProducts + static_cast<uint32_t>(kAccessories.size());

  std::vector<Stratum> strata;
  std::vector<std::vector<size_t>> members(4);
  std::vector<std::vector<double>> weights(4);
  for (uint32_t datatype = 0; datatype < 2; ++datatype)
    for (uint32_t quarter = 0; quarter < 4; ++quarter)
      for (uint32_t product = 0; product < products; ++product) {
        uint32_t first_customer = 0;
        for (const Country& country : kCountries) {
          for (int two = 0; two < 2; ++two) {
            Stratum s;
            s.dims = {
                BaseSet::single(datatype),      BaseSet::range(0, 10),
                BaseSet::range(3 * quarter, 3), BaseSet::list(two ? two_groups : one_group),
                BaseSet::single(product),       BaseSet::range(first_customer, country.customers),
                BaseSet::range(0, 120),         BaseSet::range(0, 100)};
            const int cls = 2 * (product >= kLineProducts ? 1 : 0) + two;
            members[cls].push_back(strata.size());
            weights[cls].push_back(static_cast<double>(country.customers) * s.dims[3].size());
            strata.push_back(std::move(s));
          }
          first_customer += country.customers;
        }
      }
  for (int cls = 0; cls < 4; ++cls) {
    const std::vector<uint64_t> counts = generate_detail::apportion(class_count[cls], weights[cls]);
    for (size_t i = 0; i < counts.size(); ++i) strata[members[cls][i]].count = counts[i];
  }
  return strata;
}

}  // namespace

GeneratedCube generate_biker(double scale, uint64_t seed, const ProgressFn& progress) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw InputError(fmt::format("biker: the scale must be a positive number, not {}", scale));

  std::vector<double> prices;
  std::vector<Dimension> dims;
  dims.push_back(datatypes());
  dims.push_back(years());
  dims.push_back(months());
  dims.push_back(channels());
  dims.push_back(products(prices));
  dims.push_back(customers());
  dims.push_back(salespeople());
  dims.push_back(promotions());
  Schema schema("Biker", std::move(dims), {"Revenue", "Units"}, "biker");

  std::vector<uint64_t> keys =
      generate_detail::sample_keys(schema.codec(), biker_strata(scale), seed, progress);

  // Units: 1..24 per order line; revenue: units times the list price, less a
  // discount of up to 30 %, in cents.
  const KeyCodec& codec = schema.codec();
  const uint64_t value_seed = generate_detail::splitmix64(seed ^ 0x62696b65722d7673ULL);
  std::vector<double> units = generate_detail::fill_column(keys.size(), [&](size_t i) {
    return 1.0 + generate_detail::below(generate_detail::mix(value_seed, keys[i]), 24);
  });
  std::vector<double> revenue = generate_detail::fill_column(keys.size(), [&](size_t i) {
    const double discount =
        0.3 * generate_detail::unit_interval(generate_detail::mix(~value_seed, keys[i]));
    return generate_detail::round_cents(units[i] * prices[codec.decode(keys[i], 4)] *
                                        (1.0 - discount));
  });
  std::vector<std::vector<double>> columns;
  columns.push_back(std::move(revenue));
  columns.push_back(std::move(units));
  FactTable facts(codec, std::move(keys), std::move(columns));

  std::vector<std::string> countries;
  for (const Country& c : kCountries) countries.push_back(c.name);
  auto area = [&](json datatypes, json months, json channels, json products, json customers) {
    return std::vector<std::pair<std::string, json>>{{"Datatypes", std::move(datatypes)},
                                                     {"Years", json{"All Years"}},
                                                     {"Months", std::move(months)},
                                                     {"Channels", std::move(channels)},
                                                     {"Products", std::move(products)},
                                                     {"Customers", std::move(customers)},
                                                     {"Salespeople", json{"All Salespeople"}},
                                                     {"Promotions", json{"All Promotions"}}};
  };
  const json all_datatypes{"Actual", "Budget", "Variance"};
  std::vector<NamedQuery> queries{
      {"B1", query_json("Revenue", area(json{"Variance"}, json{"Full Year"}, json{"All Channels"},
                                        json{"All Products"}, json{"All Customers"}))},
      {"B2", query_json("Revenue", area(all_datatypes, "*",
                                        json{"All Channels", "Direct", "Indirect", "Online"},
                                        json{"All Products"}, json{"All Customers"}))},
      {"B3", query_json("Revenue", area(all_datatypes, json{"Full Year", "Q1", "Q2", "Q3", "Q4"},
                                        json{"All Channels"}, "*", json(countries)))},
  };
  return GeneratedCube{std::move(schema), std::move(facts), std::move(queries)};
}

}  // namespace gpuolap
