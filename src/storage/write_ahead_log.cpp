#include "gpuolap/write_ahead_log.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>

#include "fsync_directory.hpp"
#include "new_file.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'O', 'L', 'A', 'P', 'L'};
constexpr size_t kHeaderBytes = 32;
constexpr size_t kRecordHeaderBytes = 16;
constexpr uint32_t kWriteRecord = 1;
// A record larger than this is taken for a corrupt length field.
constexpr uint64_t kMaxRecordBytes = uint64_t{1} << 34;
// A record's place in its group commit, capped: a record further on claims a
// group that started later than it did, which only ever makes opening refuse.
constexpr uint64_t kMostGroupPlace = 0xFFFF;

// A record's kind and its place in its group commit share one u32 field.
uint32_t record_kind(uint32_t field) { return field & 0xFFFF; }
uint64_t group_place(uint32_t field) { return field >> 16; }

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads fixed-size fields from a payload; any overrun marks it bad.
struct Reader {
  const char* p;
  const char* end;
  bool ok = true;
  template <typename T>
  T get() {
    T v{};
    if (static_cast<size_t>(end - p) < sizeof v) {
      ok = false;
      return v;
    }
    std::memcpy(&v, p, sizeof v);
    p += sizeof v;
    return v;
  }
  bool has(uint64_t bytes) const { return static_cast<uint64_t>(end - p) >= bytes; }
};

std::string encode_payload(const LogRecord& record) {
  std::string out;
  put<uint32_t>(out, static_cast<uint32_t>(record.batches.size()));
  for (const WriteBatch& b : record.batches) {
    put<uint8_t>(out, static_cast<uint8_t>(b.mode));
    put<uint32_t>(out, static_cast<uint32_t>(b.present.size()));
    for (bool p : b.present) put<uint8_t>(out, p ? 1 : 0);
    put<uint64_t>(out, b.keys.size());
    out.append(reinterpret_cast<const char*>(b.keys.data()), b.keys.size() * 8);
    for (size_t m = 0; m < b.present.size(); ++m)
      if (b.present[m]) out.append(reinterpret_cast<const char*>(b.values[m].data()), b.keys.size() * 8);
  }
  return out;
}

// Decodes a payload whose checksum matched; "" or what does not fit the schema.
std::string decode_payload(const char* data, size_t size, const Schema& schema, LogRecord& record) {
  Reader r{data, data + size};
  const uint32_t batches = r.get<uint32_t>();
  const KeyCodec& codec = schema.codec();
  const uint64_t unused_bits = codec.total_bits() >= 64 ? 0 : ~uint64_t{0} << codec.total_bits();
  for (uint32_t i = 0; i < batches && r.ok; ++i) {
    WriteBatch b;
    const uint8_t mode = r.get<uint8_t>();
    if (mode > 2) return fmt::format("unknown write mode {}", mode);
    b.mode = static_cast<WriteMode>(mode);
    const uint32_t measures = r.get<uint32_t>();
    if (measures != schema.measures().size())
      return fmt::format("{} measures in a batch; the cube has {}", measures, schema.measures().size());
    b.present.resize(measures);
    b.values.resize(measures);
    size_t named = 0;
    for (uint32_t m = 0; m < measures; ++m) {
      b.present[m] = r.get<uint8_t>() != 0;
      named += b.present[m];
    }
    const uint64_t n = r.get<uint64_t>();
    if (!r.ok || !r.has(n * 8 * (1 + named)) || n > size) return "a batch runs past its record";
    b.keys.resize(n);
    if (n > 0) std::memcpy(b.keys.data(), r.p, n * 8);  // an empty vector's data() may be null
    r.p += n * 8;
    for (uint64_t key : b.keys) {
      bool valid = (key & unused_bits) == 0;
      for (size_t d = 0; d < schema.dimension_count() && valid; ++d)
        valid = codec.decode(key, d) < schema.dimension(d).base_count();
      if (!valid) return fmt::format("cell key {:#x} is outside the cube", key);
    }
    for (uint32_t m = 0; m < measures; ++m) {
      if (!b.present[m]) continue;
      b.values[m].resize(n);
      if (n > 0) std::memcpy(b.values[m].data(), r.p, n * 8);
      r.p += n * 8;
      // A live write never stores an infinity (NaN is an empty field): a
      // record carrying one was not written by a write that was accepted.
      for (uint64_t i = 0; i < n; ++i)
        if (std::isinf(b.values[m][i]))
          return fmt::format("cell key {:#x} has the value {} for measure {}", b.keys[i], b.values[m][i], m + 1);
    }
    record.batches.push_back(std::move(b));
  }
  if (!r.ok) return "a batch runs past its record";
  if (r.p != r.end) return "bytes after the last batch";
  return "";
}

