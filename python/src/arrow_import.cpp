#include "arrow_import.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <bit>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuolap/error.hpp"
#include "gpuolap/huge_pages.hpp"
#include "table/string_codes.hpp"

namespace gpuolap::python {

namespace {

// What an Arrow column holds, from its format string.
enum class Source {
  Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Bool, Float32, Float64, Date32, Date64,
  Utf8, LargeUtf8, Utf8View
};

std::optional<Source> source_of(std::string_view format) {
  static const std::pair<std::string_view, Source> kFormats[] = {
      {"c", Source::Int8},     {"s", Source::Int16},     {"i", Source::Int32},  {"l", Source::Int64},
      {"C", Source::UInt8},    {"S", Source::UInt16},    {"I", Source::UInt32}, {"L", Source::UInt64},
      {"b", Source::Bool},     {"f", Source::Float32},   {"g", Source::Float64}, {"tdD", Source::Date32},
      {"tdm", Source::Date64}, {"u", Source::Utf8},      {"U", Source::LargeUtf8}, {"vu", Source::Utf8View}};
  for (const auto& [f, source] : kFormats)
    if (f == format) return source;
  return std::nullopt;
}

bool is_integer(Source s) { return s <= Source::UInt64; }
bool is_string(Source s) { return s == Source::Utf8 || s == Source::LargeUtf8 || s == Source::Utf8View; }

// A type gpuolap does not take, named as Arrow names it.
std::string arrow_type_name(std::string_view format) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"n", "null"},           {"e", "float16"},        {"z", "binary"},         {"Z", "large_binary"},
      {"vz", "binary_view"},   {"tts", "time32[s]"},    {"ttm", "time32[ms]"},
      {"ttu", "time64[us]"},   {"ttn", "time64[ns]"},   {"+l", "list"},          {"+L", "large_list"},
      {"+s", "struct"},        {"+m", "map"},           {"+ud", "dense_union"},  {"+us", "sparse_union"}};
  for (const auto& [f, name] : kNames)
    if (f == format) return std::string(name);
  if (format.rfind("ts", 0) == 0) return fmt::format("timestamp ('{}')", format);
  if (format.rfind("tD", 0) == 0) return fmt::format("duration ('{}')", format);
  if (format.rfind("d:", 0) == 0) return fmt::format("decimal ('{}')", format);
  if (format.rfind("w:", 0) == 0) return fmt::format("fixed_size_binary ('{}')", format);
  return fmt::format("format '{}'", format);
}

// Releases what it holds when it goes (the C interfaces' ownership rule).
struct OwnedSchema {
  ArrowSchema schema{};
  ~OwnedSchema() {
    if (schema.release) schema.release(&schema);
  }
};
struct OwnedArray {
  ArrowArray array{};
  ~OwnedArray() {
    if (array.release) array.release(&array);
  }
};

bool bit(const void* bitmap, int64_t i) { return (static_cast<const uint8_t*>(bitmap)[i >> 3] >> (i & 7)) & 1; }

// One column of one record batch: `length` rows from row `offset` of the
// array's buffers, rows [first_row, first_row + length) of the table.
struct Piece {
  const ArrowArray* array = nullptr;
  int64_t offset = 0;
  int64_t length = 0;
  size_t first_row = 0;
  bool may_hold_nulls = false;  // a validity bitmap with NULLs in it, or a dictionary with NULL entries
  size_t batch = 0;             // the number of its batch in the stream, from 0
};

// The number of the first batch of the stream not yet released: batches
// are released in order, by the thread that reads the stream, once every
// wave up to them is read (the release callbacks of a producer such as
// pyarrow then run on the thread it gave the stream to).
using FirstHeldBatch = std::atomic<size_t>;

// Whether a column's piece may have NULL rows: its validity bitmap counts
// some (or does not say how many), or its dictionary has NULL entries.
bool may_hold_nulls(const ArrowArray& array) {
  const auto counted = [](const ArrowArray& a) { return a.n_buffers > 0 && a.buffers[0] && a.null_count != 0; };
  return counted(array) || (array.dictionary && counted(*array.dictionary));
}

