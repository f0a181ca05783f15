#include "arrow_import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "gpuolap/error.hpp"

namespace gpuolap::python {

namespace {

// What an Arrow column holds, from its format string.
enum class Source { Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64, Bool, Float32, Float64, Date32, Date64, Utf8, LargeUtf8 };

std::optional<Source> source_of(std::string_view format) {
  static const std::pair<std::string_view, Source> kFormats[] = {
      {"c", Source::Int8},     {"s", Source::Int16},     {"i", Source::Int32},  {"l", Source::Int64},
      {"C", Source::UInt8},    {"S", Source::UInt16},    {"I", Source::UInt32}, {"L", Source::UInt64},
      {"b", Source::Bool},     {"f", Source::Float32},   {"g", Source::Float64}, {"tdD", Source::Date32},
      {"tdm", Source::Date64}, {"u", Source::Utf8},      {"U", Source::LargeUtf8}};
  for (const auto& [f, source] : kFormats)
    if (f == format) return source;
  return std::nullopt;
}

bool is_integer(Source s) { return s <= Source::UInt64; }

// A type gpuolap does not take, named as Arrow names it.
std::string arrow_type_name(std::string_view format) {
  static const std::pair<std::string_view, std::string_view> kNames[] = {
      {"n", "null"},           {"e", "float16"},        {"z", "binary"},         {"Z", "large_binary"},
      {"vz", "binary_view"},   {"vu", "string_view"},   {"tts", "time32[s]"},    {"ttm", "time32[ms]"},
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

// Transparent hashing, so a string_view finds a std::string key without a copy.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// One column as it is read, batch after batch.
class ColumnReader {
 public:
  ColumnReader(std::string name, std::string_view format, const ArrowSchema* dictionary) : name_(std::move(name)) {
    const auto source = source_of(format);
    if (dictionary) {
      // A dictionary column: its indices are integers, its values strings.
      const auto values = source_of(dictionary->format ? dictionary->format : "");
      if (!source || !is_integer(*source) || !values || (*values != Source::Utf8 && *values != Source::LargeUtf8))
        throw InputError(fmt::format("column '{}': a dictionary of {} is not supported (only dictionaries of strings)",
                                     name_, arrow_type_name(dictionary->format ? dictionary->format : "")));
      index_ = *source;
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
    column_.type = dictionary_encoded_ || source_ == Source::Utf8 || source_ == Source::LargeUtf8 ? table::ColumnType::String
                   : source_ == Source::Float32 || source_ == Source::Float64                      ? table::ColumnType::Double
                   : source_ == Source::Date32 || source_ == Source::Date64                        ? table::ColumnType::Date
                                                                                                    : table::ColumnType::Int64;
  }

  void reserve(size_t rows) {
    if (column_.type == table::ColumnType::Int64) column_.int64s.reserve(rows);
    if (column_.type == table::ColumnType::Double) column_.doubles.reserve(rows);
    if (column_.type == table::ColumnType::Date || column_.type == table::ColumnType::String) column_.int32s.reserve(rows);
  }

  // Appends `length` rows of `array`, from row `offset` of its buffers;
  // `first_row` numbers them in the table (for errors).
  void append(const ArrowArray& array, int64_t offset, int64_t length, int64_t first_row) {
    append_nulls(array, offset, length);
    if (dictionary_encoded_) {
      append_dictionary_codes(array, offset, length);
    } else {
      switch (column_.type) {
        case table::ColumnType::Int64: append_integers(array, offset, length, first_row); break;
        case table::ColumnType::Double: append_doubles(array, offset, length); break;
        case table::ColumnType::Date: append_dates(array, offset, length, first_row); break;
        case table::ColumnType::String: append_strings(array, offset, length); break;
      }
    }
  }

  // The column: codes renumbered so that the dictionary is in byte order,
  // and every NULL row holding 0.
  table::Column finish() {
    if (column_.type == table::ColumnType::String) {
      std::vector<int32_t> order(column_.dictionary.size());
      std::iota(order.begin(), order.end(), 0);
      std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return column_.dictionary[a] < column_.dictionary[b]; });
      std::vector<int32_t> rank(order.size());
      std::vector<std::string> sorted(order.size());
      for (size_t i = 0; i < order.size(); ++i) {
        rank[order[i]] = static_cast<int32_t>(i);
        sorted[i] = std::move(column_.dictionary[order[i]]);
      }
      column_.dictionary = std::move(sorted);
      // A NULL row holds 0, which is no code when the dictionary is empty.
      for (size_t r = 0; r < column_.int32s.size(); ++r)
        if (!is_null_row(r)) column_.int32s[r] = rank[column_.int32s[r]];
    }
    if (!column_.nulls.empty()) {
      for (size_t r = 0; r < column_.nulls.size(); ++r) {
        if (!column_.nulls[r]) continue;
        if (column_.type == table::ColumnType::Int64) column_.int64s[r] = 0;
        if (column_.type == table::ColumnType::Double) column_.doubles[r] = 0;
        if (column_.type == table::ColumnType::Date || column_.type == table::ColumnType::String) column_.int32s[r] = 0;
      }
    }
    return std::move(column_);
  }

 private:
  void append_nulls(const ArrowArray& array, int64_t offset, int64_t length) {
    const void* validity = array.n_buffers > 0 ? array.buffers[0] : nullptr;
    const size_t before = rows_;
    rows_ += static_cast<size_t>(length);
    if (!validity || array.null_count == 0) {
      if (!column_.nulls.empty()) column_.nulls.resize(rows_, 0);
      return;
    }
    if (column_.nulls.empty()) column_.nulls.assign(before, 0);
    column_.nulls.resize(rows_);
    for (int64_t r = 0; r < length; ++r) column_.nulls[before + r] = bit(validity, offset + r) ? 0 : 1;
  }

  template <typename T>
  static const T* values(const ArrowArray& array, int64_t offset) {
    return static_cast<const T*>(array.buffers[1]) + offset;
  }

  template <typename T>
  void widen(const ArrowArray& array, int64_t offset, int64_t length) {
    const T* v = values<T>(array, offset);
    column_.int64s.insert(column_.int64s.end(), v, v + length);
  }

  void append_integers(const ArrowArray& array, int64_t offset, int64_t length, int64_t first_row) {
    switch (source_) {
      case Source::Int8: widen<int8_t>(array, offset, length); break;
      case Source::Int16: widen<int16_t>(array, offset, length); break;
      case Source::Int32: widen<int32_t>(array, offset, length); break;
      case Source::Int64: widen<int64_t>(array, offset, length); break;
      case Source::UInt8: widen<uint8_t>(array, offset, length); break;
      case Source::UInt16: widen<uint16_t>(array, offset, length); break;
      case Source::UInt32: widen<uint32_t>(array, offset, length); break;
      case Source::UInt64: {
        const uint64_t* v = values<uint64_t>(array, offset);
        const size_t base = column_.int64s.size();
        for (int64_t r = 0; r < length; ++r) {
          if (v[r] > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) && !is_null_row(base + r))
            throw InputError(fmt::format("column '{}', row {}: {} does not fit int64", name_, first_row + r + 1, v[r]));
          column_.int64s.push_back(static_cast<int64_t>(v[r]));
        }
        break;
      }
      case Source::Bool: {
        const void* bits = array.buffers[1];
        for (int64_t r = 0; r < length; ++r) column_.int64s.push_back(bit(bits, offset + r) ? 1 : 0);
        break;
      }
      default: break;
    }
  }

  void append_doubles(const ArrowArray& array, int64_t offset, int64_t length) {
    if (source_ == Source::Float64) {
      const double* v = values<double>(array, offset);
      column_.doubles.insert(column_.doubles.end(), v, v + length);
    } else {
      const float* v = values<float>(array, offset);
      column_.doubles.insert(column_.doubles.end(), v, v + length);
    }
  }

  void append_dates(const ArrowArray& array, int64_t offset, int64_t length, int64_t first_row) {
    if (source_ == Source::Date32) {
      const int32_t* v = values<int32_t>(array, offset);
      column_.int32s.insert(column_.int32s.end(), v, v + length);
      return;
    }
    constexpr int64_t kMillisecondsADay = 86'400'000;
    const int64_t* v = values<int64_t>(array, offset);
    const size_t base = column_.int32s.size();
    for (int64_t r = 0; r < length; ++r) {
      const bool null = is_null_row(base + r);
      const int64_t days = v[r] / kMillisecondsADay;
      if (!null && (v[r] % kMillisecondsADay != 0 || days < std::numeric_limits<int32_t>::min() ||
                    days > std::numeric_limits<int32_t>::max()))
        throw InputError(fmt::format("column '{}', row {}: date64 {} ms is not a whole day in the date range", name_,
                                     first_row + r + 1, v[r]));
      column_.int32s.push_back(null ? 0 : static_cast<int32_t>(days));
    }
  }

  bool is_null_row(size_t row) const { return !column_.nulls.empty() && column_.nulls[row] != 0; }

  // The string at `i` of a utf8 or large_utf8 array.
  std::string_view string_at(const ArrowArray& array, int64_t i) const {
    const char* data = static_cast<const char*>(array.buffers[2]);
    if (source_ == Source::LargeUtf8) {
      const int64_t* offsets = static_cast<const int64_t*>(array.buffers[1]);
      return {data + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i])};
    }
    const int32_t* offsets = static_cast<const int32_t*>(array.buffers[1]);
    return {data + offsets[i], static_cast<size_t>(offsets[i + 1] - offsets[i])};
  }

