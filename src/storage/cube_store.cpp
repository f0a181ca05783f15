// Store layout (little-endian), one file DIR/cube.gpuolap:
//   header (64 bytes): magic "GPUOLAP\0", u32 version, u32 measure count,
//                      u64 schema bytes, u64 fact count, u64 page size, zeros
//   schema JSON, fact keys (u64 each), one f64 column per measure
//   u64 XXH3-64 of every byte before it
#include "gpuolap/cube_store.hpp"
#include "gpuolap/formats.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "fsync_directory.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'O', 'L', 'A', 'P', '\0'};
constexpr size_t kHeaderBytes = 64;
constexpr size_t kChunkBytes = size_t{64} << 20;

struct Header {
  char magic[8];
  uint32_t version;
  uint32_t measure_count;
  uint64_t schema_bytes;
  uint64_t fact_count;
  uint64_t page_size;
  char reserved[kHeaderBytes - 40];
};
static_assert(sizeof(Header) == kHeaderBytes);

struct HashState {
  HashState() : state(XXH3_createState()) { XXH3_64bits_reset(state); }
  ~HashState() { XXH3_freeState(state); }
  HashState(const HashState&) = delete;
  HashState& operator=(const HashState&) = delete;
  void update(const void* data, size_t n) { XXH3_64bits_update(state, data, n); }
  uint64_t digest() const { return XXH3_64bits_digest(state); }
  XXH3_state_t* state;
};

// Writes a file through a POSIX descriptor so it can be fsynced; hashes as it goes.
class StoreWriter {
 public:
  // Creates a new file named from `pattern` (ending in XXXXXX), unique even
  // against another process saving into the same directory.
  explicit StoreWriter(const fs::path& pattern) {
    std::string name = pattern.string();
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) throw InputError(fmt::format("{}: cannot create: {}", pattern.parent_path().string(), std::strerror(errno)));
    path_ = name;
    ::fchmod(fd_, 0644);
  }
  const fs::path& path() const { return path_; }
  ~StoreWriter() {
    if (fd_ >= 0) ::close(fd_);
  }
  StoreWriter(const StoreWriter&) = delete;
  StoreWriter& operator=(const StoreWriter&) = delete;

  void write(const void* data, size_t n, const ProgressFn& progress = {}, uint64_t total = 0) {
    const char* p = static_cast<const char*>(data);
    while (n > 0) {
      const size_t chunk = std::min(n, kChunkBytes);
      hash_.update(p, chunk);
      write_raw(p, chunk);
      p += chunk;
      n -= chunk;
      written_ += chunk;
      if (progress) progress(written_, total);
    }
  }
  void finish() {
    const uint64_t checksum = hash_.digest();
    write_raw(&checksum, sizeof checksum);
    if (::fsync(fd_) != 0) fail("fsync");
    if (::close(fd_) != 0) {
      fd_ = -1;
      fail("close");
    }
    fd_ = -1;
  }

 private:
  void write_raw(const char* p, size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, n);
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("write");
      }
      p += w;
      n -= static_cast<size_t>(w);
    }
  }
  void write_raw(const void* p, size_t n) { write_raw(static_cast<const char*>(p), n); }
  [[noreturn]] void fail(const char* what) {
    throw InputError(fmt::format("{}: {} failed: {}", path_.string(), what, std::strerror(errno)));
  }

  fs::path path_;
  int fd_ = -1;
  HashState hash_;
  uint64_t written_ = 0;
};

}  // namespace

fs::path store_file(const fs::path& dir) { return dir / "cube.gpuolap"; }

bool store_exists(const fs::path& dir) { return fs::exists(store_file(dir)); }

void save_store(const fs::path& dir, const Schema& schema, const FactTable& facts,
                const ProgressFn& progress) {
  std::error_code ec;
  const bool created_dir = create_directories_durably(dir, ec);
  if (ec) throw InputError(fmt::format("{}: cannot create directory: {}", dir.string(), ec.message()));
  const fs::path final_path = store_file(dir);
  fs::path temp_path;
  try {
    const std::string schema_json = schema_to_json(schema);
    Header h{};
    std::memcpy(h.magic, kMagic, sizeof kMagic);
    h.version = kStoreVersion;
    h.measure_count = static_cast<uint32_t>(facts.measure_count());
    h.schema_bytes = schema_json.size();
    h.fact_count = facts.size();
    h.page_size = facts.page_size();
    const uint64_t total = kHeaderBytes + schema_json.size() + facts.size() * 8 * (1 + facts.measure_count());

    StoreWriter out(dir / "cube.gpuolap.tmp-XXXXXX");
    temp_path = out.path();
    out.write(&h, sizeof h);
    out.write(schema_json.data(), schema_json.size());
    out.write(facts.keys().data(), facts.size() * sizeof(uint64_t), progress, total);
    for (size_t m = 0; m < facts.measure_count(); ++m)
      out.write(facts.values(m).data(), facts.size() * sizeof(double), progress, total);
    out.finish();
    fs::rename(temp_path, final_path);
    fsync_directory(dir);
  } catch (...) {
    if (!temp_path.empty()) fs::remove(temp_path, ec);
    if (created_dir) fs::remove_all(dir, ec);
    throw;
  }
}

