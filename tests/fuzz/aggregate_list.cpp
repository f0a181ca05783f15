// The aggregate list of groupby-ordered --agg (groupby::parse_aggregates):
// any text is read or refused with an InputError; a list read names only
// columns that exist, and printed back (aggregate_label) reads the same.
#include <cstdlib>

#include "fuzz_input.hpp"
#include "groupby/ordered_aggregation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuolap;
  using namespace gpuolap::groupby;
  static const std::vector<std::string> kColumns{"k", "x", "y", "name", "sum"};
  try {
    std::vector<int> values;
    const std::vector<Aggregate> aggregates = parse_aggregates(fuzz::as_text(data, size), kColumns, values);
    OrderedInput input;
    for (int v : values) {
      if (v < 0 || static_cast<std::size_t>(v) >= kColumns.size()) std::abort();
      input.values.push_back({ValueType::Double, nullptr, nullptr, kColumns[v]});
    }
    input.aggregates = aggregates;
    std::string printed;
    for (const Aggregate& a : aggregates) {
      if (a.kind != AggregateKind::CountStar && (a.value < 0 || static_cast<std::size_t>(a.value) >= values.size()))
        std::abort();
      printed += (printed.empty() ? "" : ",") + aggregate_label(input, a);
    }
    std::vector<int> again_values;
    const std::vector<Aggregate> again = parse_aggregates(printed, kColumns, again_values);
    if (again.size() != aggregates.size() || again_values != values) std::abort();
    for (std::size_t i = 0; i < again.size(); ++i)
      if (again[i].kind != aggregates[i].kind || again[i].value != aggregates[i].value) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