  // The code of a string: its place in the dictionary, in the order first seen.
  int32_t code_of(std::string_view s) {
    const auto found = codes_.find(s);
    if (found != codes_.end()) return found->second;
    if (column_.dictionary.size() >= static_cast<size_t>(std::numeric_limits<int32_t>::max()))
      throw InputError(fmt::format("column '{}': more than 2^31 - 1 distinct strings", name_));
    const auto code = static_cast<int32_t>(column_.dictionary.size());
    column_.dictionary.emplace_back(s);
    codes_.emplace(column_.dictionary.back(), code);
    return code;
  }

  void append_strings(const ArrowArray& array, int64_t offset, int64_t length) {
    const size_t base = column_.int32s.size();
    for (int64_t r = 0; r < length; ++r)
      column_.int32s.push_back(is_null_row(base + r) ? 0 : code_of(string_at(array, offset + r)));
  }

  // A dictionary array: its dictionary's strings coded once, then each row's index looked up.
  void append_dictionary_codes(const ArrowArray& array, int64_t offset, int64_t length) {
    const ArrowArray& dictionary = *array.dictionary;
    const void* dictionary_validity = dictionary.n_buffers > 0 ? dictionary.buffers[0] : nullptr;
    // pyarrow cuts a Parquet row group into batches that share its
    // dictionary (150,000 strings for as many rows, say): the codes of the
    // previous batch's dictionary serve again when it is the same memory.
    // That batch is still held (table_from_arrow releases a batch only after
    // the next one is read), so the same addresses are the same strings.
    const DictionaryKey key{dictionary.buffers[1], dictionary.buffers[2], dictionary_validity, dictionary.offset,
                            dictionary.length};
    if (!(key == dictionary_key_)) {
      // The code of each dictionary entry; -1 for a NULL entry.
      dictionary_codes_.resize(static_cast<size_t>(dictionary.length));
      for (int64_t e = 0; e < dictionary.length; ++e) {
        const int64_t at = dictionary.offset + e;
        const bool null = dictionary_validity && dictionary.null_count != 0 && !bit(dictionary_validity, at);
        dictionary_codes_[e] = null ? -1 : code_of(string_at(dictionary, at));
      }
      dictionary_key_ = key;
    }
    const std::vector<int32_t>& codes = dictionary_codes_;
    switch (index_) {
      case Source::Int8: return append_indexed(values<int8_t>(array, offset), length, codes);
      case Source::Int16: return append_indexed(values<int16_t>(array, offset), length, codes);
      case Source::Int32: return append_indexed(values<int32_t>(array, offset), length, codes);
      case Source::Int64: return append_indexed(values<int64_t>(array, offset), length, codes);
      case Source::UInt8: return append_indexed(values<uint8_t>(array, offset), length, codes);
      case Source::UInt16: return append_indexed(values<uint16_t>(array, offset), length, codes);
      case Source::UInt32: return append_indexed(values<uint32_t>(array, offset), length, codes);
      default: return append_indexed(values<uint64_t>(array, offset), length, codes);
    }
  }