// Rows [begin, end) of the table as the pieces that hold them: calls
// fn(piece, offset into the piece, rows, first table row) for each stretch.
template <typename Fn>
void each_stretch(const std::vector<Piece>& pieces, size_t begin, size_t end, Fn&& fn) {
  auto p = std::upper_bound(pieces.begin(), pieces.end(), begin,
                            [](size_t row, const Piece& piece) { return row < piece.first_row; });
  for (p = p == pieces.begin() ? p : p - 1; p != pieces.end() && p->first_row < end; ++p) {
    const size_t from = std::max(begin, p->first_row);
    const size_t to = std::min(end, p->first_row + static_cast<size_t>(p->length));
    if (from < to) fn(*p, static_cast<int64_t>(from - p->first_row), static_cast<int64_t>(to - from), from);
  }
}

// Rows [begin, end) cut into `parts` ranges of about equal size.
std::vector<std::pair<size_t, size_t>> row_ranges(size_t begin, size_t end, size_t parts) {
  const size_t rows = end - begin;
  parts = std::max<size_t>(1, std::min(parts, rows));
  std::vector<std::pair<size_t, size_t>> ranges;
  for (size_t i = 0; i < parts; ++i) ranges.emplace_back(begin + rows * i / parts, begin + rows * (i + 1) / parts);
  return ranges;
}

size_t threads() { return static_cast<size_t>(tbb::this_task_arena::max_concurrency()); }

// A bad value: an InputError that knows its row (0-based), so that the read
// reports the first bad value whichever task found it.
struct RowError : InputError {
  RowError(size_t r, const std::string& message) : InputError(message), row(r) {}
  size_t row;
};

// The tasks that read a stream's batches report their InputErrors here; the
// read fails with the one of the smallest row (then column), so that an
// error names the first bad value however the work was spread and on any
// number of cores.
class FirstError {
 public:
  void note(size_t row, size_t column, const InputError& e) {
    const std::lock_guard lock(mutex_);
    if (!error_ || std::pair(row, column) < at_) {
      at_ = {row, column};
      error_ = e;
    }
    failed_ = true;
  }
  bool failed() const { return failed_; }
  void rethrow() const {
    if (error_) throw *error_;
  }

 private:
  std::mutex mutex_;
  std::pair<size_t, size_t> at_;
  std::optional<InputError> error_;
  std::atomic<bool> failed_ = false;
};

// One column of the stream, read a wave of batches at a time while the next
// batches are still being read from the stream (a Parquet file's decoded
// by pyarrow meanwhile), into columns sized beforehand. Strings are coded
// by at most two StringCodes, each used by one task at a time — each range of
// rows records which — and their dictionaries are merged into one in byte
// order at the end.
class ColumnReader {
 public:
  ColumnReader(size_t index, std::string name, std::string_view format, const ArrowSchema* dictionary)
      : index_(index), name_(std::move(name)) {
    const auto source = source_of(format);
    if (dictionary) {
      // A dictionary column: its indices are integers, its values strings.
      const auto values = source_of(dictionary->format ? dictionary->format : "");
      if (!source || !is_integer(*source) || !values || !is_string(*values))
        throw InputError(fmt::format("column '{}': a dictionary of {} is not supported (only dictionaries of strings)",
                                     name_, arrow_type_name(dictionary->format ? dictionary->format : "")));
      index_type_ = *source;
      source_ = *values;
      dictionary_encoded_ = true;
    } else {
      if (!source)
        throw InputError(fmt::format("column '{}': Arrow type {} is not supported; cast it to int64, float64, date32 "
                                     "or string first",
                                     name_, arrow_type_name(format)));
      source_ = *source;
    }
    column_.name = name_;
    if (dictionary_encoded_ || is_string(source_))
      for (size_t k = 0; k < std::min(threads(), kMostCodings); ++k) codings_.push_back(std::make_unique<Coding>());
    column_.type = dictionary_encoded_ || is_string(source_) ? table::ColumnType::String
                   : source_ == Source::Float32 || source_ == Source::Float64                      ? table::ColumnType::Double
                   : source_ == Source::Date32 || source_ == Source::Date64                        ? table::ColumnType::Date
                                                                                                    : table::ColumnType::Int64;
  }

