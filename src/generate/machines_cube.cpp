// The "machines" cube: a production cube of the shape of the thesis' Machines
// cube (olap-aggregation-cuda-dynamic-parallelism, section 5.1) with its
// queries M1-M3: 6 dimensions, 2.263e11 base cells, 41,294,400 facts at
// scale 1 (0.01825 % filled), measure Value.
//
// Dimensions, in key order (base elements / all elements):
//   Plants      All Plants -> Europe (10), Americas (8), Asia (5) -> plants   23 / 27
//   Years       All Years -> 2016..2025                                      10 / 11
//   Days        Full Year -> Q1..Q4 -> Jan..Dec -> Jan 01..Dec 31           365 / 382
//   Hours       All Hours -> Early, Late, Night Shift -> 00:00..23:00        24 / 28
//   Products    All Products -> Drives (7 families), Pumps (6), Valves     1755 / 1784
//               (6), Custom Builds (5) -> 24 families -> products
//   Components  All Components -> C00..C63; 2000 machines M0001..M2000     64 / 2065
//               over the components, as in the thesis: every component is
//               in one random machine and every 7th component (C00, C07,
//               ..., C63: ten of them) in exactly 1000 random machines (its
//               random one among them). Machines that no 1000-set reaches
//               (about 2) are made the random machines of ordinary
//               components, so every machine has a component. The
//               structure is drawn from the seed. The last dimension varies
//               fastest in key order, so adjacent facts reach 2 or 1001
//               targets of M3: the "unfavorable" order of the thesis.
// 23 * 10 * 365 * 24 * 1755 * 64 = 226,302,336,000 base cells.
//
// Queries ("updates" = (fact, target) contributions, thesis table 5.2):
//   M1  every dimension's total: 1 target, every fact relevant, 1 update.
//   M2  Plants [Europe + its 10 plants] x Components [229 machines], totals
//       elsewhere: 11 * 229 = 2519 targets. The 229 machines have only 7th
//       components, whose counts of children add up to 1141. Relevant facts
//       are the European facts of 7th components (6,216,000), each reaching
//       2 plant elements * k(c) machines, k(c) = listed machines holding c;
//       with the same number of facts for each of the ten 7th components the
//       mean is 2 * 1141 / 10 = 228.2 updates, the thesis' figure. Every
//       European plant has facts of all ten 7th components, so all 2519
//       targets are filled.
//   M3  Plants [the 23 plants] x Products [the 19 families of Drives, Pumps
//       and Valves] x Components [All Components + the 2000 machines],
//       totals elsewhere: 23 * 19 * 2001 = 874,437 targets. Relevant facts
//       are those of the 19 families (29,534,400). A fact of component c
//       reaches 1 + |machines of c| targets: 2, or 1001 for a 7th component,
//       so updates = 2 R + 999 S, S = relevant facts of 7th components; the
//       thesis' 4,590,532,800 updates give S = 4,536,000 exactly.
//       Filled targets: a (plant, family) row with facts of components C
//       fills 1 + |union of the machines of C| of its 2001 targets. Six
//       "heavy" rows (non-European plants) hold facts of all 64 components
//       and fill all 2001; the other 431 rows hold facts of ordinary
//       components only, chosen with distinct machines, 3 or 4 per row,
//       1534 in all: 431 + 1534 = 1965 targets. 6 * 2001 + 1965 = 13,971.
//       (The thesis' M3 is just as lopsided: 29.5 million relevant facts
//       fill 13,971 targets, about seven rows of 2001.)
//
// Placement: facts are drawn uniformly and distinct from strata, each one
// (plant, family or family set, component or component set) over all years,
// days and hours:
//   - heavy rows: 6 rows * 64 components = 384 strata; their 7th-component
//     strata (60) share S, the ordinary ones share R - S with the light rows;
//   - light rows: one stratum per (row, chosen component), 1534;
//   - M2: (European plant, 7th component) x Custom Builds, 100 strata
//     sharing 6,216,000 equally;
//   - the rest (41,294,400 - R - 6,216,000 = 5,544,000): Custom Builds in
//     non-European plants (all components) and in European plants
//     (ordinary components), relevant to M1 only.
// At scale s every total above is round(s * thesis count). The filled-target
// counts hold while every stratum that must be non-empty gets a fact: from
// s = 7.5e-5 (1858 strata share round(s * 24,998,400)) on.
//
// The "machines-skewed" cube: the same cube with a far more uneven fan-out,
// for finding where each GPU kernel variant wins on skew. Everything above
// holds but for these numbers:
//   Components  64 / 20,065: 20,000 machines M00001..M20000, every 7th
//               component in exactly 10,000 random machines. About
//               20,000 / 2^10 = 20 machines that no 10,000-set reaches are
//               made the random machines of ordinary components.
//   M2  unchanged: the same 229 machines of only 7th components with 1141
//       children in all, so 2519 targets (all filled), 6,216,000 relevant
//       facts and 1,418,491,200 updates (228.2 per relevant fact) as for
//       machines. Ten times the list (2290 machines) would make M2 a
//       uniform fan-out of about 2282 and 1.4e10 updates; keeping it leaves
//       M3 as the only query whose work differs between the two cubes.
//   M3  Components [All Components + the 20,000 machines]: 23 * 19 * 20,001
//       = 8,740,437 targets. Relevant facts R = 29,534,400 as before, but
//       S = 453,600 of them (a tenth) are of 7th components, each reaching
//       1 + 10,000 targets, the other 29,080,800 reaching 2: updates =
//       2 R + 9,999 S = 4,594,615,200 (155.57 per relevant fact, against
//       4,590,532,800 for machines), the thesis' M3 work concentrated on a
//       tenth of the facts. Filled targets: the six heavy rows fill all
//       20,001 of theirs and the light rows the same 1965 as for machines:
//       6 * 20,001 + 1965 = 121,971.
//   Facts: 41,294,400 as for machines, placed in the same strata; only the
//       split of the heavy rows changes (the 60 7th-component strata share
//       S = 453,600, 7560 each at scale 1; the 1858 ordinary ones share
//       R - S = 29,080,800). At scale s: relevant round(s * 29,534,400),
//       updates 2 round(s * 29,534,400) + 9,999 round(s * 453,600) exactly.
//       The filled-target counts hold from s = 1.35e-4 (60 strata share
//       round(s * 453,600) = 61) on.
//
// Both cubes come from one generator, parameterised by MachinesShape below.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "fact_sampler.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/generate.hpp"