  template <typename Index>
  void append_indexed(const Index* indexes, int64_t length, const std::vector<int32_t>& codes) {
    const size_t base = column_.int32s.size();
    column_.int32s.resize(base + static_cast<size_t>(length));
    int32_t* out = column_.int32s.data() + base;
    const auto entries = static_cast<uint64_t>(codes.size());
    for (int64_t r = 0; r < length; ++r) {
      if (is_null_row(base + r)) {
        out[r] = 0;
        continue;
      }
      const auto i = static_cast<uint64_t>(indexes[r]);  // a negative index wraps past every entry
      if (i >= entries)
        throw InputError(fmt::format("column '{}': dictionary index {} outside its {} entries", name_,
                                     static_cast<int64_t>(indexes[r]), entries));
      if (codes[i] < 0) {
        // A row pointing at a NULL entry of the dictionary is a NULL.
        if (column_.nulls.empty()) column_.nulls.assign(rows_, 0);
        column_.nulls[base + r] = 1;
        out[r] = 0;
      } else {
        out[r] = codes[i];
      }
    }
  }

  // Which dictionary dictionary_codes_ were made from.
  struct DictionaryKey {
    const void* offsets = nullptr;
    const void* data = nullptr;
    const void* validity = nullptr;
    int64_t offset = -1;
    int64_t length = -1;
    bool operator==(const DictionaryKey&) const = default;
  };

