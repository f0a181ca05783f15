// The write-ahead log's reader (storage/write_ahead_log.cpp) and its replay
// (storage/durable_cube.cpp, check_log) on the shop cube. The input is a log
// file; its header checksum and the checksum closing each record (at the
// boundaries its length fields give) are recomputed first, so that
// mutations reach the record decoder, the write checks and the replay
// behind it. Any file is read: a log reader refuses nothing but another
// version (InputError); the rest is a problem reported in LogContents.
#include <xxhash.h>

#include <cstring>
#include <fstream>

#include "fuzz_input.hpp"
#include "gpuolap/durable_cube.hpp"
#include "gpuolap/write_ahead_log.hpp"
#include "olap/shop_cube.hpp"

namespace {

using namespace gpuolap;

constexpr size_t kHeaderBytes = 32, kRecordHeaderBytes = 16;

void recompute_checksums(std::string& bytes) {
  if (bytes.size() < kHeaderBytes) return;
  const uint64_t header = XXH3_64bits(bytes.data(), 24);
  std::memcpy(bytes.data() + 24, &header, 8);
  for (size_t at = kHeaderBytes; bytes.size() - at >= kRecordHeaderBytes + 8;) {
    uint32_t length;
    std::memcpy(&length, bytes.data() + at, 4);
    const uint64_t total = kRecordHeaderBytes + uint64_t{length} + 8;
    if (total > bytes.size() - at) return;
    const uint64_t checksum = XXH3_64bits(bytes.data() + at, total - 8);
    std::memcpy(bytes.data() + at + total - 8, &checksum, 8);
    at += total;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Cube shop = testing::shop_cube();
  std::string bytes = fuzz::as_text(data, size);
  recompute_checksums(bytes);
  // The log is taken to follow the snapshot it names, so that its records
  // are replayed (a stale log is only compared, never read further).
  uint64_t snapshot_checksum = 0;
  if (bytes.size() >= kHeaderBytes) std::memcpy(&snapshot_checksum, bytes.data() + 16, 8);
  const auto dir = fuzz::scratch_dir() / "log";
  std::filesystem::create_directories(dir);
  std::ofstream(log_file(dir), std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  LogContents log;
  try {
    log = check_log(dir, shop.schema, shop.facts, snapshot_checksum);
  } catch (const InputError&) {
    return 0;
  }
  if (log.records.size() != log.record_starts.size() || log.valid_bytes > log.file_bytes ||
      log.file_bytes != bytes.size())
    fuzz::broken("the log's contents do not add up");
  if (log.problem.empty() && log.valid_bytes != log.file_bytes)
    fuzz::broken("a log cut short reports no problem");
  return 0;
}