  // Room for `rows` rows, and for their NULL flags once a piece may hold
  // NULLs. Called while no wave is being read.
  void resize(size_t rows) {
    switch (column_.type) {
      case table::ColumnType::Int64: resize_on_huge_pages(column_.int64s, rows); break;
      case table::ColumnType::Double: resize_on_huge_pages(column_.doubles, rows); break;
      case table::ColumnType::Date:
      case table::ColumnType::String: resize_on_huge_pages(column_.int32s, rows); break;
    }
    if (!column_.nulls.empty()) resize_on_huge_pages(column_.nulls, rows);
  }

  // Called for each piece as it joins a wave, before the wave is read: the
  // first piece that may hold NULLs makes room for a NULL flag a row (0 for
  // the rows before, which had none). No wave being read touches the flags
  // meanwhile: only pieces that may hold NULLs do, and none came before.
  // Most columns have no NULLs, and a byte a row of flags written, read and
  // thrown away was a tenth of a load.
  void note_piece(const Piece& piece, size_t capacity) {
    if (piece.may_hold_nulls && column_.nulls.empty()) resize_on_huge_pages(column_.nulls, capacity);
  }

  // Reads the column's pieces of a wave of batches (consecutive rows, in
  // room made by resize()): ranges of its rows at once, a few a thread.
  void read_wave(const std::vector<Piece>& pieces, const FirstHeldBatch& first_held, FirstError& errors) {
    if (pieces.empty()) return;
    const size_t begin = pieces.front().first_row;
    const size_t end = pieces.back().first_row + static_cast<size_t>(pieces.back().length);
    const auto ranges = row_ranges(begin, end, 4 * threads());
    tbb::parallel_for(size_t{0}, ranges.size(), [&](size_t i) {
      const auto [b, e] = ranges[i];
      try {
        each_stretch(pieces, b, e, [&](const Piece& p, int64_t at, int64_t n, size_t row) {
          if (p.may_hold_nulls) read_nulls(*p.array, p.offset + at, n, row);
          if (!dictionary_encoded_) read_values(p, p.offset + at, n, row);
        });
      } catch (const RowError& error) {
        errors.note(error.row, index_, error);
      } catch (const InputError& error) {
        errors.note(b, index_, error);
      }
    });
    if (dictionary_encoded_) {
      try {
        read_dictionary_codes(pieces, first_held);
      } catch (const RowError& error) {
        errors.note(error.row, index_, error);
      } catch (const InputError& error) {
        errors.note(begin, index_, error);
      }
    }
  }

  // The column of the stream's `rows` rows: strings as codes of one
  // dictionary in byte order, every NULL row holding 0.
  table::Column finish(size_t rows) {
    resize(rows);
    if (column_.type == table::ColumnType::String) {
      // Every thread's strings merged; each range's codes mapped to the merged dictionary's.
      std::vector<const table::StringCodes*> parts;
      std::unordered_map<const Coding*, size_t> part_of;
      for (const auto& c : codings_) {
        part_of.emplace(c.get(), parts.size());
        parts.push_back(&c->codes);
      }
      table::MergedDictionary merged = table::merge_dictionaries(parts, fmt::format("column '{}'", name_));
      tbb::parallel_for(size_t{0}, segments_.size(), [&](size_t i) {
        const Segment& s = segments_[i];
        const std::vector<int32_t>& global = merged.codes[part_of.at(s.coding)];
        for (size_t r = s.begin; r < std::min(s.end, rows); ++r) {
          const int32_t local = column_.int32s[r];
          column_.int32s[r] = local < 0 ? 0 : global[static_cast<size_t>(local)];
        }
      });
      column_.dictionary = std::move(merged.dictionary);
    }
    if (!any_null_) {
      column_.nulls.clear();
      column_.nulls.shrink_to_fit();
    } else if (column_.type != table::ColumnType::String) {  // strings: -1 became 0 above
      tbb::parallel_for(size_t{0}, rows, [&](size_t r) {
        if (!column_.nulls[r]) return;
        if (column_.type == table::ColumnType::Int64) column_.int64s[r] = 0;
        if (column_.type == table::ColumnType::Double) column_.doubles[r] = 0;
        if (column_.type == table::ColumnType::Date) column_.int32s[r] = 0;
      });
    }
    return std::move(column_);
  }