  std::string name_;
  Source source_ = Source::Int64;
  Source index_ = Source::Int32;
  bool dictionary_encoded_ = false;
  table::Column column_;
  size_t rows_ = 0;
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> codes_;
  DictionaryKey dictionary_key_;
  std::vector<int32_t> dictionary_codes_;
};

std::string stream_error(ArrowArrayStream* stream, int code) {
  const char* why = stream->get_last_error ? stream->get_last_error(stream) : nullptr;
  return fmt::format("reading the Arrow stream failed (error {}{}{})", code, why ? ": " : "", why ? why : "");
}

}  // namespace

table::Table table_from_arrow(ArrowArrayStream* stream, const std::string& name, std::size_t rows_hint) {
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
  std::vector<ColumnReader> readers;
  for (int64_t c = 0; c < schema.schema.n_children; ++c) {
    const ArrowSchema& child = *schema.schema.children[c];
    readers.emplace_back(child.name ? child.name : "", child.format ? child.format : "", child.dictionary);
    readers.back().reserve(rows_hint);
  }

  int64_t rows = 0;
  // The batch before this one, released only once this one is read: its
  // dictionaries' addresses then cannot come back for other strings.
  auto previous = std::make_unique<OwnedArray>();
  for (;;) {
    auto current = std::make_unique<OwnedArray>();
    ArrowArray& batch_array = current->array;
    if (const int code = stream->get_next(stream, &batch_array); code != 0) throw InputError(stream_error(stream, code));
    if (!batch_array.release) break;  // the end of the stream
    const OwnedArray& batch = *current;
    if (batch.array.n_children != static_cast<int64_t>(readers.size()))
      throw InputError(fmt::format("a record batch has {} columns; the stream's schema {}", batch.array.n_children,
                                   readers.size()));
    for (size_t c = 0; c < readers.size(); ++c) {
      const ArrowArray& column = *batch.array.children[c];
      readers[c].append(column, batch.array.offset + column.offset, batch.array.length, rows);
    }
    rows += batch.array.length;
    previous = std::move(current);
  }

  table::Table table;
  table.name = name;
  for (ColumnReader& reader : readers) table.columns.push_back(reader.finish());
  table::check_table(table);
  return table;
}

}  // namespace gpuolap::python
