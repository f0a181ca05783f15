#include "table/csv_loader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "formats/json_parse.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "table/date.hpp"
#include "gpuolap/huge_pages.hpp"
#include "table/string_codes.hpp"

namespace gpuolap::table {

namespace fs = std::filesystem;

namespace {

// The file's bytes, mapped read-only.
class MappedFile {
 public:
  explicit MappedFile(const fs::path& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) throw InputError(fmt::format("{}: is a directory, not a file", path.string()));
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(fmt::format("{}: cannot open: {}", path.string(), std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      ::close(fd);
      throw InputError(fmt::format("{}: cannot stat: {}", path.string(), std::strerror(errno)));
    }
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ > 0) {
      void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p == MAP_FAILED) {
        ::close(fd);
        throw InputError(fmt::format("{}: cannot map: {}", path.string(), std::strerror(errno)));
      }
      data_ = static_cast<const char*>(p);
      ::madvise(p, size_, MADV_SEQUENTIAL);
    }
    ::close(fd);
  }
  ~MappedFile() {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

struct Field {
  std::string_view text;  // between the quotes of a quoted field, "" still doubled
  bool quoted = false;
  bool escaped = false;  // holds "" that stands for one quote
  std::uint64_t line = 0;
};

// A parse error with where it happened, so that among the errors of parallel
// chunks the first in the file is reported.
struct CsvError {
  std::size_t offset;
  std::string message;
};

// Tokenizes records of one CSV text. Column names, once known, go into
// the messages.
class Tokenizer {
 public:
  Tokenizer(const char* begin, const char* end, const std::string& where, const std::vector<std::string>* names)
      : begin_(begin), end_(end), where_(where), names_(names) {}

  // Calls on_record(fields, line) for each record starting before
  // `chunk_end`, from `pos` (a record start on line `line`), at most `most`
  // of them; returns where the last one ended.
  template <class OnRecord>
  const char* each_record(const char* pos, const char* chunk_end, std::uint64_t line, OnRecord&& on_record,
                          std::size_t most = SIZE_MAX) {
    std::vector<Field>& fields = fields_;
    for (std::size_t records = 0; pos < chunk_end && records < most;) {
      if (*pos == '\n') {
        ++pos, ++line;
        continue;
      }
      if (*pos == '\r' && pos + 1 < end_ && pos[1] == '\n') {
        pos += 2, ++line;
        continue;
      }
      const std::uint64_t record_line = line;
      fields.clear();
      while (true) {
        Field f;
        f.line = line;
        if (pos < end_ && *pos == '"') {
          f.quoted = true;
          const char* start = ++pos;
          while (true) {
            const char* q = static_cast<const char*>(std::memchr(pos, '"', static_cast<std::size_t>(end_ - pos)));
            if (!q) fail(start - 1, f.line, fields.size(), "a quoted field that is never closed");
            line += static_cast<std::uint64_t>(std::count(pos, q, '\n'));
            if (q + 1 < end_ && q[1] == '"') {
              f.escaped = true;
              pos = q + 2;
              continue;
            }
            f.text = std::string_view(start, static_cast<std::size_t>(q - start));
            pos = q + 1;
            break;
          }
          if (pos < end_ && *pos != ',' && *pos != '\n' && !(*pos == '\r' && pos + 1 < end_ && pos[1] == '\n'))
            fail(pos, line, fields.size(), "a character after the closing quote (a quoted field must end there)");
        } else {
          const char* start = pos;
          while (pos < end_) {
            const char c = *pos;
            if (c == ',' || c == '\n') break;
            if (c == '"') fail(pos, line, fields.size(), "a quote inside an unquoted field (quote the whole field)");
            ++pos;
          }
          const char* stop = pos;
          if (pos < end_ && *pos == '\n' && stop > start && stop[-1] == '\r') --stop;
          f.text = std::string_view(start, static_cast<std::size_t>(stop - start));
        }
        fields.push_back(f);
        if (pos == end_) break;
        if (*pos == ',') {
          ++pos;
          continue;
        }
        if (*pos == '\r') ++pos;
        ++pos, ++line;  // the '\n'
        break;
      }
      on_record(fields, record_line, pos);
      ++records;
    }
    return pos;
  }

  [[noreturn]] void fail(const char* at, std::uint64_t line, std::size_t field, const std::string& what) const {
    throw CsvError{static_cast<std::size_t>(at - begin_), fmt::format("{}: {}: {}", where_, place(line, field), what)};
  }
  // "line L, column C (name)"
  std::string place(std::uint64_t line, std::size_t field) const {
    std::string s = fmt::format("line {}, column {}", line, field + 1);
    if (names_ && field < names_->size()) s += fmt::format(" ({})", clip_for_message((*names_)[field]));
    return s;
  }

 private:
  const char* begin_;
  const char* end_;
  const std::string& where_;
  const std::vector<std::string>* names_;
  std::vector<Field> fields_;
};

std::string unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '"') ++i;  // "" stands for one quote
  }
  return out;
}