 private:
  // Which dictionary a thread's entry codes were made from: its buffers'
  // addresses, which name it only while a batch holding it is held (memory
  // released may come back as another dictionary's); hence the batch, held
  // while its number is at least the first held batch's.
  struct DictionaryKey {
    const void* offsets = nullptr;
    const void* data = nullptr;
    const void* validity = nullptr;
    int64_t offset = -1;
    int64_t length = -1;
    bool operator==(const DictionaryKey&) const = default;
  };
  // One of the column's codings of its strings, used by one task at a time
  // (its mutex held): a StringCodes and, for a dictionary column, the codes
  // of the entries of the dictionary it saw last (-1 for a NULL entry).
  struct Coding {
    std::mutex in_use;
    table::StringCodes codes;
    DictionaryKey key;
    size_t key_batch = 0;  // the batch `key` was seen in
    std::vector<int32_t> entry_codes;
  };
  // A column has at most kMostCodings, whatever the cores: each coding
  // comes to hold most of the column's distinct strings, and a coding a
  // thread on 16 cores (16 hash tables of 150,000 names, 190 MB, far past
  // the caches) doubled the CPU time of a 10 M-row load. On the 16-core
  // device host, 2, 4 and 8 codings took 2.1-2.3, 2.2-2.7 and 2.7-3.3 CPU
  // seconds, 0.46-0.47, 0.43-0.51 and 0.50-0.61 s
  // (bench/results/python-parquet-load-h100-host-2026-11-27.md).
  static constexpr size_t kMostCodings = 2;

  // A coding free for this task, locked: the thread's own first, then any
  // free one, else it waits for its own.
  std::pair<std::unique_lock<std::mutex>, Coding*> take_coding() {
    const int index = tbb::this_task_arena::current_thread_index();
    const size_t first = index < 0 ? 0 : static_cast<size_t>(index) % codings_.size();
    for (size_t k = 0; k < codings_.size(); ++k) {
      Coding* c = codings_[(first + k) % codings_.size()].get();
      std::unique_lock lock(c->in_use, std::try_to_lock);
      if (lock.owns_lock()) return {std::move(lock), c};
    }
    Coding* c = codings_[first].get();
    return {std::unique_lock(c->in_use), c};
  }

  // A range of rows coded by one coding's StringCodes.
  struct Segment {
    size_t begin, end;
    const Coding* coding;
  };

  void add_segment(size_t begin, size_t end, const Coding& coding) {
    const std::lock_guard lock(segments_mutex_);
    segments_.push_back(Segment{begin, end, &coding});
  }

  // The NULL flags of a piece that may hold NULLs (in room made by note_piece()).
  void read_nulls(const ArrowArray& array, int64_t offset, int64_t length, size_t row) {
    uint8_t* out = column_.nulls.data() + row;
    if (array.n_buffers == 0 || !array.buffers[0] || array.null_count == 0) {
      std::fill(out, out + length, 0);  // (a dictionary's NULL entries are flagged by look_up)
      return;
    }
    any_null_ = true;
    for (int64_t r = 0; r < length; ++r) out[r] = bit(array.buffers[0], offset + r) ? 0 : 1;
  }

  // The NULL flags of a piece's rows from `row` on, or nullptr where it has no NULLs.
  const uint8_t* nulls_of(const Piece& p, size_t row) const {
    return p.may_hold_nulls ? column_.nulls.data() + row : nullptr;
  }

  void read_values(const Piece& p, int64_t offset, int64_t length, size_t row) {
    const ArrowArray& array = *p.array;
    switch (column_.type) {
      case table::ColumnType::Int64: return read_integers(array, offset, length, row, nulls_of(p, row));
      case table::ColumnType::Double: return read_doubles(array, offset, length, row, nulls_of(p, row));
      case table::ColumnType::Date: return read_dates(array, offset, length, row, nulls_of(p, row));
      case table::ColumnType::String: return read_strings(array, offset, length, row, nulls_of(p, row));
    }
  }

  template <typename T>
  static const T* values(const ArrowArray& array, int64_t offset) {
    return static_cast<const T*>(array.buffers[1]) + offset;
  }

  template <typename T>
  void widen(const ArrowArray& array, int64_t offset, int64_t length, size_t row) {
    const T* v = values<T>(array, offset);
    std::copy(v, v + length, column_.int64s.data() + row);
  }

