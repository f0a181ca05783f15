// Table file layout (little-endian), one file DIR/NAME.table:
//   header (64 bytes): magic "GPUOTBL\0", u32 version, u32 column count,
//                      u64 row count, u64 metadata bytes, zeros
//   metadata JSON: the table's name, its sort order, and per column its
//                  name, type, whether it has null flags, and the count and
//                  bytes of its dictionary
//   per column, each part padded with zeros to a multiple of 8 bytes:
//     values (8 bytes a row for int64 and double, 4 for date and string),
//     null flags (1 byte a row) when it has them,
//     dictionary (string): u64 offsets (count + 1), then the strings' bytes
//   u64 checksum: the XXH3-64 of the XXH3-64s of the header and metadata
//   (with their padding) and of each column's bytes (with its padding), in
//   order, so every byte is covered and the columns can be read and checked
//   in parallel, each straight into its vectors.
#include "table/database.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <tbb/parallel_for.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "gpuolap/error.hpp"
#include "storage/fsync_directory.hpp"
#include "gpuolap/huge_pages.hpp"

namespace gpuolap::table {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'G', 'P', 'U', 'O', 'T', 'B', 'L', '\0'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeaderBytes = 64;
constexpr const char* kSuffix = ".table";

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t column_count;
  std::uint64_t row_count;
  std::uint64_t metadata_bytes;
  char reserved[kHeaderBytes - 32];
};
static_assert(sizeof(Header) == kHeaderBytes);

