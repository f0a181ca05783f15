// Query files, read for latency: a batch of 10K queries is the answer path
// of a live tree, so the file is split into records in one pass, the records
// are tokenized in parallel, and each dimension's values are looked up in an
// index made once from the tree's dictionary (integers parsed, not turned
// into text). A row is echoed in the answer as it was written.
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "gpuolap/error.hpp"
#include "htree/htree_io.hpp"

namespace gpuolap::htree {
namespace {

using table::ColumnType;

// A field's value: its text without quotes ("" undoubled), and whether it
// was quoted (a quoted empty field is a value, not NULL, in a string column).
struct Field {
  std::string_view raw;  // an unquoted field, in the record
  bool quoted = false;
  std::string unquoted;  // a quoted one, its quotes undone

  std::string_view text() const { return quoted ? std::string_view(unquoted) : raw; }
};

// The fields of one record [begin, end); false when a quote is unbalanced.
bool split_fields(std::string_view record, std::vector<Field>& out) {
  out.clear();
  std::size_t i = 0;
  while (true) {
    Field& f = out.emplace_back();
    if (i < record.size() && record[i] == '"') {
      f.quoted = true;
      ++i;
      while (true) {
        if (i >= record.size()) return false;
        if (record[i] == '"') {
          if (i + 1 < record.size() && record[i + 1] == '"') {
            f.unquoted += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        f.unquoted += record[i++];
      }
      if (i < record.size() && record[i] != ',') return false;
    } else {
      const std::size_t comma = record.find(',', i);
      const std::size_t end = comma == std::string_view::npos ? record.size() : comma;
      f.raw = record.substr(i, end - i);
      if (f.raw.find('"') != std::string_view::npos) return false;
      i = end;
    }
    if (i >= record.size()) return true;
    ++i;  // the comma
    if (i == record.size()) {
      out.emplace_back();
      return true;
    }
  }
}

// One dimension's values as a query names them.
class ValueIndex {
 public:
  explicit ValueIndex(const Dictionary& dict) : dict_(dict) {
    if (dict.type == ColumnType::Int64) {
      for (std::size_t k = 0; k < dict.values.size(); ++k) {
        std::int64_t v = 0;
        const std::string& s = dict.values[k];
        if (!s.empty() && std::from_chars(s.data(), s.data() + s.size(), v).ec == std::errc()) ints_.emplace(v, k);
      }
      // A narrow range of integers (the usual dimension): an array.
      std::int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (const auto& [v, k] : ints_) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      if (lo <= hi && static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) < (std::uint64_t{1} << 20)) {
        dense_low_ = lo;
        dense_.assign(static_cast<std::size_t>(hi - lo) + 1, kAbsent);
        for (const auto& [v, k] : ints_) dense_[static_cast<std::size_t>(v - lo)] = k;
      }
    } else if (dict.type == ColumnType::String) {
      for (std::size_t k = 0; k < dict.values.size(); ++k) strings_.emplace(dict.values[k], k);
    }
    null_ = dict.find({});
  }
  // The code of a field; an InputError when it is no value of the type.
  std::uint32_t code(const Field& f) const {
    const std::string_view text = f.text();
    if (text.empty() && (!f.quoted || dict_.type != ColumnType::String)) return null_;
    if (!f.quoted && text == "*") return kAny;
    if (dict_.type == ColumnType::Int64) {
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size())
        throw InputError(fmt::format("'{}' is not an int64", table::clip_for_message(text)));
      if (!dense_.empty()) {
        const std::uint64_t at = static_cast<std::uint64_t>(v) - static_cast<std::uint64_t>(dense_low_);
        return at < dense_.size() ? dense_[at] : kAbsent;
      }
      const auto it = ints_.find(v);
      return it == ints_.end() ? kAbsent : it->second;
    }
    if (dict_.type == ColumnType::String) {
      const auto it = strings_.find(text);
      return it == strings_.end() ? kAbsent : it->second;
    }
    return dict_.find(dict_.canonical(std::string(text)));
  }

 private:
  const Dictionary& dict_;
  std::unordered_map<std::int64_t, std::uint32_t> ints_;
  std::vector<std::uint32_t> dense_;  // by value - dense_low_, when the range is narrow
  std::int64_t dense_low_ = 0;
  std::unordered_map<std::string_view, std::uint32_t> strings_;
  std::uint32_t null_ = kAbsent;
};

}  // namespace

QueryFile parse_query_csv(const HTree& tree, std::string text, const std::string& where) {
  QueryFile q;
  q.text = std::move(text);
  const std::string& t = q.text;
  // Records: ends at a line break outside quotes; wholly empty lines skipped.
  std::vector<std::pair<std::size_t, std::size_t>> records;
  std::vector<std::uint64_t> lines;  // the line each record starts on
  std::uint64_t line = 1;
  for (std::size_t i = 0; i < t.size();) {
    const std::size_t start = i;
    const std::uint64_t at = line;
    const char* nl = static_cast<const char*>(std::memchr(t.data() + i, '\n', t.size() - i));
    std::size_t stop = nl ? static_cast<std::size_t>(nl - t.data()) : t.size();
    if (std::memchr(t.data() + i, '"', stop - i)) {
      // A quoted field may hold line breaks: walk this record by character.
      bool quoted = false;
      while (i < t.size() && (quoted || t[i] != '\n')) {
        if (t[i] == '"') quoted = !quoted;
        if (t[i] == '\n') ++line;
        ++i;
      }
    } else {
      i = stop;
    }
    std::size_t end = i;
    if (end > start && t[end - 1] == '\r') --end;
    if (i < t.size()) {
      ++i;
      ++line;
    }
    if (end > start) {
      records.emplace_back(start, end - start);
      lines.push_back(at);
    }
  }
  if (records.empty()) throw InputError(fmt::format("{}: empty: a query file needs a header line", where));
  std::vector<Field> header;
  if (!split_fields(q.line(records[0]), header))
    throw InputError(fmt::format("{}: line {}: an unbalanced quote in the header", where, lines[0]));
  const std::size_t m = tree.dimensions.size(), columns = header.size();
  std::vector<std::size_t> dim_of(columns);
  std::vector<int> seen(m, 0);
  for (std::size_t c = 0; c < columns; ++c) {
    const std::string name(header[c].text());
    const auto it = std::find(tree.dimensions.begin(), tree.dimensions.end(), name);
    if (it == tree.dimensions.end())
      throw InputError(fmt::format("{}: column {} is no dimension of the tree ({})", where, table::clip_for_message(name),
                                   fmt::join(tree.dimensions, ", ")));
    dim_of[c] = it - tree.dimensions.begin();
    if (seen[dim_of[c]]++) throw InputError(fmt::format("{}: column {} appears twice", where, name));
  }
  for (std::size_t d = 0; d < m; ++d)
    if (!seen[d])
      throw InputError(fmt::format("{}: the header lacks dimension {} (name every dimension)", where, tree.dimensions[d]));
  std::vector<ValueIndex> index;
  for (std::size_t c = 0; c < columns; ++c) index.emplace_back(tree.dictionaries[dim_of[c]]);

  q.header = records[0];
  q.rows.assign(records.begin() + 1, records.end());
  const std::size_t n = q.rows.size();
  q.batch.dimensions = m;
  q.batch.codes.assign(n * m, kAny);
  // The first bad record (by line) wins, whichever thread finds it.
  std::mutex mutex;
  std::optional<std::pair<std::uint64_t, std::string>> first_error;
  constexpr std::size_t kChunk = 1024;
  tbb::parallel_for(std::size_t{0}, (n + kChunk - 1) / kChunk, [&](std::size_t chunk) {
    std::vector<Field> fields;
    for (std::size_t r = chunk * kChunk; r < std::min(n, (chunk + 1) * kChunk); ++r) {
      const std::uint64_t at = lines[r + 1];
      std::string problem;
      if (!split_fields(q.line(q.rows[r]), fields)) {
        problem = "an unbalanced quote";
      } else if (fields.size() != columns) {
        problem = fmt::format("{} fields, the header has {}", fields.size(), columns);
      } else {
        for (std::size_t c = 0; c < columns && problem.empty(); ++c) {
          try {
            q.batch.codes[r * m + dim_of[c]] = index[c].code(fields[c]);
          } catch (const InputError& e) {
            problem = fmt::format("column {} ({}): {}", c + 1, header[c].text(), e.what());
          }
        }
      }
      if (problem.empty()) continue;
      std::lock_guard lock(mutex);
      if (!first_error || at < first_error->first) first_error.emplace(at, std::move(problem));
      return;
    }
  });
  if (first_error) throw InputError(fmt::format("{}: line {}: {}", where, first_error->first, first_error->second));
  return q;
}

QueryFile read_query_csv(const HTree& tree, const std::filesystem::path& csv) {
  std::ifstream in(csv, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", csv.string()));
  in.seekg(0, std::ios::end);
  std::string text(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return parse_query_csv(tree, std::move(text), csv.string());
}

void write_answers(std::ostream& out, const QueryFile& queries, const std::vector<Aggregate>& answers) {
  out << queries.line(queries.header) << ",count,sum,min,max,avg\n";
  constexpr std::size_t kChunk = 2048;
  const std::size_t n = answers.size(), chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::string> text(chunks);
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t k) {
    std::string& s = text[k];
    for (std::size_t i = k * kChunk; i < std::min(n, (k + 1) * kChunk); ++i) {
      s += queries.line(queries.rows[i]);
      const Aggregate& a = answers[i];
      if (a.count == 0) s += ",0,,,,\n";
      else
        fmt::format_to(std::back_inserter(s), ",{},{},{},{},{}\n", a.count, a.sum, a.min, a.max,
                       a.sum / static_cast<double>(a.count));
    }
  });
  for (const std::string& s : text) out << s;
}

}  // namespace gpuolap::htree