  // `nulls`: the rows' NULL flags, nullptr where none is NULL (so in the functions below).
  void read_integers(const ArrowArray& array, int64_t offset, int64_t length, size_t row, const uint8_t* nulls) {
    switch (source_) {
      case Source::Int8: widen<int8_t>(array, offset, length, row); break;
      case Source::Int16: widen<int16_t>(array, offset, length, row); break;
      case Source::Int32: widen<int32_t>(array, offset, length, row); break;
      case Source::Int64: widen<int64_t>(array, offset, length, row); break;
      case Source::UInt8: widen<uint8_t>(array, offset, length, row); break;
      case Source::UInt16: widen<uint16_t>(array, offset, length, row); break;
      case Source::UInt32: widen<uint32_t>(array, offset, length, row); break;
      case Source::UInt64: {
        const uint64_t* v = values<uint64_t>(array, offset);
        for (int64_t r = 0; r < length; ++r) {
          if (v[r] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) && !(nulls && nulls[r]))
            throw RowError(row + r, fmt::format("column '{}', row {}: {} does not fit int64", name_, row + r + 1, v[r]));
          column_.int64s[row + r] = static_cast<int64_t>(v[r]);
        }
        break;
      }
      case Source::Bool: {
        const void* bits = array.buffers[1];
        for (int64_t r = 0; r < length; ++r) column_.int64s[row + r] = bit(bits, offset + r) ? 1 : 0;
        break;
      }
      default: break;
    }
  }

  // Finite values only, as the CSV loader takes (a NaN or an infinity is no
  // number gpuolap's SQL compares, groups and sums as DuckDB does); a NULL
  // row may hold anything.
  void read_doubles(const ArrowArray& array, int64_t offset, int64_t length, size_t row, const uint8_t* nulls) {
    double* out = column_.doubles.data() + row;
    // Checked as copied, in one pass: a NaN or an infinity has every
    // exponent bit set.
    const auto finite = [](double x) {
      constexpr uint64_t kExponent = 0x7ff0000000000000;
      return (std::bit_cast<uint64_t>(x) & kExponent) != kExponent;
    };
    const auto copy_checked = [&](const auto* v) {
      bool all_finite = true;
      if (nulls)
        for (int64_t r = 0; r < length; ++r) {
          out[r] = static_cast<double>(v[r]);
          all_finite &= finite(out[r]) | (nulls[r] != 0);
        }
      else
        for (int64_t r = 0; r < length; ++r) {
          out[r] = static_cast<double>(v[r]);
          all_finite &= finite(out[r]);
        }
      return all_finite;
    };
    if (source_ == Source::Float64 ? copy_checked(values<double>(array, offset))
                                   : copy_checked(values<float>(array, offset)))
      return;
    for (int64_t r = 0; r < length; ++r)
      if (!finite(out[r]) && !(nulls && nulls[r]))
        throw RowError(row + r, fmt::format("column '{}', row {}: {} is not a finite number (gpuolap keeps finite "
                                            "doubles, as its CSV loader; make it NULL or a number first)",
                                            name_, row + r + 1, out[r]));
  }

  void read_dates(const ArrowArray& array, int64_t offset, int64_t length, size_t row, const uint8_t* nulls) {
    int32_t* out = column_.int32s.data() + row;
    if (source_ == Source::Date32) {
      const int32_t* v = values<int32_t>(array, offset);
      std::copy(v, v + length, out);
      return;
    }
    constexpr int64_t kMillisecondsADay = 86'400'000;
    const int64_t* v = values<int64_t>(array, offset);
    for (int64_t r = 0; r < length; ++r) {
      const bool null = nulls && nulls[r];
      const int64_t days = v[r] / kMillisecondsADay;
      if (!null && (v[r] % kMillisecondsADay != 0 || days < std::numeric_limits<int32_t>::min() ||
                    days > std::numeric_limits<int32_t>::max()))
        throw RowError(row + r, fmt::format("column '{}', row {}: date64 {} ms is not a whole day in the date range",
                                            name_, row + r + 1, v[r]));
      out[r] = null ? 0 : static_cast<int32_t>(days);
    }
  }

  // The string at `i` of a utf8, large_utf8 or utf8_view array; `row`, the
  // table's row it is read for, names a view that points outside its data.
  std::string_view string_at(const ArrowArray& array, int64_t i, size_t row) const {
    if (source_ == Source::Utf8View) return view_at(array, i, row);
    const char* data = static_cast<const char*>(array.buffers[2]);
    if (source_ == Source::LargeUtf8) {
      const int64_t* offsets = static_cast<const int64_t*>(array.buffers[1]);
      return {data + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i])};
    }
    const int32_t* offsets = static_cast<const int32_t*>(array.buffers[1]);
    return {data + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i])};
  }

  // A utf8_view (what polars exports): 16 bytes a string, its length, then
  // up to 12 bytes inline, or a prefix, the index of a data buffer and the
  // offset in it. The C interface's buffers: validity, views, the data
  // buffers, and last the data buffers' sizes (int64 each).
  std::string_view view_at(const ArrowArray& array, int64_t i, size_t row) const {
    const auto* view = static_cast<const unsigned char*>(array.buffers[1]) + 16 * i;
    int32_t length;
    std::memcpy(&length, view, 4);
    if (length >= 0 && length <= 12) return {reinterpret_cast<const char*>(view + 4), static_cast<size_t>(length)};
    int32_t buffer, offset;
    std::memcpy(&buffer, view + 8, 4);
    std::memcpy(&offset, view + 12, 4);
    const int64_t data_buffers = array.n_buffers - 3;
    const auto* sizes = data_buffers > 0 ? static_cast<const int64_t*>(array.buffers[array.n_buffers - 1]) : nullptr;
    if (length < 0 || buffer < 0 || buffer >= data_buffers || offset < 0 ||
        static_cast<int64_t>(offset) + length > sizes[buffer])
      throw RowError(row, fmt::format("column '{}', row {}: a string view points outside its data buffers", name_,
                                      row + 1));
    return {static_cast<const char*>(array.buffers[2 + buffer]) + offset, static_cast<size_t>(length)};
  }

  // Plain strings: coded by one of the column's codings, a group of rows at
  // a time so that their lookups overlap (StringCodes::code_all); -1 for NULL.
  void read_strings(const ArrowArray& array, int64_t offset, int64_t length, size_t row, const uint8_t* nulls) {
    auto [lock, coding] = take_coding();
    Coding& mine = *coding;
    constexpr int64_t kGroup = 256;
    std::string_view strings[kGroup];
    int32_t got[kGroup];
    int64_t got_row[kGroup];
    int32_t* out = column_.int32s.data() + row;
    for (int64_t begin = 0; begin < length; begin += kGroup) {
      size_t k = 0;
      for (int64_t r = begin; r < std::min(length, begin + kGroup); ++r) {
        if (nulls && nulls[r]) {
          out[r] = -1;
          continue;
        }
        strings[k] = string_at(array, offset + r, row + static_cast<size_t>(r));
        got_row[k++] = r;
      }
      mine.codes.code_all(std::span(strings, k), got);
      for (size_t j = 0; j < k; ++j) out[got_row[j]] = got[j];
    }
    add_segment(row, row + static_cast<size_t>(length), mine);
  }

  // Dictionary arrays: each dictionary's strings coded once, then each row's
  // index looked up. pyarrow cuts a Parquet row group into batches that
  // share its dictionary (150,000 strings for as many rows, say): a coding's
  // codes of a dictionary serve again while the next batch's is the same
  // memory and the batch it was seen in is still held (then the same
  // addresses are the same strings: a piece's own batch holds its
  // dictionary, and the earlier batch held the memory since).
  void read_dictionary_codes(const std::vector<Piece>& pieces, const FirstHeldBatch& first_held) {
    auto [lock, coding] = take_coding();
    Coding& mine = *coding;
    for (const Piece& p : pieces) {
      if (!p.array->dictionary)
        throw RowError(p.first_row, fmt::format("column '{}', row {}: a dictionary-encoded batch without its dictionary",
                                                name_, p.first_row + 1));
      const ArrowArray& dictionary = *p.array->dictionary;
      const void* validity = dictionary.n_buffers > 0 ? dictionary.buffers[0] : nullptr;
      const DictionaryKey key{dictionary.buffers[1], dictionary.buffers[2], validity, dictionary.offset,
                              dictionary.length};
      if (!(key == mine.key) || mine.key_batch < first_held.load(std::memory_order_acquire)) {
        mine.entry_codes.resize(static_cast<size_t>(dictionary.length));
        for (int64_t e = 0; e < dictionary.length; ++e) {
          const int64_t at = dictionary.offset + e;
          const bool null = validity && dictionary.null_count != 0 && !bit(validity, at);
          mine.entry_codes[e] = null ? -1 : mine.codes.code(string_at(dictionary, at, p.first_row));
        }
        mine.key = key;
        mine.key_batch = p.batch;
      }
      switch (index_type_) {
        case Source::Int8: look_up(values<int8_t>(*p.array, p.offset), p, mine.entry_codes); break;
        case Source::Int16: look_up(values<int16_t>(*p.array, p.offset), p, mine.entry_codes); break;
        case Source::Int32: look_up(values<int32_t>(*p.array, p.offset), p, mine.entry_codes); break;
        case Source::Int64: look_up(values<int64_t>(*p.array, p.offset), p, mine.entry_codes); break;
        case Source::UInt8: look_up(values<uint8_t>(*p.array, p.offset), p, mine.entry_codes); break;
        case Source::UInt16: look_up(values<uint16_t>(*p.array, p.offset), p, mine.entry_codes); break;
        case Source::UInt32: look_up(values<uint32_t>(*p.array, p.offset), p, mine.entry_codes); break;
        default: look_up(values<uint64_t>(*p.array, p.offset), p, mine.entry_codes); break;
      }
      add_segment(p.first_row, p.first_row + static_cast<size_t>(p.length), mine);
    }
  }

  template <typename Index>
  void look_up(const Index* indexes, const Piece& p, const std::vector<int32_t>& entry_codes) {
    int32_t* out = column_.int32s.data() + p.first_row;
    // (A dictionary with NULL entries makes the piece one that may hold NULLs.)
    uint8_t* nulls = p.may_hold_nulls ? column_.nulls.data() + p.first_row : nullptr;
    const auto entries = static_cast<uint64_t>(entry_codes.size());
    for (int64_t r = 0; r < p.length; ++r) {
      if (nulls && nulls[r]) {
        out[r] = -1;
        continue;
      }
      const auto i = static_cast<uint64_t>(indexes[r]);  // a negative index wraps past every entry
      if (i >= entries)
        throw RowError(p.first_row + r, fmt::format("column '{}', row {}: dictionary index {} outside its {} entries",
                                                    name_, p.first_row + r + 1, static_cast<int64_t>(indexes[r]), entries));
      out[r] = entry_codes[i];
      if (out[r] < 0 && nulls) {
        // A row pointing at a NULL entry of the dictionary is a NULL.
        nulls[r] = 1;
        any_null_ = true;
      }
    }
  }

  size_t index_;  // of the column, for the order of errors
  std::string name_;
  Source source_ = Source::Int64;
  Source index_type_ = Source::Int32;
  bool dictionary_encoded_ = false;
  table::Column column_;
  std::atomic<bool> any_null_ = false;
  std::vector<std::unique_ptr<Coding>> codings_;  // strings only
  std::mutex segments_mutex_;
  std::vector<Segment> segments_;
};

