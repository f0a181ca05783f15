// Cell paths (olap/cell_paths.cpp) on the shop cube's schema, as a query
// parameter gives them: a JSON array of names, or names separated by commas.
// Any text is read or refused with an InputError; a path read has one
// element per dimension, and a base cell's key names the same elements.
#include "fuzz_input.hpp"
#include "gpuolap/formats.hpp"
#include "olap/cell_paths.hpp"
#include "olap/shop_cube.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuolap;
  static const Schema schema = parse_schema_json(testing::kShopSchema, "shop schema");
  olap::CellPath path;
  try {
    path = olap::parse_cell_path_text(schema, fuzz::as_text(data, size), "path");
  } catch (const InputError&) {
    return 0;
  }
  if (path.elements.size() != schema.dimension_count()) fuzz::broken("a path read does not name every dimension");
  if (path.base && olap::key_elements(schema, path.key) != path.elements)
    fuzz::broken("a base cell's key names other elements than its path");
  if (olap::path_names(schema, path.elements).size() != schema.dimension_count())
    fuzz::broken("a path's names do not name every dimension");
  return 0;
}
