#include "htree/durable_htree.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include "gpuolap/error.hpp"
#include "gpuolap/store_lock.hpp"
#include "htree/htree_io.hpp"
#include "storage/atomic_file.hpp"

namespace gpuolap::htree {
namespace {

namespace fs = std::filesystem;

constexpr char kSnapshotMagic[8] = {'G', 'P', 'U', 'O', 'L', 'A', 'P', 'H'};
constexpr char kLogMagic[8] = {'G', 'P', 'U', 'O', 'L', 'A', 'P', 'B'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kLogHeader = 32;

fs::path snapshot_path(const fs::path& dir) { return dir / "htree.snapshot"; }
fs::path log_path(const fs::path& dir) { return dir / "htree.log"; }

[[noreturn]] void fail(const fs::path& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path.string(), what));
}

struct Writer {
  std::vector<char> bytes;
  void raw(const void* p, std::size_t n) { bytes.insert(bytes.end(), static_cast<const char*>(p), static_cast<const char*>(p) + n); }
  template <typename T>
  void put(T v) { raw(&v, sizeof v); }
  void text(const std::string& s) {
    put<std::uint32_t>(static_cast<std::uint32_t>(s.size()));
    raw(s.data(), s.size());
  }
};

// Reads what a Writer wrote; running past the end is corruption.
struct Reader {
  const char* p;
  std::size_t left;
  const fs::path& path;
  void raw(void* out, std::size_t n) {
    if (n > left) fail(path, "corrupt: truncated inside its contents");
    if (n) std::memcpy(out, p, n);  // an empty vector's data() may be null
    p += n;
    left -= n;
  }
  template <typename T>
  T get() {
    T v;
    raw(&v, sizeof v);
    return v;
  }
  std::string text() {
    const std::uint32_t n = get<std::uint32_t>();
    if (n > left) fail(path, "corrupt: a name or value longer than the file");
    std::string s(p, n);
    p += n;
    left -= n;
    return s;
  }
  // A count of items of `each` bytes that the rest of the file can hold.
  std::uint64_t count(std::size_t each) {
    const std::uint64_t n = get<std::uint64_t>();
    if (each && n > left / each) fail(path, "corrupt: a count larger than the file");
    return n;
  }
};

void write_atomically(const fs::path& path, const std::vector<char>& bytes) {
  write_file_atomically(path, bytes.data(), bytes.size());
}

std::vector<char> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  return std::vector<char>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The snapshot of `tree`; its checksum in `checksum`.
std::vector<char> snapshot_bytes(const HTree& tree, std::uint64_t& checksum) {
  const LeafRows leaves = leaves_of_tree(tree);
  Writer w;
  w.raw(kSnapshotMagic, 8);
  w.put(kVersion);
  w.put<std::uint32_t>(static_cast<std::uint32_t>(tree.dimensions.size()));
  w.text(tree.measure);
  w.put<std::uint64_t>(tree.tuples);
  for (std::size_t d = 0; d < tree.dimensions.size(); ++d) {
    w.text(tree.dimensions[d]);
    w.put<std::uint8_t>(static_cast<std::uint8_t>(tree.dictionaries[d].type));
    w.put<std::uint64_t>(tree.dictionaries[d].values.size());
    for (const std::string& v : tree.dictionaries[d].values) w.text(v);
  }
  w.put<std::uint64_t>(leaves.size());
  for (const auto& col : leaves.codes) w.raw(col.data(), col.size() * 4);
  w.raw(leaves.aggregate.data(), leaves.size() * sizeof(Aggregate));
  checksum = XXH3_64bits(w.bytes.data(), w.bytes.size());
  w.put(checksum);
  return std::move(w.bytes);
}

// The tree of a snapshot file, its levels built on the CPU (no sort: the
// leaves are stored in order).
HTree read_snapshot(const fs::path& path, std::uint64_t& checksum) {
  const std::vector<char> bytes = read_file(path);
  if (bytes.size() < 24 || std::memcmp(bytes.data(), kSnapshotMagic, 8) != 0) fail(path, "not an H-tree snapshot");
  std::memcpy(&checksum, bytes.data() + bytes.size() - 8, 8);
  if (checksum != XXH3_64bits(bytes.data(), bytes.size() - 8)) fail(path, "corrupt: checksum mismatch");
  Reader r{bytes.data() + 8, bytes.size() - 16, path};
  const std::uint32_t version = r.get<std::uint32_t>();
  if (version != kVersion) fail(path, fmt::format("snapshot version {}, this gpuolap reads version {}", version, kVersion));
  const std::uint32_t m = r.get<std::uint32_t>();
  if (m == 0 || m > 64) fail(path, "corrupt: not 1 to 64 dimensions");
  HTree tree;
  tree.measure = r.text();
  tree.tuples = r.get<std::uint64_t>();
  for (std::uint32_t d = 0; d < m; ++d) {
    tree.dimensions.push_back(r.text());
    Dictionary dict;
    const std::uint8_t type = r.get<std::uint8_t>();
    if (type > 3) fail(path, "corrupt: an unknown column type");
    dict.type = static_cast<table::ColumnType>(type);
    const std::uint64_t n = r.count(4);
    for (std::uint64_t k = 0; k < n; ++k)
      if (dict.code(r.text()) != k) fail(path, "corrupt: a dictionary holds a value twice");
    tree.dictionaries.push_back(std::move(dict));
  }
  LeafRows leaves;
  const std::uint64_t n = r.count(4 * m + sizeof(Aggregate));
  leaves.codes.assign(m, std::vector<std::uint32_t>(n));
  for (auto& col : leaves.codes) r.raw(col.data(), n * 4);
  leaves.aggregate.resize(n);
  r.raw(leaves.aggregate.data(), n * sizeof(Aggregate));
  if (r.left) fail(path, "corrupt: bytes after its contents");
  for (std::size_t d = 0; d < m; ++d)
    for (std::uint32_t c : leaves.codes[d])
      if (c >= tree.dictionaries[d].values.size()) fail(path, "corrupt: a code outside its dictionary");
  for (std::size_t k = 1; k < n; ++k) {
    std::size_t d = 0;
    while (d < m && leaves.codes[d][k] == leaves.codes[d][k - 1]) ++d;
    if (d == m || leaves.codes[d][k] < leaves.codes[d][k - 1]) fail(path, "corrupt: leaves out of order");
  }
  build_levels(tree, leaves);
  return tree;
}

std::vector<char> log_header(std::uint64_t snapshot_checksum) {
  Writer w;
  w.raw(kLogMagic, 8);
  w.put(kVersion);
  w.put<std::uint32_t>(0);
  w.put(snapshot_checksum);
  w.put<std::uint64_t>(XXH3_64bits(w.bytes.data(), 24));
  return std::move(w.bytes);
}

std::vector<char> batch_payload(const HTree& tree, const CodedTuples& batch, const std::vector<std::uint32_t>& before) {
  Writer w;
  const std::size_t m = tree.dimensions.size(), n = batch.size();
  w.put<std::uint32_t>(static_cast<std::uint32_t>(m));
  for (std::size_t d = 0; d < m; ++d) {
    const auto& values = tree.dictionaries[d].values;
    w.put<std::uint64_t>(before[d]);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(values.size() - before[d]));
    for (std::size_t k = before[d]; k < values.size(); ++k) w.text(values[k]);
  }
  w.put<std::uint64_t>(n);
  for (std::size_t d = 0; d < m; ++d) {
    const std::size_t size = tree.dictionaries[d].values.size();
    const std::uint8_t width = size <= 256 ? 1 : size <= 65536 ? 2 : 4;
    w.put(width);
    const auto& col = batch.codes[d];
    if (width == 4) {
      w.raw(col.data(), n * 4);
      continue;
    }
    const std::size_t at = w.bytes.size();
    w.bytes.resize(at + n * width);
    char* out = w.bytes.data() + at;
    for (std::size_t r = 0; r < n; ++r) {
      if (width == 1) out[r] = static_cast<char>(col[r]);
      else std::memcpy(out + 2 * r, &col[r], 2);  // little-endian: the low two bytes
    }
  }
  w.raw(batch.measure.data(), n * 8);
  w.put<std::uint8_t>(!batch.measure_null.empty());
  if (!batch.measure_null.empty()) w.raw(batch.measure_null.data(), n);
  return std::move(w.bytes);
}