// [-]digits and its value: at most 18 digits, which no int64 overflows, in
// one loop; longer ones through from_chars. false for anything else.
bool parse_short_integer(std::string_view t, bool& negative, std::uint64_t& magnitude, std::size_t& digits) {
  std::size_t i = 0;
  negative = !t.empty() && t[0] == '-';
  i = negative;
  magnitude = 0;
  for (; i < t.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(t[i]) - '0';
    if (d > 9) return false;
    magnitude = magnitude * 10 + d;
  }
  digits = t.size() - negative;
  return digits > 0 && digits <= 18;
}

bool parse_int64(std::string_view t, std::int64_t& v) {
  bool negative;
  std::uint64_t magnitude;
  std::size_t digits;
  if (parse_short_integer(t, negative, magnitude, digits)) {
    v = negative ? -static_cast<std::int64_t>(magnitude) : static_cast<std::int64_t>(magnitude);
    return true;
  }
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size() && !t.empty() && t[0] != '+';
}

// [-]digits.digits with at most 15 digits in all (under 2^53) and at most 22
// after the point: the value is that integer over a power of ten, both
// exact doubles, and one IEEE division rounds it correctly, as from_chars
// does (Clinger's fast path). Prices, rates and quantities are of this
// form; the rest go through from_chars.
bool parse_plain_decimal(std::string_view t, double& v) {
  static constexpr double kPowers[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const bool negative = !t.empty() && t[0] == '-';
  std::uint64_t m = 0;
  std::size_t digits = 0, point = t.size();
  for (std::size_t i = negative; i < t.size(); ++i) {
    const unsigned d = static_cast<unsigned char>(t[i]) - '0';
    if (d <= 9) {
      m = m * 10 + d;
      ++digits;
    } else if (t[i] == '.' && point == t.size()) {
      point = i;
    } else {
      return false;
    }
  }
  const std::size_t fraction = point == t.size() ? 0 : t.size() - point - 1;
  if (digits == 0 || digits > 15 || fraction > 22) return false;
  const double x = static_cast<double>(m) / kPowers[fraction];
  v = negative ? -x : x;
  return true;
}

bool parse_double(std::string_view t, double& v) {
  if (t.empty()) return false;
  if (parse_plain_decimal(t, v)) return true;
  // from_chars takes "inf", "nan" and hex-free forms; only finite decimals are numbers here.
  const char first = t[0] == '-' ? (t.size() > 1 ? t[1] : '\0') : t[0];
  if (!((first >= '0' && first <= '9') || first == '.')) return false;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  return r.ec == std::errc() && r.ptr == t.data() + t.size() && std::isfinite(v);
}

// Which types a column's values so far all fit.
enum Fits : std::uint8_t { kFitsInt64 = 1, kFitsDouble = 2, kFitsDate = 4, kFitsAll = 7 };

// The types of `still` (those the column's values so far fit) that `t` fits
// too; only those are tried, and a YYYY-MM-DD shape, which no number has,
// only as a date.
std::uint8_t fits_of(std::string_view t, std::uint8_t still) {
  if (t.size() == 10 && t[4] == '-') {
    std::int32_t day;
    return (still & kFitsDate) && parse_date(t, day) ? kFitsDate : 0;
  }
  std::int64_t i;
  if ((still & kFitsInt64) && parse_int64(t, i)) return kFitsInt64 | kFitsDouble;
  double d;
  if ((still & kFitsDouble) && parse_double(t, d)) return kFitsDouble;
  return 0;
}

ColumnType type_of_fits(std::uint8_t fits, bool any_value) {
  if (!any_value) return ColumnType::String;
  if (fits & kFitsInt64) return ColumnType::Int64;
  if (fits & kFitsDouble) return ColumnType::Double;
  if (fits & kFitsDate) return ColumnType::Date;
  return ColumnType::String;
}

// The types that every value of a type fits (an int64 is a double too).
std::uint8_t fits_of_type(ColumnType type) {
  switch (type) {
    case ColumnType::Int64: return kFitsInt64 | kFitsDouble;
    case ColumnType::Double: return kFitsDouble;
    case ColumnType::Date: return kFitsDate;
    case ColumnType::String: break;
  }
  return 0;
}

// What a value of a type must be, for messages.
const char* described(ColumnType type) {
  switch (type) {
    case ColumnType::Int64: return "an int64 (an integer within 64 bits)";
    case ColumnType::Double: return "a double (a finite number)";
    case ColumnType::Date: return "a date (YYYY-MM-DD)";
    case ColumnType::String: break;
  }
  return "a string";
}

// Records of each chunk whose values guess the undeclared columns' types.
constexpr std::size_t kSampleRecords = 1024;
// A string column is kept by row only on a sample of at least this many values.
constexpr std::size_t kLeastSampleForRows = 64;

// The column's values array (as its type keeps them) resized to `rows`.
void size_values(Column& col, std::size_t rows) {
  switch (col.type) {
    case ColumnType::Int64: resize_on_huge_pages(col.int64s, rows); break;
    case ColumnType::Double: resize_on_huge_pages(col.doubles, rows); break;
    case ColumnType::Date:
    case ColumnType::String: resize_on_huge_pages(col.int32s, rows); break;
  }
}

// Rows [from, from + count) of the column's values and NULL flags moved to
// `to` (not after `from`; the ranges may overlap).
void move_rows(Column& col, std::size_t from, std::size_t to, std::size_t count) {
  auto move = [&](auto& values) { std::memmove(values.data() + to, values.data() + from, count * sizeof values[0]); };
  switch (col.type) {
    case ColumnType::Int64: move(col.int64s); break;
    case ColumnType::Double: move(col.doubles); break;
    case ColumnType::Date:
    case ColumnType::String: move(col.int32s); break;
  }
  move(col.nulls);
}

// An empty field is NULL, but a quoted empty one ("") is the empty string
// in a string column.
bool is_null_field(const Field& f, ColumnType type) { return f.text.empty() && !(f.quoted && type == ColumnType::String); }

// A value that is not NULL written at `row` as `type` (a string coded by
// `codes`); false where the text is no value of that type.
bool write_value(Column& col, ColumnType type, std::string_view text, std::size_t row, StringCodes& codes) {
  switch (type) {
    case ColumnType::Int64: return parse_int64(text, col.int64s[row]);
    case ColumnType::Double: return parse_double(text, col.doubles[row]);
    case ColumnType::Date: return parse_date(text, col.int32s[row]);
    case ColumnType::String: col.int32s[row] = codes.code(text); return true;
  }
  return false;
}

// What the reading of one chunk saw of a column whose type was guessed.
struct Seen {
  bool any_value = false;     // a field that is not empty
  bool quoted_empty = false;  // a quoted empty field (NULL unless the column is string)
  bool as_guessed = false;    // a value of the guessed type
  bool refused = false;       // a value that is not
  std::uint8_t refused_fits = kFitsAll;  // the types that every refused value fits
};

struct Chunk {
  const char* start = nullptr;  // a record start
  const char* end = nullptr;    // the next chunk's start
  std::uint64_t line = 0;       // of `start`
  // At most this many records: one a line break, and one more for the
  // file's last record if no line break ends it. The reading writes the
  // chunk's rows from `bound_row`, the bounds of the chunks before summed,
  // and they move to `first_row` once every chunk's count is known.
  std::size_t max_rows = 0;
  std::size_t bound_row = 0;
  std::size_t first_row = 0;
  std::size_t rows = 0;
  std::vector<std::uint8_t> fits;  // per column, of the sample (its first records)
  std::vector<std::uint8_t> any_value;
  std::vector<Seen> seen;  // per column
  // Per column: the strings of a string column coded here, in order of first
  // sight; the codes written are these until they are remapped.
  std::vector<StringCodes> distinct;
  // Per column, of the sample: the values, and the distinct ones among them
  // for a column whose strings might be kept by row (see by_row below).
  std::vector<std::size_t> sampled, sampled_distinct;
  // Unescaped fields kept by row: their bytes are not in the file.
  std::vector<std::unique_ptr<std::string>> kept;
  std::optional<CsvError> error;
};

// Cuts [body, end) into about `count` chunks at record starts: after a line
// break with an even number of quotes before it.
std::vector<Chunk> cut_chunks(const char* body, const char* end, std::uint64_t body_line, std::size_t count) {
  const std::size_t bytes = static_cast<std::size_t>(end - body);
  count = std::max<std::size_t>(1, std::min(count, bytes / 65536 + 1));
  auto section = [&](std::size_t i) { return body + bytes * i / count; };
  std::vector<std::size_t> quotes(count), lines(count);
  tbb::parallel_for(std::size_t{0}, count, [&](std::size_t i) {
    quotes[i] = static_cast<std::size_t>(std::count(section(i), section(i + 1), '"'));
    lines[i] = static_cast<std::size_t>(std::count(section(i), section(i + 1), '\n'));
  });
  std::vector<Chunk> chunks(1);
  chunks[0].start = body;
  chunks[0].line = body_line;
  std::size_t quotes_before = quotes[0], lines_before = lines[0];
  for (std::size_t i = 1; i < count; ++i) {
    const char* p = section(i);
    std::size_t q = quotes_before, l = lines_before;
    quotes_before += quotes[i];
    lines_before += lines[i];
    if (p < chunks.back().start) continue;
    while (p < end) {
      const char ch = *p++;
      if (ch == '"') ++q;
      if (ch == '\n') {
        ++l;
        if (q % 2 == 0) break;
      }
    }
    if (p >= end) break;
    if (p > chunks.back().start) {
      Chunk c;
      c.start = p;
      c.line = body_line + l;
      chunks.push_back(std::move(c));
    }
  }
  const std::size_t all_lines = std::accumulate(lines.begin(), lines.end(), std::size_t{0});
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const bool last = i + 1 == chunks.size();
    chunks[i].end = last ? end : chunks[i + 1].start;
    chunks[i].max_rows = last ? body_line + all_lines - chunks[i].line + 1 : chunks[i + 1].line - chunks[i].line;
  }
  return chunks;
}

}  // namespace

