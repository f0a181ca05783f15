// The durable H-tree's reader (htree/durable_htree.cpp): the input is a
// snapshot (its closing checksum recomputed first, so that mutations reach
// the checks behind it), or — when its first byte is odd — a batch log laid
// after a small valid snapshot (each whole record's checksum recomputed).
// Any input is opened or refused with an InputError; a tree it opens passes
// check_tree and answers the query of everything with its own total.
#include <xxhash.h>

#include <cstring>
#include <fstream>

#include "fuzz_input.hpp"
#include "gpuolap/error.hpp"
#include "htree/durable_htree.hpp"
#include "htree/htree_io.hpp"
#include "htree/int64_tree.hpp"

using namespace gpuolap;
using namespace gpuolap::htree;

namespace {

void write(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// A two-dimension tree of three tuples, stored once; its snapshot's bytes.
const std::string& valid_snapshot() {
  static const std::string bytes = [] {
    const auto dir = fuzz::scratch_dir() / "valid";
    testing::create_ab_tree(dir, {1, 1, 2}, {3, 4, 3}, {10, 20, 30});
    std::ifstream in(dir / "htree.snapshot", std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }();
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes = fuzz::as_text(data, size);
  const auto dir = fuzz::scratch_dir() / "tree";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  if (!bytes.empty() && (bytes[0] & 1)) {
    const std::string& snapshot = valid_snapshot();
    std::uint64_t checksum = 0;
    std::memcpy(&checksum, snapshot.data() + snapshot.size() - 8, 8);
    // The log's header names this snapshot; the input is its records.
    std::string log = "GPUOLAPB";
    const std::uint32_t version = 1, zero = 0;
    log.append(reinterpret_cast<const char*>(&version), 4).append(reinterpret_cast<const char*>(&zero), 4);
    log.append(reinterpret_cast<const char*>(&checksum), 8);
    const std::uint64_t header_sum = XXH3_64bits(log.data(), 24);
    log.append(reinterpret_cast<const char*>(&header_sum), 8);
    std::string records = bytes.substr(1);
    for (std::size_t at = 0; at + 24 <= records.size();) {
      std::uint64_t payload = 0;
      std::memcpy(&payload, records.data() + at, 8);
      if (payload > records.size() - at - 24) break;
      const std::uint64_t sum = XXH3_64bits(records.data() + at, 16 + payload);
      std::memcpy(records.data() + at + 16 + payload, &sum, 8);
      at += 24 + payload;
    }
    write(dir / "htree.snapshot", snapshot);
    write(dir / "htree.log", log + records);
  } else {
    if (bytes.size() >= 8) {
      const std::uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size() - 8);
      std::memcpy(bytes.data() + bytes.size() - 8, &checksum, 8);
    }
    write(dir / "htree.snapshot", bytes);
  }
  try {
    DurableHTree t(dir, Engine::CpuParallel);
    check_tree(t.meta());
    QueryBatch all{t.meta().dimensions.size(), std::pmr::vector<std::uint32_t>(t.meta().dimensions.size(), kAny)};
    const auto answer = t.query(all);
    if (t.leaf_count() && answer[0].count != t.meta().total.count) fuzz::broken("the query of everything is not the total");
  } catch (const InputError&) {
  }
  return 0;
}
