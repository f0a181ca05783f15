#include "gpuolap/dimension.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <fmt/format.h>

#include "gpuolap/error.hpp"

namespace gpuolap {

namespace {

// Orders elements so that every parent comes before its children (Kahn's
// algorithm); a cycle leaves elements unordered and is reported with a path.
std::vector<ElementId> topological_order(const std::vector<Element>& elements,
                                         const std::vector<std::vector<ElementId>>& parents,
                                         const std::string& where) {
  const size_t n = elements.size();
  std::vector<uint32_t> pending_parents(n);
  std::vector<ElementId> order;
  order.reserve(n);
  for (ElementId e = 0; e < n; ++e) {
    pending_parents[e] = static_cast<uint32_t>(parents[e].size());
    if (pending_parents[e] == 0) order.push_back(e);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (const Child& c : elements[order[i]].children) {
      if (--pending_parents[c.element] == 0) order.push_back(c.element);
    }
  }
  if (order.size() == n) return order;

  // An unordered element always has an unordered parent: walk up parents
  // until one repeats, then report the cycle parent-first.
  ElementId start = 0;
  while (pending_parents[start] == 0) ++start;
  std::vector<ElementId> path{start};
  std::vector<int> seen_at(n, -1);
  seen_at[start] = 0;
  for (;;) {
    ElementId next = start;
    for (ElementId p : parents[path.back()]) {
      if (pending_parents[p] != 0) {
        next = p;
        break;
      }
    }
    if (seen_at[next] >= 0) {
      std::string cycle = "'" + elements[next].name + "'";
      for (size_t i = path.size(); i-- > static_cast<size_t>(seen_at[next]);)
        cycle += " -> '" + elements[path[i]].name + "'";
      throw InputError(fmt::format("{}: consolidation cycle: {}", where, cycle));
    }
    seen_at[next] = static_cast<int>(path.size());
    path.push_back(next);
  }
}

}  // namespace

Dimension Dimension::build(std::string name, const std::vector<ElementSpec>& specs,
                           const std::string& where) {
  Dimension dim;
  dim.name_ = std::move(name);
  if (specs.empty()) throw InputError(fmt::format("{}: the dimension has no elements", where));

  dim.elements_.reserve(specs.size());
  for (const ElementSpec& spec : specs) {
    if (spec.name.empty()) throw InputError(fmt::format("{}: an element has an empty name", where));
    const auto id = static_cast<ElementId>(dim.elements_.size());
    if (!dim.by_name_.emplace(spec.name, id).second)
      throw InputError(fmt::format("{}: element '{}' is declared twice", where, spec.name));
    dim.elements_.push_back(Element{spec.name, {}});
  }

  dim.parents_.assign(specs.size(), {});
  // Which element last listed each element as its child: a child listed
  // twice is found in constant time (a scan of the children so far took
  // 17 s for a total over 150,000 bases).
  constexpr ElementId kListedByNone = std::numeric_limits<ElementId>::max();
  std::vector<ElementId> listed_by(specs.size(), kListedByNone);
  for (ElementId e = 0; e < specs.size(); ++e) {
    const ElementSpec& spec = specs[e];
    std::vector<Child>& children = dim.elements_[e].children;
    for (const auto& [child_name, weight] : spec.children) {
      auto it = dim.by_name_.find(child_name);
      if (it == dim.by_name_.end())
        throw InputError(fmt::format("{}: element '{}' has child '{}', which does not exist", where,
                                     spec.name, child_name));
      if (!std::isfinite(weight))
        throw InputError(fmt::format("{}: element '{}': the weight of child '{}' is not finite",
                                     where, spec.name, child_name));
      if (listed_by[it->second] == e)
        throw InputError(fmt::format("{}: element '{}' lists child '{}' twice", where, spec.name, child_name));
      listed_by[it->second] = e;
      children.push_back(Child{it->second, weight});
      dim.parents_[it->second].push_back(e);
    }
  }

  const std::vector<ElementId> order = topological_order(dim.elements_, dim.parents_, where);

  dim.base_ids_.assign(specs.size(), kNotBase);
  for (ElementId e = 0; e < specs.size(); ++e) {
    if (dim.elements_[e].is_base()) {
      dim.base_ids_[e] = static_cast<BaseId>(dim.base_elements_.size());
      dim.base_elements_.push_back(e);
    }
  }

  // Depth: longest chain of levels, computed children-first.
  std::vector<int> levels(specs.size(), 1);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (const Child& c : dim.elements_[*it].children)
      levels[*it] = std::max(levels[*it], levels[c.element] + 1);
  }
  dim.depth_ = *std::max_element(levels.begin(), levels.end());
  dim.base_weights_cache_ = std::make_shared<BaseWeightsCache>(dim.elements_.size());
  dim.refuse_overflowing_weights(order, where);
  dim.precompute_base_weights(order);
  return dim;
}