uint64_t store_checksum(const fs::path& dir) {
  const fs::path path = store_file(dir);
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(fmt::format("{}: no cube store file here", path.string()));
  // An empty or short file is a store cut short, not a missing one.
  const std::streamoff bytes = in.tellg();
  // (A 64-byte file holds a whole header: say what the smallest store is.)
  if (bytes < static_cast<std::streamoff>(kHeaderBytes + 8))
    throw InputError(fmt::format("{}: truncated: {} bytes, shorter than a header and a checksum ({} bytes)",
                                 path.string(), bytes, kHeaderBytes + 8));
  uint64_t checksum = 0;
  if (!in.seekg(-8, std::ios::end).read(reinterpret_cast<char*>(&checksum), sizeof checksum))
    throw InputError(fmt::format("{}: cannot read its checksum", path.string()));
  return checksum;
}

Cube load_store(const fs::path& dir, const ProgressFn& progress) {
  const fs::path path = store_file(dir);
  const std::string where = path.string();
  if (!fs::is_directory(dir)) throw InputError(fmt::format("{}: no such cube store directory", dir.string()));
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw InputError(fmt::format("{}: no cube store file here (create one with gpuolap create)", where));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open: {}", where, std::strerror(errno)));
  const uint64_t file_bytes = fs::file_size(path);

  Header h{};
  if (file_bytes < kHeaderBytes + 8 || !in.read(reinterpret_cast<char*>(&h), sizeof h))
    throw InputError(fmt::format("{}: truncated: {} bytes, shorter than a header and a checksum ({} bytes)", where,
                                 file_bytes, kHeaderBytes + 8));
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0)
    throw InputError(fmt::format("{}: not a gpuolap cube store", where));
  if (h.version != kStoreVersion)
    throw InputError(fmt::format("{}: store version {}; this gpuolap reads version {}", where, h.version,
                                 kStoreVersion));
  // Sizes come from a file we do not trust yet: check them before allocating.
  const uint64_t per_fact = 8 * (uint64_t{1} + h.measure_count);
  constexpr uint64_t kLimit = uint64_t{1} << 56;  // keeps the size arithmetic from overflowing
  if (h.measure_count > 4096 || h.schema_bytes > kLimit || h.fact_count > kLimit / per_fact || h.page_size == 0 ||
      h.page_size > (uint64_t{1} << 30))
    throw InputError(fmt::format("{}: corrupt header", where));
  const uint64_t expected = kHeaderBytes + h.schema_bytes + h.fact_count * per_fact + 8;
  if (file_bytes < expected)
    throw InputError(fmt::format("{}: truncated: {} bytes, the header announces {}", where, file_bytes, expected));
  if (file_bytes > expected)
    throw InputError(fmt::format("{}: corrupt: {} bytes after the end of the data", where, file_bytes - expected));

  HashState hash;
  hash.update(&h, sizeof h);
  uint64_t done = kHeaderBytes;
  auto read = [&](void* data, uint64_t n) {
    char* p = static_cast<char*>(data);
    while (n > 0) {
      const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kChunkBytes));
      if (!in.read(p, static_cast<std::streamsize>(chunk)))
        throw InputError(fmt::format("{}: truncated while reading", where));
      hash.update(p, chunk);
      p += chunk;
      n -= chunk;
      done += chunk;
      if (progress) progress(done, expected);
    }
  };
  std::string schema_json(h.schema_bytes, '\0');
  read(schema_json.data(), h.schema_bytes);
  std::vector<uint64_t> keys(h.fact_count);
  read(keys.data(), h.fact_count * 8);
  std::vector<std::vector<double>> values(h.measure_count, std::vector<double>(h.fact_count));
  for (auto& column : values) read(column.data(), h.fact_count * 8);
  uint64_t checksum = 0;
  if (!in.read(reinterpret_cast<char*>(&checksum), sizeof checksum))
    throw InputError(fmt::format("{}: truncated: no checksum", where));
  if (checksum != hash.digest())
    throw InputError(fmt::format("{}: corrupt: checksum mismatch", where));

  Schema schema = [&] {
    try {
      return parse_schema_json(schema_json, where + " (embedded schema)");
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: corrupt: {}", where, e.what()));
    }
  }();
  if (schema.measures().size() != h.measure_count)
    throw InputError(fmt::format("{}: corrupt: {} measure columns for {} measures", where,
                                 h.measure_count, schema.measures().size()));
  // The checksum only proves the file is what was written: a key must also
  // name existing base elements, or engines would index past their maps.
  const KeyCodec& codec = schema.codec();
  const uint64_t unused_bits = codec.total_bits() >= 64 ? 0 : ~uint64_t{0} << codec.total_bits();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i > 0 && keys[i] <= keys[i - 1]) throw InputError(fmt::format("{}: corrupt: fact keys out of order", where));
    bool valid = (keys[i] & unused_bits) == 0;
    for (size_t d = 0; d < schema.dimension_count() && valid; ++d)
      valid = codec.decode(keys[i], d) < schema.dimension(d).base_count();
    if (!valid) throw InputError(fmt::format("{}: corrupt: fact {} has a key outside the cube", where, i));
  }
  FactTable facts(schema.codec(), std::move(keys), std::move(values), h.page_size);
  return Cube{std::move(schema), std::move(facts)};
}

}  // namespace gpuolap