// A logged batch into the tree's dictionaries and coded tuples.
CodedTuples read_batch(HTree& tree, const char* p, std::size_t size, const fs::path& path) {
  Reader r{p, size, path};
  const std::size_t m = tree.dimensions.size();
  if (r.get<std::uint32_t>() != m) fail(path, "corrupt: a batch of another tree");
  for (std::size_t d = 0; d < m; ++d) {
    Dictionary& dict = tree.dictionaries[d];
    if (r.get<std::uint64_t>() != dict.values.size()) fail(path, "corrupt: a batch's dictionary does not follow the tree's");
    const std::uint32_t added = r.get<std::uint32_t>();
    for (std::uint32_t k = 0; k < added; ++k) {
      const std::size_t size_before = dict.values.size();
      dict.code(r.text());
      if (dict.values.size() == size_before) fail(path, "corrupt: a batch adds a value its dictionary has");
    }
  }
  CodedTuples b;
  const std::uint64_t n = r.count(m + 8);
  b.codes.assign(m, std::vector<std::uint32_t>(n));
  for (auto& col : b.codes) {
    const std::uint8_t width = r.get<std::uint8_t>();
    if (width != 1 && width != 2 && width != 4) fail(path, "corrupt: a code width other than 1, 2 or 4 bytes");
    if (n > r.left / width) fail(path, "corrupt: a batch longer than its record");
    const auto* bytes = reinterpret_cast<const unsigned char*>(r.p);
    for (std::uint64_t k = 0; k < n; ++k) {
      std::uint32_t v = 0;
      std::memcpy(&v, bytes + k * width, width);  // little-endian: the low bytes
      col[k] = v;
    }
    r.p += n * width;
    r.left -= n * width;
  }
  b.measure.resize(n);
  r.raw(b.measure.data(), n * 8);
  if (r.get<std::uint8_t>()) {
    b.measure_null.resize(n);
    r.raw(b.measure_null.data(), n);
  }
  if (r.left) fail(path, "corrupt: bytes after a batch");
  for (std::size_t d = 0; d < m; ++d)
    for (std::uint32_t c : b.codes[d])
      if (c >= tree.dictionaries[d].values.size()) fail(path, "corrupt: a batch's code outside its dictionary");
  return b;
}