// Computed on a query's first use, an element's base weights were most of
// building its map: 0.24-0.82 ms for the first of the thesis queries that
// named an element (B1, M1, M3 at scale 0.01 on the 2-core VM), against
// 0.02-0.10 ms with them at hand. Every element of the Biker and Machines
// dimensions takes 15,565 and 18,823 entries and 0.6 and 1.1 ms, once, when
// the schema is built. Past the budget (checked before each element, so
// overshot by at most one element's bases) the elements stay lazy.
void Dimension::precompute_base_weights(const std::vector<ElementId>& parents_first) const {
  // 4 MB of (base, weight) pairs, and a vector per element: a few ms at
  // every schema parse, whatever the dimension's size.
  constexpr size_t kEagerBaseWeights = size_t{1} << 18;
  size_t entries = 0;
  for (auto it = parents_first.rbegin(); it != parents_first.rend() && entries <= kEagerBaseWeights; ++it)
    entries += base_weights(*it).size();
}

void Dimension::refuse_overflowing_weights(const std::vector<ElementId>& parents_first,
                                           const std::string& where) const {
  // bound(e) = sum over children c of |weight(e,c)| * bound(c), 1 for a base,
  // bounds every base weight under e, in one pass over the edges. Only where
  // the bound is not finite are e's weights computed, to tell a real
  // overflow from a bound that cancellations keep below it.
  std::vector<double> bound(elements_.size(), 1.0);
  for (auto it = parents_first.rbegin(); it != parents_first.rend(); ++it) {
    const Element& element = elements_[*it];
    if (element.is_base()) continue;
    double sum = 0.0;
    for (const Child& c : element.children) sum += std::abs(c.weight) * bound[c.element];
    bound[*it] = sum;
    if (std::isfinite(sum)) continue;
    for (const auto& [b, w] : base_weights(*it))
      if (!std::isfinite(w))
        throw InputError(fmt::format("{}: the weight of '{}' under '{}' overflows to {} (a product of weights on its paths)",
                                     where, elements_[base_elements_[b]].name, element.name, w));
  }
}

std::optional<ElementId> Dimension::find(std::string_view element_name) const {
  auto it = by_name_.find(element_name);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

int Dimension::key_bits() const {
  int bits = 0;
  while ((uint64_t{1} << bits) < base_count()) ++bits;
  return bits;
}

const std::vector<std::pair<BaseId, double>>& Dimension::base_weights(ElementId e) const {
  BaseWeightsCache& cache = *base_weights_cache_;
  if (!cache.ready[e].load(std::memory_order_acquire)) {
    std::lock_guard lock(cache.mutex);
    if (!cache.ready[e].load(std::memory_order_relaxed)) compute_base_weights(e);
  }
  return cache.weights[e];
}

void Dimension::compute_base_weights(ElementId e) const {
  BaseWeightsCache& cache = *base_weights_cache_;
  // Depth-first, children before parents, without recursion (a hierarchy
  // may be thousands of levels deep). An element is computed from its
  // children's kept totals: a chain of n levels costs n steps, where a walk
  // of each element's subtree cost n^2/2.
  struct Frame {
    ElementId element;
    size_t next_child;
  };
  std::vector<Frame> stack{{e, 0}};
  std::vector<std::pair<BaseId, double>> terms;
  while (!stack.empty()) {
    Frame& top = stack.back();
    const Element& element = elements_[top.element];
    if (top.next_child < element.children.size()) {
      const ElementId child = element.children[top.next_child++].element;
      if (!cache.ready[child].load(std::memory_order_relaxed)) stack.push_back({child, 0});
      continue;
    }
    std::vector<std::pair<BaseId, double>> weights;
    if (element.is_base()) {
      weights.emplace_back(base_ids_[top.element], 1.0);
    } else {
      // Every child's terms, then the terms of one base summed in child
      // order (a stable sort), so the sum never depends on what ran before.
      terms.clear();
      for (const Child& c : element.children)
        for (const auto& [b, w] : cache.weights[c.element]) terms.emplace_back(b, c.weight * w);
      std::stable_sort(terms.begin(), terms.end(),
                       [](const auto& x, const auto& y) { return x.first < y.first; });
      for (size_t i = 0; i < terms.size();) {
        const BaseId b = terms[i].first;
        double sum = 0.0;
        for (; i < terms.size() && terms[i].first == b; ++i) sum += terms[i].second;
        if (sum != 0.0) weights.emplace_back(b, sum);
      }
    }
    cache.weights[top.element] = std::move(weights);
    cache.ready[top.element].store(true, std::memory_order_release);
    stack.pop_back();
  }
}

}  // namespace gpuolap