std::uint64_t padded(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

std::uint64_t value_bytes(ColumnType t) { return (t == ColumnType::Int64 || t == ColumnType::Double) ? 8 : 4; }

class Hash {
 public:
  Hash() : state_(XXH3_createState()) { XXH3_64bits_reset(state_); }
  ~Hash() { XXH3_freeState(state_); }
  Hash(const Hash&) = delete;
  Hash& operator=(const Hash&) = delete;
  void update(const void* p, std::size_t n) { XXH3_64bits_update(state_, p, n); }
  void reset() { XXH3_64bits_reset(state_); }
  std::uint64_t digest() const { return XXH3_64bits_digest(state_); }

 private:
  XXH3_state_t* state_;
};

// A new file under a unique temporary name, written through a buffer and
// hashed as it goes; removed unless committed.
class TableWriter {
 public:
  explicit TableWriter(const fs::path& final_path) : final_(final_path) {
    std::string name = final_path.string() + ".tmp-XXXXXX";
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) throw InputError(fmt::format("{}: cannot create: {}", name, std::strerror(errno)));
    temp_ = name;
    ::fchmod(fd_, 0644);
    buffer_.reserve(kBufferBytes);
  }
  ~TableWriter() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(temp_.c_str());
  }
  TableWriter(const TableWriter&) = delete;
  TableWriter& operator=(const TableWriter&) = delete;

  void write(const void* data, std::size_t n) {
    hash_.update(data, n);
    const char* p = static_cast<const char*>(data);
    if (buffer_.size() + n > kBufferBytes) flush();
    if (n >= kBufferBytes) return write_raw(p, n);
    buffer_.insert(buffer_.end(), p, p + n);
  }
  void pad() {
    static constexpr char kZeros[8] = {};
    write(kZeros, padded(written()) - written());
  }
  std::uint64_t written() const { return written_ + buffer_.size(); }
  // Ends a part of the checksum: the header with the metadata, or a column.
  void end_part() {
    part_digests_.push_back(hash_.digest());
    hash_.reset();
  }
  void commit() {
    const std::uint64_t checksum = XXH3_64bits(part_digests_.data(), part_digests_.size() * 8);
    flush();
    write_raw(reinterpret_cast<const char*>(&checksum), sizeof checksum);
    if (::fsync(fd_) != 0) fail("fsync");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("close");
    if (::rename(temp_.c_str(), final_.c_str()) != 0) fail("rename");
    committed_ = true;
    fsync_directory(final_.parent_path());
  }

 private:
  static constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
  void flush() {
    write_raw(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  void write_raw(const char* p, std::size_t n) {
    while (n > 0) {
      const ssize_t w = ::write(fd_, p, std::min<std::size_t>(n, std::size_t{1} << 30));
      if (w < 0) {
        if (errno == EINTR) continue;
        fail("write");
      }
      p += w;
      n -= static_cast<std::size_t>(w);
      written_ += static_cast<std::uint64_t>(w);
      start_writeback();
    }
  }
  // Asks the kernel to start writing what is written so far to the disk,
  // every kWritebackBytes, without waiting: the disk then works while the
  // rest is written, and the fsync at the end waits only for the tail.
  void start_writeback() {
    if (written_ - writeback_from_ < kWritebackBytes) return;
    ::sync_file_range(fd_, static_cast<off_t>(writeback_from_), static_cast<off_t>(written_ - writeback_from_),
                      SYNC_FILE_RANGE_WRITE);  // a hint: the fsync still makes it durable, whatever this does
    writeback_from_ = written_;
  }
  static constexpr std::uint64_t kWritebackBytes = std::uint64_t{16} << 20;
  [[noreturn]] void fail(const char* what) {
    throw InputError(fmt::format("{}: {} failed: {}", temp_.string(), what, std::strerror(errno)));
  }

  fs::path final_, temp_;
  int fd_ = -1;
  bool committed_ = false;
  Hash hash_;
  std::vector<std::uint64_t> part_digests_;
  std::vector<char> buffer_;
  std::uint64_t written_ = 0;
  std::uint64_t writeback_from_ = 0;
};

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads a part of a table file from `offset` on, hashing every byte; readers
// of different parts may run at once.
class TableReader {
 public:
  TableReader(int fd, const std::string& where, std::uint64_t offset) : fd_(fd), where_(where), offset_(offset) {}
  void read(void* data, std::uint64_t n) {
    char* p = static_cast<char*>(data);
    std::uint64_t left = n;
    while (left > 0) {
      const ssize_t r = ::pread(fd_, p, std::min<std::uint64_t>(left, std::uint64_t{1} << 30),
                                static_cast<off_t>(offset_ + (n - left)));
      if (r < 0) {
        if (errno == EINTR) continue;
        throw InputError(fmt::format("{}: cannot read: {}", where_, std::strerror(errno)));
      }
      if (r == 0) throw InputError(fmt::format("{}: truncated while reading", where_));
      p += r;
      left -= static_cast<std::uint64_t>(r);
    }
    hash_.update(data, n);
    offset_ += n;
  }
  void skip_padding() {
    char zeros[8];
    const std::uint64_t n = padded(offset_) - offset_;
    read(zeros, n);
    for (std::uint64_t i = 0; i < n; ++i)
      if (zeros[i] != 0) throw InputError(fmt::format("{}: corrupt: padding that is not zero", where_));
  }
  std::uint64_t digest() const { return hash_.digest(); }
  std::uint64_t offset() const { return offset_; }

 private:
  int fd_;
  const std::string& where_;
  Hash hash_;
  std::uint64_t offset_;
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The header and metadata of a table file: its columns without values, and
// what each stores; the sizes checked against the file's.
struct Layout {
  Header header{};
  std::shared_ptr<Table> table = std::make_shared<Table>();
  struct Part {
    bool nullable = false;
    std::uint64_t dictionary_count = 0, dictionary_bytes = 0;
    std::uint64_t offset = 0;  // where the column's bytes start in the file
  };
  std::vector<Part> parts;
};

Layout read_layout(TableReader& in, std::uint64_t file_bytes, const std::string& where, std::string_view name) {
  Layout layout;
  Header& h = layout.header;
  auto& table = layout.table;
  auto& parts = layout.parts;
  using Part = Layout::Part;
  if (file_bytes < kHeaderBytes + 8)
    throw InputError(fmt::format("{}: truncated: {} bytes, shorter than the header", where, file_bytes));
  in.read(&h, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) throw InputError(fmt::format("{}: not a gpuolap table file", where));
  if (h.version != kVersion)
    throw InputError(fmt::format("{}: table file version {}; this gpuolap reads version {}", where, h.version, kVersion));
  // Sizes come from a file not trusted yet: bound them before allocating.
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 48;
  if (h.row_count > kLimit || h.metadata_bytes > file_bytes || h.column_count > 100000)
    throw InputError(fmt::format("{}: corrupt header", where));
  std::string metadata(h.metadata_bytes, '\0');
  in.read(metadata.data(), metadata.size());
  in.skip_padding();

  std::uint64_t expected = padded(kHeaderBytes + h.metadata_bytes);
  try {
    const nlohmann::json meta = nlohmann::json::parse(metadata);
    table->name = meta.at("name").get<std::string>();
    table->sort_order = meta.at("sort_order").get<std::vector<std::string>>();
    const auto& columns = meta.at("columns");
    if (!columns.is_array() || columns.size() != h.column_count) throw InputError("column count differs from the header");
    for (const auto& c : columns) {
      Column column;
      column.name = c.at("name").get<std::string>();
      column.type = parse_type(c.at("type").get<std::string>());
      Part part{c.at("nullable").get<bool>(), c.at("dictionary_count").get<std::uint64_t>(),
                c.at("dictionary_bytes").get<std::uint64_t>(), expected};
      if (part.dictionary_count > kLimit || part.dictionary_bytes > kLimit) throw InputError("dictionary too large");
      if (column.type != ColumnType::String && (part.dictionary_count || part.dictionary_bytes))
        throw InputError("a dictionary on a column that is no string");
      expected += padded(h.row_count * value_bytes(column.type));
      if (part.nullable) expected += padded(h.row_count);
      if (column.type == ColumnType::String) expected += padded(8 * (part.dictionary_count + 1) + part.dictionary_bytes);
      table->columns.push_back(std::move(column));
      parts.push_back(part);
    }
  } catch (const std::exception& e) {
    throw InputError(fmt::format("{}: corrupt metadata: {}", where, e.what()));
  }
  if (table->name != name) throw InputError(fmt::format("{}: corrupt: it holds table '{}'", where, clip_for_message(table->name)));
  expected += 8;
  if (file_bytes < expected)
    throw InputError(fmt::format("{}: truncated: {} bytes, the metadata announces {}", where, file_bytes, expected));
  if (file_bytes > expected)
    throw InputError(fmt::format("{}: corrupt: {} bytes after the end of the data", where, file_bytes - expected));

  return layout;
}

}  // namespace

Database::Database(fs::path dir, bool create_missing) : dir_(std::move(dir)) {
  std::error_code ec;
  if (create_missing && !fs::exists(dir_, ec)) {
    fs::create_directories(dir_, ec);
    if (ec) throw InputError(fmt::format("{}: cannot create the database directory: {}", dir_.string(), ec.message()));
  }
  if (!fs::exists(dir_, ec)) throw InputError(fmt::format("{}: no such database directory", dir_.string()));
  if (!fs::is_directory(dir_, ec)) throw InputError(fmt::format("{}: not a directory (a database is one)", dir_.string()));
}

fs::path Database::table_path(std::string_view name) const { return dir_ / (std::string(name) + kSuffix); }

std::vector<std::string> Database::table_names() const {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string file = entry.path().filename().string();
    if (file.size() <= std::strlen(kSuffix) || !file.ends_with(kSuffix)) continue;
    const std::string name = file.substr(0, file.size() - std::strlen(kSuffix));
    if (is_valid_name(name) && entry.is_regular_file(ec)) names.push_back(name);
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the database: {}", dir_.string(), ec.message()));
  std::sort(names.begin(), names.end());
  return names;
}

bool Database::has_table(std::string_view name) const {
  std::error_code ec;
  return is_valid_name(name) && fs::is_regular_file(table_path(name), ec);
}

namespace {

// The table file of `name`, open for reading, and its size; an unknown
// name is an error naming the closest.
struct OpenTable {
  std::string where;
  std::unique_ptr<FileDescriptor> fd;
  std::uint64_t file_bytes = 0;
};

OpenTable open_table(const Database& db, std::string_view name) {
  if (!db.has_table(name)) {
    const std::vector<std::string> names = db.table_names();
    std::string hint = " (it has no tables)";
    if (!names.empty()) {
      const auto closest = std::min_element(names.begin(), names.end(), [&](const auto& a, const auto& b) {
        return edit_distance(name, a) < edit_distance(name, b);
      });
      hint = fmt::format(" (closest: {})", *closest);
    }
    throw InputError(fmt::format("no table '{}' in the database {}{}", clip_for_message(name), db.dir().string(), hint));
  }
  OpenTable open;
  const fs::path path = db.table_path(name);
  open.where = path.string();
  open.fd = std::make_unique<FileDescriptor>(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (open.fd->get() < 0) throw InputError(fmt::format("{}: cannot open: {}", open.where, std::strerror(errno)));
  struct stat st {};
  if (::fstat(open.fd->get(), &st) != 0)
    throw InputError(fmt::format("{}: cannot stat: {}", open.where, std::strerror(errno)));
  open.file_bytes = static_cast<std::uint64_t>(st.st_size);
  ::posix_fadvise(open.fd->get(), 0, 0, POSIX_FADV_SEQUENTIAL);
  return open;
}

}  // namespace

TableSummary Database::summary(std::string_view name) const {
  const OpenTable open = open_table(*this, name);
  TableReader in(open.fd->get(), open.where, 0);
  const Layout layout = read_layout(in, open.file_bytes, open.where, name);
  TableSummary summary;
  summary.name = layout.table->name;
  summary.rows = layout.header.row_count;
  summary.file_bytes = open.file_bytes;
  summary.sort_order = layout.table->sort_order;
  for (std::size_t i = 0; i < layout.parts.size(); ++i)
    summary.columns.push_back({layout.table->columns[i].name, layout.table->columns[i].type, layout.parts[i].nullable,
                               layout.parts[i].dictionary_count});
  return summary;
}

std::shared_ptr<const Table> Database::load(std::string_view name) const {
  const OpenTable open = open_table(*this, name);
  const std::string& where = open.where;
  TableReader in(open.fd->get(), where, 0);
  Layout layout = read_layout(in, open.file_bytes, where, name);
  std::shared_ptr<Table> table = layout.table;
  const std::size_t rows = layout.header.row_count;
  // The columns in parallel, each with one read per vector.
  std::vector<std::uint64_t> digests(table->columns.size() + 1);
  digests[0] = in.digest();
  tbb::parallel_for(std::size_t{0}, table->columns.size(), [&](std::size_t i) {
    Column& c = table->columns[i];
    const Layout::Part& part = layout.parts[i];
    TableReader column(open.fd->get(), where, part.offset);
    switch (c.type) {
      case ColumnType::Int64: resize_on_huge_pages(c.int64s, rows); column.read(c.int64s.data(), rows * 8); break;
      case ColumnType::Double: resize_on_huge_pages(c.doubles, rows); column.read(c.doubles.data(), rows * 8); break;
      case ColumnType::Date:
      case ColumnType::String: resize_on_huge_pages(c.int32s, rows); column.read(c.int32s.data(), rows * 4); break;
    }
    column.skip_padding();
    if (part.nullable) {
      resize_on_huge_pages(c.nulls, rows);
      column.read(c.nulls.data(), rows);
      column.skip_padding();
    }
    if (c.type == ColumnType::String) {
      // The file's offsets are 0 and then each value's end: the buffers are
      // the dictionary's own.
      std::uint64_t first = 0;
      column.read(&first, sizeof first);
      std::vector<std::uint64_t> ends(part.dictionary_count);
      column.read(ends.data(), ends.size() * 8);
      std::string bytes(part.dictionary_bytes, '\0');
      column.read(bytes.data(), bytes.size());
      column.skip_padding();
      if (first != 0 || (ends.empty() ? 0 : ends.back()) != bytes.size() || !std::is_sorted(ends.begin(), ends.end()))
        throw InputError(fmt::format("{}: corrupt: column {}'s dictionary offsets", where, clip_for_message(c.name)));
      c.dictionary = Dictionary(std::move(bytes), std::move(ends));
    }
    digests[i + 1] = column.digest();
  });
  TableReader tail(open.fd->get(), where, open.file_bytes - 8);
  std::uint64_t checksum = 0;
  tail.read(&checksum, sizeof checksum);
  if (checksum != XXH3_64bits(digests.data(), digests.size() * 8))
    throw InputError(fmt::format("{}: corrupt: checksum mismatch", where));
  try {
    check_table(*table);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: corrupt: {}", where, e.what()));
  }
  return table;
}

void Database::store(const Table& table) const {
  check_table(table);
  nlohmann::json meta;
  meta["name"] = table.name;
  meta["sort_order"] = table.sort_order;
  meta["columns"] = nlohmann::json::array();
  for (const Column& c : table.columns) {
    const std::uint64_t dictionary_bytes = c.dictionary.bytes().size();
    meta["columns"].push_back({{"name", c.name},
                               {"type", std::string(type_name(c.type))},
                               {"nullable", !c.nulls.empty()},
                               {"dictionary_count", c.dictionary.size()},
                               {"dictionary_bytes", dictionary_bytes}});
  }
  const std::string metadata = meta.dump();
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.column_count = static_cast<std::uint32_t>(table.columns.size());
  h.row_count = table.row_count();
  h.metadata_bytes = metadata.size();

  TableWriter out(table_path(table.name));
  out.write(&h, sizeof h);
  out.write(metadata.data(), metadata.size());
  out.pad();
  out.end_part();
  for (const Column& c : table.columns) {
    switch (c.type) {
      case ColumnType::Int64: out.write(c.int64s.data(), c.int64s.size() * 8); break;
      case ColumnType::Double: out.write(c.doubles.data(), c.doubles.size() * 8); break;
      case ColumnType::Date:
      case ColumnType::String: out.write(c.int32s.data(), c.int32s.size() * 4); break;
    }
    out.pad();
    if (!c.nulls.empty()) {
      out.write(c.nulls.data(), c.nulls.size());
      out.pad();
    }
    if (c.type == ColumnType::String) {
      const std::uint64_t first = 0;
      out.write(&first, 8);
      out.write(c.dictionary.ends().data(), c.dictionary.size() * 8);
      out.write(c.dictionary.bytes().data(), c.dictionary.bytes().size());
      out.pad();
    }
    out.end_part();
  }
  out.commit();
}

}  // namespace gpuolap::table
