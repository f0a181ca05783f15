#pragma once
// A dimension: elements with dense ids in schema order. Base elements are
// leaves; consolidated elements have weighted children, which may be
// consolidated themselves and may be shared (a DAG, never a cycle).
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gpuolap {

using ElementId = uint32_t;  // position of an element in its dimension
using BaseId = uint32_t;     // dense number of a base element (0..base_count-1)
inline constexpr BaseId kNotBase = UINT32_MAX;

struct Child {
  ElementId element;
  double weight;
};

struct Element {
  std::string name;
  std::vector<Child> children;  // empty for a base element
  bool is_base() const { return children.empty(); }
};

// What a schema file says about one element, before names are resolved.
struct ElementSpec {
  std::string name;
  std::vector<std::pair<std::string, double>> children;  // (child name, weight)
};

class Dimension {
 public:
  // Resolves child names, checks names are unique, children exist, weights
  // are finite and there is no cycle. `where` prefixes error messages
  // (e.g. "schema.json: dimension 'Products'").
  static Dimension build(std::string name, const std::vector<ElementSpec>& specs,
                         const std::string& where);

  const std::string& name() const { return name_; }
  size_t element_count() const { return elements_.size(); }
  const Element& element(ElementId e) const { return elements_[e]; }
  const std::vector<Element>& elements() const { return elements_; }
  std::optional<ElementId> find(std::string_view element_name) const;

  uint32_t base_count() const { return static_cast<uint32_t>(base_elements_.size()); }
  BaseId base_id(ElementId e) const { return base_ids_[e]; }
  ElementId base_element(BaseId b) const { return base_elements_[b]; }

  // Bits a base id takes in a cell key: ceil(log2(base_count)), 0 for one base.
  int key_bits() const;
  // Levels on the longest path from a top element down to a base (1 if flat).
  int depth() const { return depth_; }
  // Direct parents of an element, in schema order.
  const std::vector<ElementId>& parents(ElementId e) const { return parents_[e]; }

  // The weight of every base element under `e` whose weight is non-zero:
  // 1 for e itself if base, else the sum over children c, in schema order,
  // of weight(e,c) * weight of b under c. Sorted by base id. Computed
  // children first, once per element, and kept with the totals of every
  // element below it (a dimension never changes after build; every area
  // query asks again for the same totals), so a list of all the elements of
  // a deep hierarchy costs what its answer holds, not a walk per element;
  // the same value whatever was asked before. Safe to call from many threads.
  const std::vector<std::pair<BaseId, double>>& base_weights(ElementId e) const;

 private:
  Dimension() = default;  // only build() makes dimensions (it sets up the cache)

  std::string name_;
  std::vector<Element> elements_;
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, ElementId, NameHash, std::equal_to<>> by_name_;
  std::vector<BaseId> base_ids_;
  std::vector<ElementId> base_elements_;
  std::vector<std::vector<ElementId>> parents_;
  int depth_ = 1;

  // An InputError naming the first element (children first) with a base
  // whose weight overflows a double: refused when the schema is built, not
  // when a query first asks for it.
  void refuse_overflowing_weights(const std::vector<ElementId>& parents_first, const std::string& where) const;
  // Fills the cache for e and every element below it not yet there.
  void compute_base_weights(ElementId e) const;
  // Fills the cache children first until it holds more than a budget of
  // entries: a query's map then only gathers lists.
  void precompute_base_weights(const std::vector<ElementId>& parents_first) const;
  // base_weights' results; copies of a dimension share them. An element's
  // weights are written once, under `mutex`, before its `ready` is set.
  struct BaseWeightsCache {
    explicit BaseWeightsCache(size_t n) : ready(new std::atomic<bool>[n]), weights(n) {
      for (size_t i = 0; i < n; ++i) ready[i].store(false, std::memory_order_relaxed);
    }
    std::mutex mutex;
    std::unique_ptr<std::atomic<bool>[]> ready;
    std::vector<std::vector<std::pair<BaseId, double>>> weights;
  };
  std::shared_ptr<BaseWeightsCache> base_weights_cache_;
};

}  // namespace gpuolap
