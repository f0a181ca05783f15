// The placement file's loader (groupby/shared_memory/placement_file.cpp).
// The input is a placement file; its closing checksum is recomputed first,
// so that mutations reach the header, size and slot checks behind it. Any
// file is loaded or refused with an InputError; a placement it loads names
// only slots that hold a value, and stored and loaded again is the same.
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <optional>

#include "fuzz_input.hpp"
#include "gpuolap/error.hpp"
#include "groupby/shared_memory/placement_file.hpp"

using namespace gpuolap;
using namespace gpuolap::groupby;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes = fuzz::as_text(data, size);
  if (bytes.size() >= 8) {
    const uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &checksum, 8);
  }
  const auto dir = fuzz::scratch_dir() / "placement";
  std::filesystem::create_directories(dir);
  std::ofstream(placement_path(dir, "f", "a", PlacementGoal::Write), std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  std::optional<StoredPlacement> stored;
  try {
    stored = load_placement(dir, "f", "a", PlacementGoal::Write);
  } catch (const InputError&) {
    return 0;
  }
  if (!stored) fuzz::broken("a placement file that exists was reported missing");
  const Placement& p = stored->placement;
  for (std::uint32_t s : p.column)
    if (s >= p.slot_value.size() || p.slot_value[s] >= p.cardinality) fuzz::broken("a row names a slot without a value");
  const auto again_dir = fuzz::scratch_dir() / "placement-again";
  std::filesystem::create_directories(again_dir);
  try {
    store_placement(again_dir, *stored);
    const auto again = load_placement(again_dir, "f", "a", PlacementGoal::Write);
    if (!again || again->placement.column != p.column || again->placement.slot_value != p.slot_value ||
        !(again->placement.shape == p.shape) || again->table_stamp != stored->table_stamp)
      fuzz::broken("the placement changed when stored and loaded again");
  } catch (const InputError& e) {
    fuzz::broken(std::string("a placement it loaded cannot be stored and loaded again: ") + e.what());
  }
  return 0;
}
