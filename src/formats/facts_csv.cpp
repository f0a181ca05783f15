// Facts CSV (RFC 4180, header required): one column per dimension holding
// base element names, one column per measure holding numbers; an empty
// measure field means no value. Columns may come in any order.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"

namespace gpuolap {

namespace {

// Splits RFC 4180 text into records, one at a time, tracking line numbers.
class CsvReader {
 public:
  CsvReader(const std::string& text, const std::string& where) : text_(text), where_(where) {}

  // Reads the next record into `fields`; false at the end of the text.
  // Fields are views into the text or into `scratch_` (quoted fields).
  bool next(std::vector<std::string_view>& fields) {
    fields.clear();
    if (pos_ >= text_.size()) return false;
    record_line_ = line_;
    scratch_.clear();
    // Quoted fields are unescaped into scratch_, which may still reallocate;
    // their views are made once the record is complete.
    struct Quoted {
      size_t field, offset, length;
    };
    std::vector<Quoted> quoted;
    for (;;) {
      if (pos_ < text_.size() && text_[pos_] == '"') {
        const size_t start = scratch_.size();
        ++pos_;
        for (;;) {
          if (pos_ >= text_.size())
            throw InputError(fmt::format("{}: line {}: unterminated quoted field", where_, record_line_));
          const char c = text_[pos_++];
          if (c == '"') {
            if (pos_ < text_.size() && text_[pos_] == '"') {
              scratch_ += '"';
              ++pos_;
            } else {
              break;
            }
          } else {
            if (c == '\n') ++line_;
            scratch_ += c;
          }
        }
        quoted.push_back(Quoted{fields.size(), start, scratch_.size() - start});
        fields.emplace_back();
        if (pos_ < text_.size() && text_[pos_] != ',' && text_[pos_] != '\n' && text_[pos_] != '\r')
          throw InputError(fmt::format("{}: line {}: unexpected character after a closing quote",
                                       where_, line_));
      } else {
        size_t end = pos_;
        while (end < text_.size() && text_[end] != ',' && text_[end] != '\n' && text_[end] != '\r') {
          if (text_[end] == '"')
            throw InputError(fmt::format("{}: line {}: a quote inside an unquoted field", where_, line_));
          ++end;
        }
        fields.emplace_back(text_.data() + pos_, end - pos_);
        pos_ = end;
      }
      if (pos_ >= text_.size()) break;
      const char sep = text_[pos_++];
      if (sep == ',') continue;
      if (sep == '\r' && pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
      ++line_;
      break;
    }
    for (const Quoted& q : quoted) fields[q.field] = std::string_view(scratch_.data() + q.offset, q.length);
    return true;
  }

  // A UTF-8 byte order mark, as spreadsheet exports write, is not data.
  void skip_byte_order_mark() {
    if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0) pos_ = 3;
  }
  uint64_t record_line() const { return record_line_; }
  size_t position() const { return pos_; }

