// The store loader (storage/cube_store.cpp, with the schema JSON it embeds).
// The input is a store file; its closing checksum is recomputed first, so
// that mutations reach the header checks, the embedded schema and the key
// checks behind it. Any file is loaded or refused with an InputError; a
// cube loaded, saved and loaded again is the same cube.
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>

#include "fuzz_input.hpp"
#include "gpuolap/cube_store.hpp"
#include "gpuolap/formats.hpp"

namespace {

using namespace gpuolap;

bool same_value(double a, double b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

void check_saved_again(const Cube& cube) {
  const auto dir = fuzz::scratch_dir() / "saved-again";
  save_store(dir, cube.schema, cube.facts);
  const Cube again = load_store(dir);
  if (schema_to_json(again.schema) != schema_to_json(cube.schema)) fuzz::broken("the schema changed when saved again");
  if (again.facts.size() != cube.facts.size() || again.facts.page_size() != cube.facts.page_size())
    fuzz::broken("the facts changed in size or page size when saved again");
  for (size_t i = 0; i < cube.facts.size(); ++i) {
    if (again.facts.keys()[i] != cube.facts.keys()[i]) fuzz::broken("a key changed when saved again");
    for (size_t m = 0; m < cube.facts.measure_count(); ++m)
      if (!same_value(again.facts.values(m)[i], cube.facts.values(m)[i])) fuzz::broken("a value changed when saved again");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes = fuzz::as_text(data, size);
  if (bytes.size() >= 8) {
    const uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &checksum, 8);
  }
  const auto dir = fuzz::scratch_dir() / "store";
  std::filesystem::create_directories(dir);
  std::ofstream(store_file(dir), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::optional<Cube> cube;
  try {
    cube.emplace(load_store(dir));
  } catch (const InputError&) {
    return 0;
  }
  try {
    check_saved_again(*cube);
  } catch (const InputError& e) {
    fuzz::broken(std::string("a cube it loaded cannot be saved and loaded again: ") + e.what());
  }
  return 0;
}