void write_all(int fd, const std::vector<char>& bytes, const fs::path& path) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(path, fmt::format("cannot append: {}", std::strerror(errno)));
    done += static_cast<std::size_t>(w);
  }
}

}  // namespace

void DurableHTree::create(const fs::path& dir, const HTree& tree, bool replace) {
  StoreLock lock(dir);
  if (fs::exists(snapshot_path(dir)) && !replace)
    throw InputError(fmt::format("{} holds an H-tree already (--force replaces it)", dir.string()));
  std::uint64_t checksum = 0;
  write_atomically(snapshot_path(dir), snapshot_bytes(tree, checksum));
  write_atomically(log_path(dir), log_header(checksum));
}

DurableHTree::DurableHTree(const fs::path& dir, Engine engine, GpuKnobs knobs)
    : dir_(dir), engine_(resolve_engine(engine)) {
  if (!fs::exists(snapshot_path(dir)))
    throw InputError(fmt::format("{}: no H-tree here (gpuolap htree build --out makes one)", dir.string()));
  lock_ = std::make_unique<StoreLock>(dir, [&] {
    std::fprintf(stderr, "gpuolap: %s is open in another process; waiting for it\n", dir.string().c_str());
  });
  tree_ = read_snapshot(snapshot_path(dir), snapshot_checksum_);
  report_.snapshot_bytes = fs::file_size(snapshot_path(dir));
  const fs::path lp = log_path(dir);
  std::vector<char> log = fs::exists(lp) ? read_file(lp) : std::vector<char>();
  std::uint64_t valid = 0;
  std::vector<CodedTuples> batches;
  if (log.size() >= kLogHeader && std::memcmp(log.data(), kLogMagic, 8) == 0 &&
      XXH3_64bits(log.data(), 24) == *reinterpret_cast<const std::uint64_t*>(log.data() + 24)) {
    std::uint64_t follows = 0;
    std::memcpy(&follows, log.data() + 16, 8);
    if (follows != snapshot_checksum_) {
      report_.log_problem = "a log older than the snapshot (a checkpoint cut short): ignored";
    } else {
      valid = kLogHeader;
      while (valid + 24 <= log.size()) {
        std::uint64_t size = 0, seq = 0;
        std::memcpy(&size, log.data() + valid, 8);
        std::memcpy(&seq, log.data() + valid + 8, 8);
        if (size > log.size() - valid - 24 || seq != next_sequence_) break;
        std::uint64_t sum = 0;
        std::memcpy(&sum, log.data() + valid + 16 + size, 8);
        if (sum != XXH3_64bits(log.data() + valid, 16 + size)) {
          if (valid + 24 + size < log.size())
            fail(lp, fmt::format("corrupt: the record at byte {} fails its checksum and more follow", valid));
          break;
        }
        batches.push_back(read_batch(tree_, log.data() + valid + 16, size, lp));
        ++next_sequence_;
        valid += 24 + size;
      }
      if (valid < log.size())
        report_.log_problem = fmt::format("a torn tail of {} bytes cut off (a batch never acknowledged)", log.size() - valid);
    }
  } else if (!log.empty()) {
    report_.log_problem = "a log without a whole header (a crash while it was created): started again";
  }
  if (valid == 0) {
    write_atomically(lp, log_header(snapshot_checksum_));
    valid = kLogHeader;
  }
  log_fd_ = ::open(lp.c_str(), O_WRONLY | O_CLOEXEC);
  if (log_fd_ < 0 || ::ftruncate(log_fd_, static_cast<off_t>(valid)) != 0 || ::lseek(log_fd_, 0, SEEK_END) < 0)
    fail(lp, fmt::format("cannot open for appending: {}", std::strerror(errno)));
  log_bytes_ = valid;
  report_.log_bytes = valid;
  if (engine_ == Engine::Gpu) {
    gpu_ = std::make_unique<GpuHTree>(-1, knobs);
    gpu_->upload(tree_);
  }
  for (const CodedTuples& b : batches) {
    ++report_.replayed_batches;
    report_.replayed_tuples += b.size();
    apply(b);
  }
}

