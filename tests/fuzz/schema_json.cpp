// The schema JSON reader (formats/schema_json.cpp, over json_parse.cpp and
// Dimension::build): any text is read or refused with an InputError, and a
// schema that is read, written out and read back is written the same again.
#include "fuzz_input.hpp"
#include "gpuolap/formats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuolap;
  std::string written;
  try {
    written = schema_to_json(parse_schema_json(fuzz::as_text(data, size), "fuzz.json"));
  } catch (const InputError&) {
    return 0;
  }
  try {
    if (schema_to_json(parse_schema_json(written, "written back")) != written)
      fuzz::broken("a schema written and read back is written differently");
  } catch (const InputError& e) {
    fuzz::broken(std::string("a schema it wrote is refused: ") + e.what());
  }
  return 0;
}