std::map<std::string, ColumnType> read_types_json(const fs::path& path) {
  const std::string where = path.string();
  const nlohmann::json j = parse_json(read_text_file(path), where);
  if (!j.is_object())
    throw InputError(fmt::format("{}: expected an object {{\"column\": \"int64|double|date|string\", ...}}", where));
  std::map<std::string, ColumnType> types;
  for (const auto& [name, type] : j.items()) {
    if (!type.is_string())
      throw InputError(fmt::format("{}: column '{}': the type must be a string (int64, double, date or string)",
                                   where, clip_for_message(name)));
    try {
      types[name] = parse_type(type.get<std::string>());
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: column '{}': {}", where, clip_for_message(name), e.what()));
    }
  }
  return types;
}

Table load_csv(const fs::path& csv, const CsvLoadOptions& options) {
  const MappedFile file(csv);
  return parse_csv(std::string_view(file.data(), file.size()), csv.string(), options);
}

Table parse_csv(std::string_view text, const std::string& where, const CsvLoadOptions& options) {
  if (!is_valid_name(options.table_name))
    throw InputError(fmt::format("table name '{}': expected a letter or _ then letters, digits or _ (at most 128)",
                                 clip_for_message(options.table_name)));
  const char* begin = text.data();
  const char* end = begin + text.size();

  // The header: the first line that is not empty.
  const char* pos = begin;
  std::uint64_t line = 1;
  while (pos < end && (*pos == '\n' || (*pos == '\r' && pos + 1 < end && pos[1] == '\n'))) {
    pos += *pos == '\r' ? 2 : 1;
    ++line;
  }
  if (pos == end) throw InputError(fmt::format("{}: empty: a CSV table needs a header line", where));
  std::vector<std::string> names;
  std::unordered_map<std::string, std::size_t> column_of;
  const char* body = nullptr;
  try {
    Tokenizer header(begin, end, where, nullptr);
    body = header.each_record(pos, pos + 1, line, [&](const std::vector<Field>& fields, std::uint64_t at, const char*) {
      for (std::size_t i = 0; i < fields.size(); ++i) {
        std::string name = fields[i].escaped ? unescape(fields[i].text) : std::string(fields[i].text);
        if (name.empty()) header.fail(fields[i].text.data(), at, i, "an empty column name in the header");
        if (const auto [it, added] = column_of.try_emplace(name, i); !added)
          header.fail(fields[i].text.data(), at, i,
                      fmt::format("column name '{}' given twice in the header (also column {})",
                                  clip_for_message(name), it->second + 1));
        names.push_back(std::move(name));
      }
    });
  } catch (const CsvError& e) {
    throw InputError(e.message);
  }
  const std::uint64_t body_line = line + static_cast<std::uint64_t>(std::count(pos, body, '\n'));
  for (const auto& [name, type] : options.types)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw InputError(fmt::format("--types: '{}' is no column of {} (its columns: {})", clip_for_message(name), where,
                                   clip_for_message(fmt::format("{}", fmt::join(names, ", ")))));
  // Before the body is read: a sort column the file lacks.
  for (const std::string& name : options.sort_by)
    if (std::find(names.begin(), names.end(), name) == names.end())
      throw InputError(fmt::format("--sort-by: '{}' is no column of {} (its columns: {})", clip_for_message(name), where,
                                   clip_for_message(fmt::format("{}", fmt::join(names, ", ")))));
  const std::size_t columns = names.size();
  std::vector<std::optional<ColumnType>> declared(columns);
  for (std::size_t c = 0; c < columns; ++c)
    if (auto it = options.types.find(names[c]); it != options.types.end()) declared[c] = it->second;

  const auto threads = static_cast<std::size_t>(tbb::this_task_arena::max_concurrency());
  std::vector<Chunk> chunks = cut_chunks(body, end, body_line, std::max<std::size_t>(threads * 8, text.size() >> 23));

  auto first_error = [&]() -> std::optional<CsvError> {
    std::optional<CsvError> first;
    for (Chunk& c : chunks)
      if (c.error && (!first || c.error->offset < first->offset)) first = c.error;
    return first;
  };

  // The types of the columns not declared, guessed from a sample: the first
  // records of every chunk, spread over the file. The file is then read
  // once with those types; a column with a value the guess does not fit
  // (rare: a column of integers with a fraction deep in the file) gets the
  // type that every value fits and is read again on its own. So the types
  // are those of all the values, as if each were tried first, while most
  // files are tokenized once. (Errors in the sample are left to the reading.)
  tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t i) {
    Chunk& c = chunks[i];
    c.fits.assign(columns, kFitsAll);
    c.any_value.assign(columns, 0);
    c.sampled.assign(columns, 0);
    c.sampled_distinct.assign(columns, 0);
    std::vector<StringCodes> distinct(columns);
    try {
      Tokenizer t(begin, end, where, &names);
      t.each_record(
          c.start, c.end, c.line,
          [&](const std::vector<Field>& fields, std::uint64_t, const char*) {
            for (std::size_t k = 0; k < std::min(columns, fields.size()); ++k) {
              if (fields[k].text.empty()) continue;
              ++c.sampled[k];
              distinct[k].code(fields[k].text);  // (escaped ones as they are: an estimate)
              if (declared[k]) continue;
              c.any_value[k] = 1;
              if (c.fits[k]) c.fits[k] &= fits_of(fields[k].text, c.fits[k]);
            }
          },
          kSampleRecords);
    } catch (const CsvError&) {
    }
    for (std::size_t k = 0; k < columns; ++k) c.sampled_distinct[k] = distinct[k].size();
  });
  std::vector<ColumnType> guessed(columns);
  for (std::size_t k = 0; k < columns; ++k) {
    std::uint8_t fits = kFitsAll;
    bool any = false;
    for (const Chunk& c : chunks) fits &= c.fits[k], any = any || c.any_value[k];
    // With no value in the sample, the narrowest type: the reading widens it.
    guessed[k] = declared[k] ? *declared[k] : any ? type_of_fits(fits, true) : ColumnType::Int64;
  }
  // String columns whose sample is mostly distinct values (comments,
  // names) keep each row's text and are coded by one sort of them all, not
  // coded a chunk at a time first: that coding finds almost nothing equal
  // and copies every string (a fifth of a lineitem load's CPU). The others
  // (flags, modes, cities) are coded as they are read, and only their
  // distinct strings are sorted.
  std::vector<std::uint8_t> by_row(columns, 0);
  for (std::size_t k = 0; k < columns; ++k) {
    std::size_t sampled = 0, distinct = 0;
    for (const Chunk& c : chunks) sampled += c.sampled[k], distinct += c.sampled_distinct[k];
    by_row[k] = guessed[k] == ColumnType::String && sampled >= kLeastSampleForRows && 2 * distinct > sampled;
  }

  Table table;
  table.name = options.table_name;
  std::size_t bound_rows = 0;
  for (Chunk& c : chunks) {
    c.bound_row = bound_rows;
    bound_rows += c.max_rows;
  }
  for (std::size_t k = 0; k < columns; ++k) {
    Column col;
    col.name = names[k];
    col.type = guessed[k];
    size_values(col, bound_rows);
    resize_on_huge_pages(col.nulls, bound_rows);
    table.columns.push_back(std::move(col));
  }
  std::vector<std::vector<std::string_view>> row_texts(columns);  // the by_row columns'
  for (std::size_t k = 0; k < columns; ++k)
    if (by_row[k]) resize_on_huge_pages(row_texts[k], bound_rows);

  // The reading: every column's values, each chunk's rows from its bound_row.
  std::atomic<bool> misaligned = false;
  tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t i) {
    Chunk& c = chunks[i];
    c.distinct.resize(columns);
    c.seen.assign(columns, Seen{});
    std::string unescaped;  // a field that had "" in it, unescaped
    try {
      Tokenizer t(begin, end, where, &names);
      const char* stop = t.each_record(c.start, c.end, c.line, [&](const std::vector<Field>& fields,
                                                                    std::uint64_t line, const char*) {
        if (fields.size() != columns)
          t.fail(fields.front().text.data(), line, std::min(fields.size(), columns) - (fields.size() < columns),
                 fmt::format("{} fields; the header has {}", fields.size(), columns));
        if (c.rows == c.max_rows) throw std::logic_error(fmt::format("{}: more records in a CSV chunk than line breaks", where));
        const std::size_t row = c.bound_row + c.rows;
        for (std::size_t k = 0; k < columns; ++k) {
          const Field& f = fields[k];
          Column& col = table.columns[k];
          Seen& seen = c.seen[k];
          seen.any_value = seen.any_value || !f.text.empty();
          seen.quoted_empty = seen.quoted_empty || (f.quoted && f.text.empty());
          if (is_null_field(f, col.type)) {
            col.nulls[row] = 1;
            continue;
          }
          if (by_row[k]) {
            // The file's bytes (the map outlives the coding), or a copy kept.
            row_texts[k][row] = f.escaped ? std::string_view(*c.kept.emplace_back(std::make_unique<std::string>(unescape(f.text))))
                                          : f.text;
            continue;
          }
          // Used before the next field: the strings' codes keep copies of their own.
          const std::string_view text = f.escaped ? std::string_view(unescaped = unescape(f.text)) : f.text;
          if (write_value(col, col.type, text, row, c.distinct[k])) {
            seen.as_guessed = true;
          } else if (declared[k]) {
            t.fail(f.text.data(), f.line, k, fmt::format("'{}' is not {}", clip_for_message(text), described(col.type)));
          } else {
            seen.refused = true;
            seen.refused_fits &= fits_of(text, kFitsAll);
          }
        }
        ++c.rows;
      });
      if (stop != c.end) misaligned = true;
    } catch (const CsvError& e) {
      c.error = e;
    }
  });
  if (auto e = first_error()) throw InputError(e->message);
  // Chunks cut at even quote parity start at records: in a file the
  // tokenizer accepts, quotes come in pairs, so a line break after an even
  // number of them ends a record. A chunk ending elsewhere is a bug here.
  if (misaligned) throw std::logic_error(fmt::format("{}: CSV chunks cut away from record starts", where));
  std::size_t rows = 0;
  for (Chunk& c : chunks) {
    c.first_row = rows;
    rows += c.rows;
  }
  if (rows > std::size_t{UINT32_MAX}) throw InputError(fmt::format("{}: more than 2^32 rows", where));

  // Each chunk's rows moved down to their place, in order (a chunk's rows
  // fall short of its bound by its blank lines and its quoted line breaks:
  // most files have none, and nothing moves).
  tbb::parallel_for(std::size_t{0}, columns, [&](std::size_t k) {
    Column& col = table.columns[k];
    for (const Chunk& c : chunks)
      if (c.first_row != c.bound_row) {
        move_rows(col, c.bound_row, c.first_row, c.rows);
        if (by_row[k])
          std::memmove(row_texts[k].data() + c.first_row, row_texts[k].data() + c.bound_row, c.rows * sizeof(std::string_view));
      }
    size_values(col, rows);
    col.nulls.resize(rows);
    if (by_row[k]) row_texts[k].resize(rows);
  });

  // The columns whose guess a value refused, and those with no value at all
  // (string, where a quoted empty field is the empty string, not NULL):
  // their type is the one every value fits, and they are read again.
  std::vector<std::size_t> again;
  for (std::size_t k = 0; k < columns; ++k) {
    if (declared[k]) continue;
    Seen all;
    for (const Chunk& c : chunks) {
      const Seen& s = c.seen[k];
      all.any_value |= s.any_value, all.quoted_empty |= s.quoted_empty, all.as_guessed |= s.as_guessed;
      all.refused |= s.refused, all.refused_fits &= s.refused_fits;
    }
    Column& col = table.columns[k];
    ColumnType type = col.type;
    if (!all.any_value)
      type = ColumnType::String;
    else if (all.refused)
      type = type_of_fits((all.as_guessed ? fits_of_type(col.type) : std::uint8_t{kFitsAll}) & all.refused_fits, true);
    if (type == col.type) continue;
    col.int64s = {}, col.doubles = {}, col.int32s = {};
    col.type = type;
    size_values(col, rows);
    if (all.any_value || all.quoted_empty) {
      std::fill(col.nulls.begin(), col.nulls.end(), 0);
      again.push_back(k);
    }  // (else every row is NULL already)
  }
  if (!again.empty()) {
    tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t i) {
      Chunk& c = chunks[i];
      std::string unescaped;
      std::size_t row = c.first_row;
      Tokenizer t(begin, end, where, &names);
      t.each_record(c.start, c.end, c.line, [&](const std::vector<Field>& fields, std::uint64_t, const char*) {
        for (std::size_t k : again) {
          const Field& f = fields[k];
          Column& col = table.columns[k];
          if (is_null_field(f, col.type)) {
            col.nulls[row] = 1;
            continue;
          }
          const std::string_view text = f.escaped ? std::string_view(unescaped = unescape(f.text)) : f.text;
          if (!write_value(col, col.type, text, row, c.distinct[k]))
            throw std::logic_error(fmt::format("{}: a CSV value unfit for the type inferred from all of them", where));
        }
        ++row;
      });
    });
  }

  // Dictionaries: the strings kept by row sorted into one in byte order,
  // each row given its code; else every chunk's distinct strings sorted
  // together and each chunk's codes remapped.
  for (std::size_t k = 0; k < columns; ++k) {
    Column& col = table.columns[k];
    if (col.type != ColumnType::String) continue;
    if (by_row[k]) {
      col.dictionary = code_in_byte_order(row_texts[k], col.nulls, col.int32s.data(), fmt::format("{}: column {}", where, col.name));
      row_texts[k] = {};
      continue;
    }
    std::vector<const StringCodes*> parts(chunks.size());
    for (std::size_t i = 0; i < chunks.size(); ++i) parts[i] = &chunks[i].distinct[k];
    MergedDictionary merged = merge_dictionaries(parts, fmt::format("{}: column {}", where, col.name));
    tbb::parallel_for(std::size_t{0}, chunks.size(), [&](std::size_t i) {
      const Chunk& c = chunks[i];
      const std::vector<std::int32_t>& global = merged.codes[i];
      for (std::size_t r = c.first_row; r < c.first_row + c.rows; ++r)
        col.int32s[r] = col.nulls[r] ? 0 : global[static_cast<std::size_t>(col.int32s[r])];
    });
    for (Chunk& c : chunks) c.distinct[k] = StringCodes();  // their strings are in the dictionary now
    col.dictionary = std::move(merged.dictionary);
  }
  for (Column& col : table.columns)
    if (std::none_of(col.nulls.begin(), col.nulls.end(), [](std::uint8_t n) { return n != 0; })) {
      col.nulls.clear();
      col.nulls.shrink_to_fit();
    }
  if (!options.sort_by.empty()) sort_table(table, options.sort_by);
  return table;
}

}  // namespace gpuolap::table