DurableHTree::~DurableHTree() {
  if (log_fd_ >= 0) ::close(log_fd_);
}

void DurableHTree::forget_values_after(const std::vector<std::uint32_t>& before) {
  for (std::size_t d = 0; d < before.size(); ++d) {
    Dictionary& dict = tree_.dictionaries[d];
    for (std::size_t k = before[d]; k < dict.values.size(); ++k) dict.codes.erase(dict.values[k]);
    dict.values.resize(before[d]);
  }
}

void DurableHTree::apply(const CodedTuples& batch) {
  if (gpu_) {
    gpu_->update(cardinalities(tree_), batch);
    tree_.tuples += batch.size();
    host_levels_current_ = false;
  } else {
    update(tree_, batch, engine_);
  }
}

void DurableHTree::append(const table::Table& batch, const std::string& what) {
  const auto coded_from = std::chrono::steady_clock::now();
  const auto before = cardinalities(tree_);
  CodedTuples coded;
  try {
    coded = code_rows(tree_, batch, what);
  } catch (...) {
    forget_values_after(before);
    throw;
  }
  last_append_.code_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - coded_from).count();
  append_coded(coded, before);
}

void DurableHTree::append_coded(const CodedTuples& batch, const std::vector<std::uint32_t>& before) {
  const fs::path lp = log_path(dir_);
  const auto logged_from = std::chrono::steady_clock::now();
  Writer rec;
  const std::vector<char> payload = batch_payload(tree_, batch, before);
  rec.put<std::uint64_t>(payload.size());
  rec.put<std::uint64_t>(next_sequence_);
  rec.raw(payload.data(), payload.size());
  rec.put<std::uint64_t>(XXH3_64bits(rec.bytes.data(), rec.bytes.size()));
  try {
    write_all(log_fd_, rec.bytes, lp);
    if (::fdatasync(log_fd_) != 0) fail(lp, fmt::format("cannot sync: {}", std::strerror(errno)));
  } catch (...) {
    // Nothing half-written stays: the log is cut back, the dictionaries too.
    if (::ftruncate(log_fd_, static_cast<off_t>(log_bytes_)) == 0) ::lseek(log_fd_, 0, SEEK_END);
    forget_values_after(before);
    throw;
  }
  log_bytes_ += rec.bytes.size();
  ++next_sequence_;
  const auto applied_from = std::chrono::steady_clock::now();
  last_append_.log_ms = std::chrono::duration<double, std::milli>(applied_from - logged_from).count();
  apply(batch);
  last_append_.apply_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - applied_from).count();
  // Keep replay short: once the log outgrows the snapshot (and 64 MB), start again.
  if (log_bytes_ > std::max<std::uint64_t>(report_.snapshot_bytes, 64u << 20)) checkpoint();
}