std::string stream_error(ArrowArrayStream* stream, int code) {
  const char* why = stream->get_last_error ? stream->get_last_error(stream) : nullptr;
  return fmt::format("reading the Arrow stream failed (error {}{}{})", code, why ? ": " : "", why ? why : "");
}

}  // namespace

table::Table table_from_arrow(ArrowArrayStream* stream, const std::string& name, size_t rows_hint) {
  struct StreamRelease {
    ArrowArrayStream* stream;
    ~StreamRelease() {
      if (stream->release) stream->release(stream);
    }
  } release{stream};

  OwnedSchema schema;
  if (const int code = stream->get_schema(stream, &schema.schema); code != 0) throw InputError(stream_error(stream, code));
  if (std::string_view(schema.schema.format ? schema.schema.format : "") != "+s")
    throw InputError("the Arrow stream's batches are not record batches (a struct schema)");
  std::vector<std::unique_ptr<ColumnReader>> readers;
  for (int64_t c = 0; c < schema.schema.n_children; ++c) {
    const ArrowSchema& child = *schema.schema.children[c];
    readers.push_back(std::make_unique<ColumnReader>(static_cast<size_t>(c), child.name ? child.name : "",
                                                     child.format ? child.format : "", child.dictionary));
  }
  const auto resize_all = [&](size_t rows) {
    tbb::parallel_for(size_t{0}, readers.size(), [&](size_t c) { readers[c]->resize(rows); });
  };

  // Batches are taken from the stream while the waves taken before are read
  // into the columns by other threads. A wave's batches are released once it
  // and every wave before it are read: the producer's memory then serves the
  // next batches (a Parquet file's read faulted in as many fresh pages as
  // the whole file decoded when every batch was held to the end).
  constexpr size_t kWaveRows = size_t{1} << 19;
  size_t capacity = rows_hint ? rows_hint : kWaveRows;
  resize_all(capacity);
  FirstError errors;
  FirstHeldBatch first_held = 0;
  std::deque<std::unique_ptr<OwnedArray>> batches;  // numbered first_held on
  size_t batch_count = 0;
  // The waves launched and not yet released: the batch number each ends
  // before, and whether it has been read.
  struct Launched {
    size_t end_batch;
    std::shared_ptr<std::atomic<bool>> read;
  };
  std::deque<Launched> launched;
  std::vector<std::vector<Piece>> wave(readers.size());
  size_t rows = 0;
  size_t wave_rows = 0;
  tbb::task_group group;
  // The tasks use what is above: wait for them however this ends.
  struct WaitAtExit {
    tbb::task_group& group;
    ~WaitAtExit() {
      try {
        group.wait();
      } catch (...) {
      }
    }
  } wait_at_exit{group};
  const auto launch = [&] {
    if (wave_rows == 0) return;
    auto pieces = std::make_shared<std::vector<std::vector<Piece>>>(std::move(wave));
    wave.assign(readers.size(), {});
    wave_rows = 0;
    auto read = std::make_shared<std::atomic<bool>>(false);
    launched.push_back(Launched{batch_count, read});
    group.run([&readers, &errors, &first_held, pieces, read] {
      tbb::parallel_for(size_t{0}, readers.size(),
                        [&](size_t c) { readers[c]->read_wave((*pieces)[c], first_held, errors); });
      read->store(true, std::memory_order_release);
    });
  };
  // Releases the batches of the waves read, in order (on this thread).
  const auto release_read = [&] {
    const size_t first = first_held.load(std::memory_order_relaxed);  // only this thread stores it
    size_t end = first;
    while (!launched.empty() && launched.front().read->load(std::memory_order_acquire)) {
      end = launched.front().end_batch;
      launched.pop_front();
    }
    if (end == first) return;
    // Published before the memory goes: a dictionary cache made from a
    // batch before `end` is not trusted again.
    first_held.store(end, std::memory_order_release);
    batches.erase(batches.begin(), batches.begin() + static_cast<std::ptrdiff_t>(end - first));
  };
  while (!errors.failed()) {
    auto batch = std::make_unique<OwnedArray>();
    // A bad value in the rows before is the first thing wrong: reported first.
    const auto fail = [&](const std::string& why) {
      group.wait();
      errors.rethrow();
      throw InputError(why);
    };
    if (const int code = stream->get_next(stream, &batch->array); code != 0) fail(stream_error(stream, code));
    if (!batch->array.release) break;  // the end of the stream
    const ArrowArray& array = batch->array;
    if (array.n_children != static_cast<int64_t>(readers.size()))
      fail(fmt::format("a record batch has {} columns; the stream's schema {}", array.n_children, readers.size()));
    if (array.length == 0) continue;
    const auto length = static_cast<size_t>(array.length);
    if (rows + length > capacity) {
      // More rows than the hint: the columns grow while nothing reads into them.
      launch();
      group.wait();
      capacity = std::max(2 * capacity, rows + length);
      resize_all(capacity);
    }
    for (size_t c = 0; c < readers.size(); ++c) {
      const ArrowArray& column = *array.children[c];
      wave[c].push_back(
          Piece{&column, array.offset + column.offset, array.length, rows, may_hold_nulls(column), batch_count});
      readers[c]->note_piece(wave[c].back(), capacity);
    }
    rows += length;
    wave_rows += length;
    batches.push_back(std::move(batch));
    ++batch_count;
    if (wave_rows >= kWaveRows) launch();
    release_read();
  }
  launch();
  group.wait();
  errors.rethrow();

  table::Table table;
  table.name = name;
  table.columns.resize(readers.size());
  tbb::parallel_for(size_t{0}, readers.size(), [&](size_t c) { table.columns[c] = readers[c]->finish(rows); });
  table::check_table(table);
  return table;
}

}  // namespace gpuolap::python