namespace gpuolap {

namespace {

using generate_detail::BaseSet;
using generate_detail::Rng;
using generate_detail::Stratum;
using json = nlohmann::ordered_json;

// What tells the machines cubes apart (see the comment at the top).
struct MachinesShape {
  const char* kind;           // the cube kind, for messages
  const char* cube_name;      // the schema's name
  uint32_t machines;          // machines over the 64 components
  uint32_t seventh_machines;  // machines each 7th component is in
  uint64_t m3_seventh_facts;  // S: M3's relevant facts of 7th components
  uint32_t m2_machines;       // machines M2 lists
  uint32_t m2_child_sum;      // their numbers of components, added up
};

constexpr MachinesShape kMachinesShape{"machines", "Machines", 2000, 1000, 4'536'000, 229, 1141};
constexpr MachinesShape kSkewedShape{"machines-skewed", "Machines Skewed", 20'000, 10'000, 453'600,
                                     229, 1141};

constexpr uint64_t kFacts = 41'294'400;
constexpr uint64_t kM3Relevant = 29'534'400;
constexpr uint64_t kM2Relevant = 6'216'000;

constexpr uint32_t kComponents = 64;
constexpr uint32_t kHeavyRows = 6;
// Ordinary components over all light rows of M3: with the light rows' own
// totals, 431 + 1534 = 1965 filled targets outside the heavy rows.
constexpr uint32_t kLightComponents = 1534;

constexpr uint32_t kEuropeanPlants = 10;
const std::vector<std::pair<std::string, std::vector<std::string>>> kRegions{
    {"Europe",
     {"Stuttgart", "Munich", "Lyon", "Turin", "Graz", "Brno", "Wroclaw", "Eindhoven", "Bilbao",
      "Gothenburg"}},
    {"Americas",
     {"Detroit", "Columbus", "Monterrey", "Sao Paulo", "Queretaro", "Toronto", "Charlotte",
      "Puebla"}},
    {"Asia", {"Nagoya", "Pune", "Suzhou", "Chennai", "Ulsan"}}};
constexpr uint32_t kPlants = 23;

// Product lines: (name, code, families). The first three lines' 19 families
// are M3's; Custom Builds comes last so its products are one base-id range.
const std::vector<std::tuple<std::string, std::string, int>> kLines{
    {"Drives", "DRV", 7}, {"Pumps", "PMP", 6}, {"Valves", "VLV", 6}, {"Custom Builds", "CST", 5}};
constexpr uint32_t kFamilies = 24;
constexpr uint32_t kM3Families = 19;
constexpr uint32_t kProducts = 1755;

bool is_seventh(uint32_t component) { return component % 7 == 0; }

Dimension build(const std::string& name, const std::vector<ElementSpec>& specs,
                const char* kind = "machines") {
  return Dimension::build(name, specs, fmt::format("{}: dimension '{}'", kind, name));
}

ElementSpec node(std::string name, const std::vector<std::string>& children = {}) {
  ElementSpec spec{std::move(name), {}};
  for (const auto& c : children) spec.children.emplace_back(c, 1.0);
  return spec;
}

std::vector<std::string> plant_names() {
  std::vector<std::string> names;
  for (const auto& [_, plants] : kRegions) names.insert(names.end(), plants.begin(), plants.end());
  return names;
}

Dimension plants() {
  std::vector<ElementSpec> t;
  std::vector<std::string> regions;
  for (const auto& [region, _] : kRegions) regions.push_back(region);
  t.push_back(node("All Plants", regions));
  for (const auto& [region, plants] : kRegions) {
    t.push_back(node(region, plants));
    for (const auto& p : plants) t.push_back(node(p));
  }
  return build("Plants", t);
}

Dimension years() {
  std::vector<std::string> names;
  for (int y = 2016; y <= 2025; ++y) names.push_back(std::to_string(y));
  std::vector<ElementSpec> t{node("All Years", names)};
  for (const auto& y : names) t.push_back(node(y));
  return build("Years", t);
}

Dimension days() {
  const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const int lengths[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  std::vector<ElementSpec> t{node("Full Year", {"Q1", "Q2", "Q3", "Q4"})};
  for (int q = 0; q < 4; ++q) {
    t.push_back(
        node(fmt::format("Q{}", q + 1), {months[3 * q], months[3 * q + 1], months[3 * q + 2]}));
    for (int m = 3 * q; m < 3 * q + 3; ++m) {
      std::vector<std::string> ds;
      for (int d = 1; d <= lengths[m]; ++d) ds.push_back(fmt::format("{} {:02}", months[m], d));
      t.push_back(node(months[m], ds));
      for (const auto& d : ds) t.push_back(node(d));
    }
  }
  return build("Days", t);
}

Dimension hours() {
  auto hour = [](int h) { return fmt::format("{:02}:00", h); };
  std::vector<std::string> early, late, night;
  for (int h = 0; h < 24; ++h)
    (h < 6 || h >= 22 ? night : h < 14 ? early : late).push_back(hour(h));
  std::vector<ElementSpec> t{node("All Hours", {"Early Shift", "Late Shift", "Night Shift"}),
                             node("Early Shift", early), node("Late Shift", late),
                             node("Night Shift", night)};
  for (int h = 0; h < 24; ++h) t.push_back(node(hour(h)));
  return build("Hours", t);
}

// Also returns the first base id and the size of every family.
Dimension products(std::vector<uint32_t>& family_first, std::vector<uint32_t>& family_size,
                   std::vector<std::string>& family_names) {
  std::vector<ElementSpec> t;
  std::vector<std::string> lines;
  for (const auto& [line, _, __] : kLines) lines.push_back(line);
  t.push_back(node("All Products", lines));
  uint32_t family = 0, next = 0;
  for (const auto& [line, code, families] : kLines) {
    std::vector<std::string> names;
    for (int f = 1; f <= families; ++f) names.push_back(fmt::format("{}-F{:02}", code, f));
    t.push_back(node(line, names));
    for (const auto& name : names) {
      // 1755 = 24 * 73 + 3: the first three families have a 74th product.
      const uint32_t size = kProducts / kFamilies + (family < kProducts % kFamilies ? 1 : 0);
      std::vector<std::string> ps;
      for (uint32_t p = 1; p <= size; ++p) ps.push_back(fmt::format("{}-{:03}", name, p));
      t.push_back(node(name, ps));
      for (const auto& p : ps) t.push_back(node(p));
      family_first.push_back(next);
      family_size.push_back(size);
      family_names.push_back(name);
      next += size;
      ++family;
    }
  }
  return build("Products", t);
}

std::string component_name(uint32_t c) { return fmt::format("C{:02}", c); }
// M0001..M2000, M00001..M20000: as many digits as the number of machines.
std::string machine_name(const MachinesShape& shape, uint32_t m) {
  return fmt::format("M{:0{}}", m + 1, std::to_string(shape.machines).size());
}

// Which machines every component is in (see the comment at the top).
struct ComponentTree {
  std::vector<std::vector<uint32_t>> machines_of;  // per component, ascending
  std::vector<std::vector<uint32_t>> children;     // per machine, ascending
  std::vector<uint32_t> random_machine;            // the one random machine of a component
};

ComponentTree component_tree(const MachinesShape& shape, Rng& rng) {
  const uint32_t machines = shape.machines;
  std::vector<uint32_t> ordinary;
  for (uint32_t c = 0; c < kComponents; ++c)
    if (!is_seventh(c)) ordinary.push_back(c);
  for (;;) {
    ComponentTree tree;
    tree.machines_of.assign(kComponents, {});
    tree.random_machine.assign(kComponents, 0);
    std::vector<char> covered(machines, 0);
    for (uint32_t c = 0; c < kComponents; c += 7) {
      std::vector<uint32_t> ms = rng.sample(machines, shape.seventh_machines);
      tree.random_machine[c] = ms[0];
      std::sort(ms.begin(), ms.end());
      for (uint32_t m : ms) covered[m] = 1;
      tree.machines_of[c] = std::move(ms);
    }
    std::vector<uint32_t> uncovered;
    for (uint32_t m = 0; m < machines; ++m)
      if (!covered[m]) uncovered.push_back(m);
    // machines / 2^10 machines are expected outside all ten sets of half the
    // machines (2 of 2000, 20 of 20,000); more than the 54 ordinary
    // components could cover never happens in practice, but is redrawn.
    if (uncovered.size() > ordinary.size()) continue;
    std::vector<uint32_t> order = ordinary;
    rng.shuffle(order);
    for (size_t i = 0; i < order.size(); ++i) {
      const uint32_t m = i < uncovered.size() ? uncovered[i] : rng.below(machines);
      tree.random_machine[order[i]] = m;
      tree.machines_of[order[i]] = {m};
    }
    tree.children.assign(machines, {});
    for (uint32_t c = 0; c < kComponents; ++c)
      for (uint32_t m : tree.machines_of[c]) tree.children[m].push_back(c);
    return tree;
  }
}

Dimension components(const MachinesShape& shape, const ComponentTree& tree) {
  std::vector<ElementSpec> t;
  std::vector<std::string> all;
  for (uint32_t c = 0; c < kComponents; ++c) all.push_back(component_name(c));
  t.push_back(node("All Components", all));
  for (uint32_t m = 0; m < shape.machines; ++m) {
    std::vector<std::string> cs;
    for (uint32_t c : tree.children[m]) cs.push_back(component_name(c));
    t.push_back(node(machine_name(shape, m), cs));
  }
  for (const auto& c : all) t.push_back(node(c));
  return build("Components", t, shape.kind);
}

// M2's machines: 229 machines without ordinary components whose numbers of
// components add up to 1141 (the shape's m2_machines and m2_child_sum). A
// random choice is improved by swaps.
std::vector<uint32_t> m2_machines(const MachinesShape& shape, const ComponentTree& tree, Rng& rng) {
  const uint32_t count = shape.m2_machines;
  const int64_t child_sum = shape.m2_child_sum;
  std::vector<uint32_t> pool;
  for (uint32_t m = 0; m < shape.machines; ++m) {
    const auto& cs = tree.children[m];
    if (std::all_of(cs.begin(), cs.end(), is_seventh)) pool.push_back(m);
  }
  if (pool.size() < count)
    throw std::logic_error(fmt::format("{}: fewer than {} machines for M2", shape.kind, count));
  rng.shuffle(pool);
  auto kids = [&](uint32_t m) { return static_cast<int64_t>(tree.children[m].size()); };
  int64_t sum = 0;
  for (uint32_t i = 0; i < count; ++i) sum += kids(pool[i]);
  while (sum != child_sum) {
    const int64_t gap = child_sum - sum;
    bool swapped = false;
    for (size_t i = 0; i < count && !swapped; ++i)
      for (size_t j = count; j < pool.size() && !swapped; ++j) {
        const int64_t delta = kids(pool[j]) - kids(pool[i]);
        if (delta != 0 && (delta > 0) == (gap > 0) && std::abs(delta) <= std::abs(gap)) {
          std::swap(pool[i], pool[j]);
          sum += delta;
          swapped = true;
        }
      }
    if (!swapped)
      throw std::logic_error(
          fmt::format("{}: no {} machines with {} components", shape.kind, count, child_sum));
  }
  pool.resize(count);
  std::sort(pool.begin(), pool.end());
  return pool;
}

// Which components the facts of each M3 row (plant, family) have.
struct M3Rows {
  std::vector<std::pair<uint32_t, uint32_t>> heavy;  // (plant, family), all components
  std::vector<std::pair<uint32_t, uint32_t>> light;
  std::vector<std::vector<uint32_t>> light_components;  // per light row
};

M3Rows m3_rows(const MachinesShape& shape, const ComponentTree& tree, Rng& rng) {
  M3Rows rows;
  // Heavy rows among the rows of non-European plants.
  const uint32_t candidates = (kPlants - kEuropeanPlants) * kM3Families;
  std::vector<char> heavy(kPlants * kM3Families, 0);
  for (uint32_t i : rng.sample(candidates, kHeavyRows))
    heavy[kEuropeanPlants * kM3Families + i] = 1;

  // Ordinary components grouped by their machine: a light row takes
  // components of distinct machines, so each adds exactly one filled target.
  std::vector<std::vector<uint32_t>> by_machine(shape.machines);
  for (uint32_t c = 0; c < kComponents; ++c)
    if (!is_seventh(c)) by_machine[tree.random_machine[c]].push_back(c);
  std::vector<uint32_t> machines;
  for (uint32_t m = 0; m < shape.machines; ++m)
    if (!by_machine[m].empty()) machines.push_back(m);

  // Each light row fills its total plus one target per component; the heavy
  // rows fill all of theirs, whatever the number of machines.
  const uint32_t light = kPlants * kM3Families - kHeavyRows;
  const uint32_t components = kLightComponents;
  const uint32_t per_row = components / light;
  std::vector<char> one_more(light, 0);
  for (uint32_t i : rng.sample(light, components % light)) one_more[i] = 1;
  if (per_row + 1 > machines.size())
    throw std::logic_error(fmt::format("{}: too few ordinary machines", shape.kind));

  uint32_t light_index = 0;
  for (uint32_t plant = 0; plant < kPlants; ++plant)
    for (uint32_t family = 0; family < kM3Families; ++family) {
      if (heavy[plant * kM3Families + family]) {
        rows.heavy.emplace_back(plant, family);
        continue;
      }
      std::vector<uint32_t> cs;
      for (uint32_t i :
           rng.sample(static_cast<uint32_t>(machines.size()), per_row + one_more[light_index])) {
        const auto& candidates_of_machine = by_machine[machines[i]];
        cs.push_back(
            candidates_of_machine[rng.below(static_cast<uint32_t>(candidates_of_machine.size()))]);
      }
      std::sort(cs.begin(), cs.end());
      rows.light.emplace_back(plant, family);
      rows.light_components.push_back(std::move(cs));
      ++light_index;
    }
  return rows;
}

std::vector<Stratum> machines_strata(const MachinesShape& shape, double scale, const M3Rows& rows,
                                     const std::vector<uint32_t>& family_first,
                                     const std::vector<uint32_t>& family_size) {
  const uint64_t n = generate_detail::scaled_count(scale, kFacts);
  const uint64_t m3 = generate_detail::scaled_count(scale, kM3Relevant);
  const uint64_t m3_seventh = generate_detail::scaled_count(scale, shape.m3_seventh_facts);
  const uint64_t m2 = generate_detail::scaled_count(scale, kM2Relevant);

  auto box = [](uint32_t plant, BaseSet products, BaseSet components) {
    Stratum s;
    s.dims = {BaseSet::single(plant), BaseSet::range(0, 10), BaseSet::range(0, 365),
              BaseSet::range(0, 24),  std::move(products),   std::move(components)};
    return s;
  };
  auto family = [&](uint32_t f) { return BaseSet::range(family_first[f], family_size[f]); };
  const BaseSet custom_builds =
      BaseSet::range(family_first[kM3Families], kProducts - family_first[kM3Families]);
  std::vector<uint32_t> ordinary_ids;
  for (uint32_t c = 0; c < kComponents; ++c)
    if (!is_seventh(c)) ordinary_ids.push_back(c);
  const BaseSet ordinary =
      BaseSet::list(std::make_shared<const std::vector<uint32_t>>(ordinary_ids));

  // Groups of strata that share a count; weights within a group.
  enum Group { kSeventh, kOrdinary, kM2, kRest };
  std::vector<Stratum> strata;
  std::vector<std::vector<size_t>> members(4);
  std::vector<std::vector<double>> weights(4);
  auto add = [&](Group g, Stratum s, double weight) {
    members[g].push_back(strata.size());
    weights[g].push_back(weight);
    strata.push_back(std::move(s));
  };
  for (const auto& [plant, f] : rows.heavy)
    for (uint32_t c = 0; c < kComponents; ++c)
      add(is_seventh(c) ? kSeventh : kOrdinary, box(plant, family(f), BaseSet::single(c)), 1);
  for (size_t r = 0; r < rows.light.size(); ++r)
    for (uint32_t c : rows.light_components[r])
      add(kOrdinary, box(rows.light[r].first, family(rows.light[r].second), BaseSet::single(c)), 1);
  for (uint32_t plant = 0; plant < kEuropeanPlants; ++plant)
    for (uint32_t c = 0; c < kComponents; c += 7)
      add(kM2, box(plant, custom_builds, BaseSet::single(c)), 1);
  for (uint32_t plant = 0; plant < kPlants; ++plant) {
    if (plant < kEuropeanPlants)
      add(kRest, box(plant, custom_builds, ordinary), ordinary.size());
    else
      add(kRest, box(plant, custom_builds, BaseSet::range(0, kComponents)), kComponents);
  }

  const uint64_t group_count[4] = {m3_seventh, m3 - m3_seventh, m2, n - m3 - m2};
  for (int g = 0; g < 4; ++g) {
    const std::vector<uint64_t> counts = generate_detail::apportion(group_count[g], weights[g]);
    for (size_t i = 0; i < counts.size(); ++i) strata[members[g][i]].count = counts[i];
  }
  return strata;
}

std::string query_json(const std::vector<std::pair<std::string, json>>& area) {
  json q;
  q["measure"] = "Value";
  q["aggregate"] = "sum";
  q["area"] = json::object();
  for (const auto& [dim, list] : area) q["area"][dim] = list;
  return q.dump();
}

// Either machines cube. Both draw their structure from the same random
// stream, so for one seed they differ only where their shapes do.
GeneratedCube generate_machines_cube(const MachinesShape& shape, double scale, uint64_t seed,
                                     const ProgressFn& progress) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw InputError(
        fmt::format("{}: the scale must be a positive number, not {}", shape.kind, scale));

  Rng rng(seed, 0x6d616368696e6573ULL);
  const ComponentTree tree = component_tree(shape, rng);
  std::vector<uint32_t> family_first, family_size;
  std::vector<std::string> family_names;
  std::vector<Dimension> dims;
  dims.push_back(plants());
  dims.push_back(years());
  dims.push_back(days());
  dims.push_back(hours());
  dims.push_back(products(family_first, family_size, family_names));
  dims.push_back(components(shape, tree));
  Schema schema(shape.cube_name, std::move(dims), {"Value"}, shape.kind);

  const std::vector<uint32_t> m2_list = m2_machines(shape, tree, rng);
  const M3Rows rows = m3_rows(shape, tree, rng);
  std::vector<uint64_t> keys = generate_detail::sample_keys(
      schema.codec(), machines_strata(shape, scale, rows, family_first, family_size), seed,
      progress);

  // Value: a reading between 0 and 1000, in hundredths.
  const uint64_t value_seed = generate_detail::splitmix64(seed ^ 0x6d616368696e6576ULL);
  std::vector<double> value = generate_detail::fill_column(keys.size(), [&](size_t i) {
    return generate_detail::round_cents(
        1000.0 * generate_detail::unit_interval(generate_detail::mix(value_seed, keys[i])));
  });
  std::vector<std::vector<double>> columns;
  columns.push_back(std::move(value));
  FactTable facts(schema.codec(), std::move(keys), std::move(columns));

  const std::vector<std::string> all_plants = plant_names();
  std::vector<std::string> europe{"Europe"};
  europe.insert(europe.end(), all_plants.begin(), all_plants.begin() + kEuropeanPlants);
  std::vector<std::string> m2_machine_names;
  for (uint32_t m : m2_list) m2_machine_names.push_back(machine_name(shape, m));
  std::vector<std::string> m3_machines{"All Components"};
  for (uint32_t m = 0; m < shape.machines; ++m) m3_machines.push_back(machine_name(shape, m));
  const std::vector<std::string> m3_families(family_names.begin(),
                                             family_names.begin() + kM3Families);

  auto area = [](json plants, json products, json components) {
    return std::vector<std::pair<std::string, json>>{
        {"Plants", std::move(plants)},     {"Years", json{"All Years"}},
        {"Days", json{"Full Year"}},       {"Hours", json{"All Hours"}},
        {"Products", std::move(products)}, {"Components", std::move(components)}};
  };
  std::vector<NamedQuery> queries{
      {"M1", query_json(area(json{"All Plants"}, json{"All Products"}, json{"All Components"}))},
      {"M2", query_json(area(json(europe), json{"All Products"}, json(m2_machine_names)))},
      {"M3", query_json(area(json(all_plants), json(m3_families), json(m3_machines)))},
  };
  return GeneratedCube{std::move(schema), std::move(facts), std::move(queries)};
}

}  // namespace

GeneratedCube generate_machines(double scale, uint64_t seed, const ProgressFn& progress) {
  return generate_machines_cube(kMachinesShape, scale, seed, progress);
}

GeneratedCube generate_machines_skewed(double scale, uint64_t seed, const ProgressFn& progress) {
  return generate_machines_cube(kSkewedShape, scale, seed, progress);
}

}  // namespace gpuolap