const HTree& DurableHTree::host_tree() {
  if (!host_levels_current_) {
    gpu_->download(tree_);
    host_levels_current_ = true;
  }
  return tree_;
}

std::size_t DurableHTree::node_count() const { return gpu_ ? gpu_->node_count() : tree_.node_count(); }
std::size_t DurableHTree::leaf_count() const { return gpu_ ? gpu_->leaf_count() : tree_.leaf_count(); }

Answers DurableHTree::query(const QueryBatch& batch, QueryStats* stats) {
  if (gpu_) return gpu_->query(batch, stats);
  return htree::query(tree_, batch, engine_, stats);
}

void DurableHTree::checkpoint() {
  const HTree& t = host_tree();
  std::uint64_t checksum = 0;
  const std::vector<char> bytes = snapshot_bytes(t, checksum);
  write_atomically(snapshot_path(dir_), bytes);
  // A crash here leaves the old log naming the old snapshot: ignored on open.
  write_atomically(log_path(dir_), log_header(checksum));
  ::close(log_fd_);
  log_fd_ = ::open(log_path(dir_).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (log_fd_ < 0) fail(log_path(dir_), fmt::format("cannot open for appending: {}", std::strerror(errno)));
  snapshot_checksum_ = checksum;
  report_.snapshot_bytes = bytes.size();
  log_bytes_ = kLogHeader;
  next_sequence_ = 1;
}

void DurableHTree::reserve_for_updates() {
  if (gpu_) gpu_->reserve_for_updates();
}

std::vector<std::pair<std::string, double>> DurableHTree::gpu_stages() const {
  return gpu_ ? gpu_->stages() : std::vector<std::pair<std::string, double>>();
}
void DurableHTree::set_gpu_timing(bool on) {
  if (gpu_) gpu_->set_timing(on);
}

}  // namespace gpuolap::htree