 private:
  const std::string& text_;
  const std::string& where_;
  size_t pos_ = 0;
  uint64_t line_ = 1;
  uint64_t record_line_ = 1;
  std::string scratch_;
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

FactRows parse_facts_csv(const Schema& schema, const std::string& text, const std::string& where,
                         bool parse_values, const ProgressFn& progress) {
  CsvReader reader(text, where);
  reader.skip_byte_order_mark();
  std::vector<std::string_view> fields;
  if (!reader.next(fields) || (fields.size() == 1 && fields[0].empty()))
    throw InputError(fmt::format("{}: line 1: the header is missing", where));

  // Column -> dimension or measure.
  const size_t k = schema.dimension_count();
  const size_t measures = schema.measures().size();
  std::vector<int> dim_column(k, -1), measure_column(measures, -1);
  const size_t columns = fields.size();
  for (size_t c = 0; c < columns; ++c) {
    const std::string_view name = trim(fields[c]);
    if (auto d = schema.find_dimension(name)) {
      if (dim_column[*d] >= 0)
        throw InputError(fmt::format("{}: line 1: column '{}' appears twice", where, name));
      dim_column[*d] = static_cast<int>(c);
    } else if (auto m = schema.find_measure(name)) {
      if (measure_column[*m] >= 0)
        throw InputError(fmt::format("{}: line 1: column '{}' appears twice", where, name));
      measure_column[*m] = static_cast<int>(c);
    } else {
      throw InputError(fmt::format("{}: line 1: column '{}' is neither a dimension nor a measure of cube '{}'",
                                   where, name, schema.name()));
    }
  }
  for (size_t d = 0; d < k; ++d)
    if (dim_column[d] < 0)
      throw InputError(fmt::format("{}: line 1: the header has no column for dimension '{}'", where,
                                   schema.dimension(d).name()));

  FactRows out;
  std::vector<uint32_t> base(k);
  out.present.resize(measures);
  out.values.resize(measures);
  for (size_t m = 0; m < measures; ++m) out.present[m] = parse_values && measure_column[m] >= 0;
  uint64_t rows_since_report = 0;
  while (reader.next(fields)) {
    const uint64_t line = reader.record_line();
    if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
    if (fields.size() != columns)
      throw InputError(fmt::format("{}: line {}: {} fields, the header has {}", where, line,
                                   fields.size(), columns));
    for (size_t d = 0; d < k; ++d) {
      const Dimension& dim = schema.dimension(d);
      const std::string_view name = fields[dim_column[d]];
      auto e = dim.find(name);
      if (!e)
        throw InputError(fmt::format("{}: line {}: dimension '{}' has no element '{}'", where, line,
                                     dim.name(), name));
      if (!dim.element(*e).is_base())
        throw InputError(fmt::format(
            "{}: line {}: dimension '{}': element '{}' is consolidated; facts hold base elements",
            where, line, dim.name(), name));
      base[d] = dim.base_id(*e);
    }
    out.keys.push_back(schema.codec().encode(base));
    for (size_t m = 0; m < measures; ++m) {
      out.values[m].push_back(kNoValue);
      if (!out.present[m]) continue;
      const std::string_view field = trim(fields[measure_column[m]]);
      if (field.empty()) continue;
      double v = 0;
      const char* first = field.data();
      if (*first == '+' && field.size() > 1 && field[1] != '-') ++first;  // from_chars takes no plus sign
      auto [ptr, ec] = std::from_chars(first, field.data() + field.size(), v);
      if (ec == std::errc::result_out_of_range)
        throw InputError(fmt::format("{}: line {}: measure '{}': '{}' is out of the range of a double", where, line,
                                     schema.measures()[m], field));
      if (ec != std::errc() || ptr != field.data() + field.size())
        throw InputError(fmt::format("{}: line {}: measure '{}': '{}' is not a number", where, line,
                                     schema.measures()[m], field));
      if (!std::isfinite(v))
        throw InputError(fmt::format("{}: line {}: measure '{}': '{}' is not a finite number",
                                     where, line, schema.measures()[m], field));
      out.values[m].back() = v;
    }
    out.lines.push_back(line);
    if (progress && ++rows_since_report == (1 << 20)) {
      rows_since_report = 0;
      progress(reader.position(), text.size());
    }
  }
  if (progress) progress(text.size(), text.size());
  return out;
}

FactRows read_facts_csv(const Schema& schema, const std::filesystem::path& path, bool parse_values,
                        const ProgressFn& progress) {
  return parse_facts_csv(schema, read_text_file(path), path.string(), parse_values, progress);
}

namespace {
// Row indices sorted by key, file order among equal keys.
std::vector<size_t> rows_by_key(const FactRows& rows) {
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rows.keys[a] < rows.keys[b]; });
  return order;
}

void throw_if_duplicate(const FactRows& rows, const std::vector<size_t>& order,
                        const std::string& where) {
  for (size_t i = 1; i < order.size(); ++i) {
    if (rows.keys[order[i]] == rows.keys[order[i - 1]])
      throw InputError(fmt::format("{}: lines {} and {} give the same base cell", where,
                                   rows.lines[order[i - 1]], rows.lines[order[i]]));
  }
}
}  // namespace

void check_unique_cells(const FactRows& rows, const std::string& where) {
  throw_if_duplicate(rows, rows_by_key(rows), where);
}

FactTable build_fact_table(const Schema& schema, const FactRows& rows, const std::string& where) {
  const std::vector<size_t> order = rows_by_key(rows);
  throw_if_duplicate(rows, order, where);
  const size_t measures = schema.measures().size();
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values(measures);
  keys.reserve(order.size());
  for (auto& column : values) column.reserve(order.size());
  for (size_t i : order) {
    bool any = false;
    for (size_t m = 0; m < measures; ++m) any = any || has_value(rows.values[m][i]);
    if (!any) continue;
    keys.push_back(rows.keys[i]);
    for (size_t m = 0; m < measures; ++m) values[m].push_back(rows.values[m][i]);
  }
  return FactTable(schema.codec(), std::move(keys), std::move(values));
}

void write_facts_csv(const Schema& schema, const FactTable& facts, std::ostream& out,
                     const ProgressFn& progress) {
  const size_t k = schema.dimension_count();
  const size_t measures = schema.measures().size();
  std::string line;
  for (size_t d = 0; d < k; ++d) line += (d ? "," : "") + csv_field(schema.dimension(d).name());
  for (const std::string& m : schema.measures()) line += "," + csv_field(m);
  out << line << '\n';
  const auto keys = facts.keys();
  for (size_t i = 0; i < keys.size(); ++i) {
    line.clear();
    for (size_t d = 0; d < k; ++d) {
      const Dimension& dim = schema.dimension(d);
      if (d) line += ',';
      line += csv_field(dim.element(dim.base_element(schema.codec().decode(keys[i], d))).name);
    }
    for (size_t m = 0; m < measures; ++m) {
      line += ',';
      const double v = facts.values(m)[i];
      if (has_value(v)) line += fmt::format("{:.17g}", v);
    }
    line += '\n';
    out << line;
    if (progress && (i & 0xFFFFF) == 0) progress(i, keys.size());
  }
  if (progress) progress(keys.size(), keys.size());
}

}  // namespace gpuolap
