// The query JSON reader (formats/query_json.cpp) on the demo cube's schema:
// any text is read or refused with an InputError, and what is read names
// existing elements of every dimension.
#include "fuzz_input.hpp"
#include "gpuolap/formats.hpp"
#include "gpuolap/generate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuolap;
  static const Schema schema = generate_demo(0).schema;
  AreaQuery query;
  try {
    query = parse_query_json(schema, fuzz::as_text(data, size), "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  if (query.area.size() != schema.dimension_count() || query.measure >= schema.measures().size())
    fuzz::broken("a query read does not fit the cube");
  for (size_t d = 0; d < query.area.size(); ++d) {
    if (query.area[d].empty()) fuzz::broken("a query read has an empty element list");
    for (ElementId e : query.area[d])
      if (e >= schema.dimension(d).element_count()) fuzz::broken("a query read names an element outside its dimension");
  }
  return 0;
}
