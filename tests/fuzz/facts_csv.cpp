// The facts CSV reader (formats/facts_csv.cpp) on the demo cube's schema:
// any text is read or refused with an InputError; what is read builds a
// fact table, and that table written out and read back is the same table.
#include <cmath>
#include <sstream>

#include "fuzz_input.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"

namespace {

using namespace gpuolap;

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void check_round_trip(const Schema& schema, const FactTable& facts) {
  std::ostringstream out;
  write_facts_csv(schema, facts, out);
  const FactRows again = parse_facts_csv(schema, out.str(), "written back", true);
  const FactTable rebuilt = build_fact_table(schema, again, "written back");
  if (rebuilt.size() != facts.size()) fuzz::broken("the facts written and read back differ in count");
  for (size_t i = 0; i < facts.size(); ++i) {
    if (rebuilt.keys()[i] != facts.keys()[i]) fuzz::broken("a fact's key changed when written and read back");
    for (size_t m = 0; m < facts.measure_count(); ++m)
      if (!same_value(rebuilt.values(m)[i], facts.values(m)[i]))
        fuzz::broken("a fact's value changed when written and read back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Schema schema = generate_demo(0).schema;
  const std::string text = fuzz::as_text(data, size);
  try {
    // Deletes read the same file without its values.
    const FactRows keys_only = parse_facts_csv(schema, text, "fuzz.csv", false);
    check_unique_cells(keys_only, "fuzz.csv");
  } catch (const InputError&) {
  }
  FactTable facts;
  try {
    facts = build_fact_table(schema, parse_facts_csv(schema, text, "fuzz.csv", true), "fuzz.csv");
  } catch (const InputError&) {
    return 0;
  }
  check_round_trip(schema, facts);
  return 0;
}