struct WholeRecords {
  uint64_t found = 0;
  // Of those, records whose group commit started after `after` + 1: that
  // record had been synced, so acknowledged, before they were written.
  uint64_t proving = 0;
};

// Write records that start at or after `from` and match their checksums,
// found by trying every byte offset (a corrupt length hides where the next
// record starts): they tell corruption inside the log from a torn tail. A
// candidate is hashed only when its kind is a write and its sequence number
// could follow `after` in the bytes left (a record takes at least 28 bytes),
// so that the bytes of a record's rows rarely pass for a header of gigabytes.
// `unacknowledged_from`: the lowest sequence a group that a record found
// belongs to may start at without proving the records before it acknowledged
// (0: every record found proves it, as after a corrupt header).
WholeRecords whole_records_after(const std::string& bytes, size_t from, uint64_t after, uint64_t unacknowledged_from) {
  constexpr uint64_t kSmallestRecord = kRecordHeaderBytes + 4 + 8;
  WholeRecords whole;
  for (size_t at = from; at + kRecordHeaderBytes + 8 <= bytes.size();) {
    uint32_t length, kind;
    uint64_t sequence;
    std::memcpy(&length, bytes.data() + at, 4);
    std::memcpy(&kind, bytes.data() + at + 4, 4);
    std::memcpy(&sequence, bytes.data() + at + 8, 8);
    const uint64_t left = bytes.size() - at;
    const uint64_t total = kRecordHeaderBytes + uint64_t{length} + 8;
    const bool plausible = record_kind(kind) == kWriteRecord && group_place(kind) < sequence && total <= left &&
                           sequence > after && sequence - after <= (bytes.size() - from) / kSmallestRecord + 1;
    uint64_t checksum = 0;
    if (plausible) std::memcpy(&checksum, bytes.data() + at + total - 8, 8);
    if (plausible && XXH3_64bits(bytes.data() + at, total - 8) == checksum) {
      ++whole.found;
      whole.proving += sequence - group_place(kind) > unacknowledged_from;
      at += total;
    } else {
      ++at;
    }
  }
  return whole;
}

std::string header_bytes(uint64_t base_checksum) {
  std::string h(kMagic, sizeof kMagic);
  put<uint32_t>(h, kLogVersion);
  put<uint32_t>(h, 0);
  put<uint64_t>(h, base_checksum);
  put<uint64_t>(h, XXH3_64bits(h.data(), h.size()));
  return h;
}

[[noreturn]] void fail(const fs::path& path, const char* what) {
  throw std::runtime_error(fmt::format("{}: {} failed: {}", path.string(), what, std::strerror(errno)));
}

void write_all(int fd, const char* p, size_t n, const fs::path& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fail(path, "write");
    }
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

fs::path log_file(const fs::path& dir) { return dir / "cube.wal"; }

LogContents read_log(const fs::path& path, const Schema& schema) {
  LogContents log;
  std::error_code ec;
  if (!fs::exists(path, ec)) return log;
  log.exists = true;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  log.file_bytes = bytes.size();
  if (bytes.size() < kHeaderBytes || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0 ||
      XXH3_64bits(bytes.data(), 24) != *reinterpret_cast<const uint64_t*>(bytes.data() + 24)) {
    log.problem = fmt::format("the log header is torn or corrupt ({} bytes)", bytes.size());
    // A header is written whole before any record (a temporary file, renamed):
    // records after a bad one are corruption, not a crash.
    log.records_after_problem = whole_records_after(bytes, std::min(bytes.size(), kHeaderBytes), 0, 0).found;
    return log;
  }
  uint32_t version;
  std::memcpy(&version, bytes.data() + 8, 4);
  if (version < 1 || version > kLogVersion)
    throw InputError(fmt::format("{}: log version {}; this gpuolap reads versions 1 to {}", path.string(), version,
                                 kLogVersion));
  std::memcpy(&log.base_checksum, bytes.data() + 16, 8);

  size_t at = kHeaderBytes;
  uint64_t expected_sequence = 1;
  // Whether reading stopped at bytes a power cut can leave (a record torn
  // or failing its checksum), rather than at a whole record that is wrong.
  bool cut_short = false;
  while (at < bytes.size()) {
    const std::string where = fmt::format("record {} at byte {}", expected_sequence, at);
    if (bytes.size() - at < kRecordHeaderBytes + 8) {
      log.problem = fmt::format("{} is torn: {} bytes, shorter than a record", where, bytes.size() - at);
      cut_short = true;
      break;
    }
    uint32_t length, kind;
    uint64_t sequence;
    std::memcpy(&length, bytes.data() + at, 4);
    std::memcpy(&kind, bytes.data() + at + 4, 4);
    std::memcpy(&sequence, bytes.data() + at + 8, 8);
    const uint64_t total = kRecordHeaderBytes + uint64_t{length} + 8;
    if (total > kMaxRecordBytes || total > bytes.size() - at) {
      log.problem = fmt::format("{} is torn: it announces {} bytes, {} are left", where, total, bytes.size() - at);
      cut_short = true;
      break;
    }
    uint64_t checksum;
    std::memcpy(&checksum, bytes.data() + at + total - 8, 8);
    if (XXH3_64bits(bytes.data() + at, total - 8) != checksum) {
      log.problem = fmt::format("{} fails its checksum", where);
      cut_short = true;
      break;
    }
    const bool kind_fits = version == 1 ? kind == kWriteRecord
                                        : record_kind(kind) == kWriteRecord && group_place(kind) < sequence;
    if (!kind_fits || sequence != expected_sequence) {
      log.problem = fmt::format("{} is corrupt: kind {}, sequence {}", where, kind, sequence);
      break;
    }
    LogRecord record;
    record.sequence = sequence;
    if (std::string bad = decode_payload(bytes.data() + at + kRecordHeaderBytes, length, schema, record); !bad.empty()) {
      log.problem = fmt::format("{} is corrupt: {}", where, bad);
      break;
    }
    log.records.push_back(std::move(record));
    log.record_starts.push_back(at);
    at += total;
    ++expected_sequence;
  }
  log.valid_bytes = log.problem.empty() ? bytes.size() : at;
  if (!log.problem.empty()) {
    const WholeRecords whole =
        whole_records_after(bytes, at + 1, expected_sequence - 1, cut_short ? expected_sequence : 0);
    if (whole.proving > 0)
      log.records_after_problem = whole.found;
    else if (whole.found > 0)
      log.problem += fmt::format(
          "; the {} whole records after it were appended with it before one sync (a group commit cut short by a "
          "crash: a torn tail)",
          whole.found);
  }
  return log;
}

void WriteAheadLog::create(const fs::path& path, uint64_t base_checksum) {
  const fs::path temp = fs::path(path).concat(".tmp");
  const int fd = create_new_file(temp);
  if (fd < 0) fail(temp, "open");
  const std::string h = header_bytes(base_checksum);
  try {
    write_all(fd, h.data(), h.size(), temp);
    if (::fsync(fd) != 0) fail(temp, "fsync");
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  fs::rename(temp, path);
  fsync_directory(path.parent_path());
}

WriteAheadLog::WriteAheadLog(const fs::path& path, uint64_t valid_bytes, uint64_t next_sequence)
    : path_(path), bytes_(valid_bytes), next_sequence_(next_sequence) {
  fd_ = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);  // never through a link; read: its version
  if (fd_ < 0) fail(path, "open");
  struct stat st{};
  if (::fstat(fd_, &st) != 0) fail(path, "stat");
  if (static_cast<uint64_t>(st.st_size) != valid_bytes) {
    if (::ftruncate(fd_, static_cast<off_t>(valid_bytes)) != 0) fail(path, "truncate");
    if (::fsync(fd_) != 0) fail(path, "fsync");
  }
  if (::lseek(fd_, static_cast<off_t>(valid_bytes), SEEK_SET) < 0) fail(path, "seek");
  if (::pread(fd_, &version_, sizeof version_, 8) != sizeof version_) fail(path, "read the version of");
}

WriteAheadLog::~WriteAheadLog() {
  if (fd_ >= 0) ::close(fd_);
}

uint64_t WriteAheadLog::append(LogRecord& record) {
  record.sequence = next_sequence_;
  const std::string payload = encode_payload(record);
  if (payload.size() > UINT32_MAX) throw InputError("a write of more than 4 GiB does not fit one log record");
  std::string out;
  out.reserve(kRecordHeaderBytes + payload.size() + 8);
  put<uint32_t>(out, static_cast<uint32_t>(payload.size()));
  const uint64_t place = version_ == 1 ? 0 : std::min(unsynced_, kMostGroupPlace);
  put<uint32_t>(out, kWriteRecord | static_cast<uint32_t>(place << 16));
  put<uint64_t>(out, record.sequence);
  out += payload;
  put<uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  try {
    write_all(fd_, out.data(), out.size(), path_);
  } catch (...) {
    // Leave no torn record for the next append to follow.
    if (::ftruncate(fd_, static_cast<off_t>(bytes_)) == 0) ::lseek(fd_, static_cast<off_t>(bytes_), SEEK_SET);
    throw;
  }
  bytes_ += out.size();
  ++unsynced_;
  return next_sequence_++;
}

void WriteAheadLog::sync() {
  if (::fdatasync(fd_) != 0) fail(path_, "fdatasync");
  unsynced_ = 0;
}

}  // namespace gpuolap
