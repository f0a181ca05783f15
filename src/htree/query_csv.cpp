// Query files, read for latency: a batch of 10K queries is the answer path
// of a live tree (a server's request). A file without quotes (the usual
// one) is cut into chunks at line breaks and each chunk's lines found in
// parallel; a quoted field may hold a line break, so a file with quotes is
// walked once by character. The records are then tokenized in parallel,
// unquoted ones by a scan for commas, and each dimension's values looked up
// in an index made once from the tree's dictionary (integers parsed, not
// turned into text). A row is echoed in the answer as it was written.
#include <fmt/compile.h>
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
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
  std::uint32_t code(const Field& f) const { return code(f.text(), f.quoted); }
  std::uint32_t code(std::string_view text, bool quoted) const {
    if (text.empty() && (!quoted || dict_.type != ColumnType::String)) return null_;
    if (!quoted && text == "*") return kAny;
    if (dict_.type == ColumnType::Int64) {
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || end != text.data() + text.size())
        throw InputError(fmt::format("'{}' is not an int64", table::clip_for_message(text)));
      if (!dense_.empty()) return dense_code(static_cast<std::uint64_t>(v));
      const auto it = ints_.find(v);
      return it == ints_.end() ? kAbsent : it->second;
    }
    if (dict_.type == ColumnType::String) {
      const auto it = strings_.find(text);
      return it == strings_.end() ? kAbsent : it->second;
    }
    return dict_.find(dict_.canonical(std::string(text)));
  }
  // The code of the unquoted field at `p`, which ends at the next comma or
  // `end`; `p` is left there. An integer of a narrow range (the usual
  // dimension) is parsed and looked up here, without a call a field.
  std::uint32_t scan(const char*& p, const char* end) const {
    const char* field = p;
    if (!dense_.empty()) {
      const char* d = p;
      const bool negative = d < end && *d == '-';
      if (negative) ++d;
      const char* digits = d;
      std::uint64_t v = 0;
      while (d < end && static_cast<unsigned char>(*d - '0') < 10 && d - digits < 18) v = v * 10 + (*d++ - '0');
      if (d > digits && (d == end || *d == ',')) {
        p = d;
        return dense_code(negative ? std::uint64_t{0} - v : v);
      }
    }
    const char* comma = static_cast<const char*>(std::memchr(field, ',', static_cast<std::size_t>(end - field)));
    p = comma ? comma : end;
    return code(std::string_view(field, static_cast<std::size_t>(p - field)), false);
  }

 private:
  const Dictionary& dict_;
  std::unordered_map<std::int64_t, std::uint32_t> ints_;
  // An int64's code in the dense array (its bits, so negatives wrap the same way).
  std::uint32_t dense_code(std::uint64_t value) const {
    const std::uint64_t at = value - static_cast<std::uint64_t>(dense_low_);
    return at < dense_.size() ? dense_[at] : kAbsent;
  }

  std::vector<std::uint32_t> dense_;  // by value - dense_low_, when the range is narrow
  std::int64_t dense_low_ = 0;
  std::unordered_map<std::string_view, std::uint32_t> strings_;
  std::uint32_t null_ = kAbsent;
};

// The records of a file (offset, length) and the line each starts on.
struct Records {
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::vector<std::uint64_t> lines;

  // A line [start, end) is a record unless it is empty (or only a '\r').
  void add(const std::string& t, std::size_t start, std::size_t end, std::uint64_t line) {
    if (end > start && t[end - 1] == '\r') --end;
    if (end == start) return;
    spans.emplace_back(start, end - start);
    lines.push_back(line);
  }
};

// A record ends at a line break outside quotes: walked by character where a
// line holds a quote.
Records records_by_walk(const std::string& t) {
  Records r;
  std::uint64_t line = 1;
  for (std::size_t i = 0; i < t.size();) {
    const std::size_t start = i;
    const std::uint64_t at = line;
    const char* nl = static_cast<const char*>(std::memchr(t.data() + i, '\n', t.size() - i));
    std::size_t stop = nl ? static_cast<std::size_t>(nl - t.data()) : t.size();
    if (std::memchr(t.data() + i, '"', stop - i)) {
      bool quoted = false;
      while (i < t.size() && (quoted || t[i] != '\n')) {
        if (t[i] == '"') quoted = !quoted;
        if (t[i] == '\n') ++line;
        ++i;
      }
    } else {
      i = stop;
    }
    r.add(t, start, i, at);
    if (i < t.size()) {
      ++i;
      ++line;
    }
  }
  return r;
}

// Without quotes a record is a line: chunks of the file cut at line breaks,
// each chunk's lines found in parallel and numbered from its line breaks'
// count. Empty when the file holds a quote (then records_by_walk).
std::optional<Records> records_by_lines(const std::string& t) {
  constexpr std::size_t kChunkBytes = std::size_t{1} << 16;
  std::vector<std::size_t> cut{0};
  while (cut.back() < t.size()) {
    std::size_t next = cut.back() + kChunkBytes;
    if (next >= t.size()) {
      next = t.size();
    } else {
      const char* nl = static_cast<const char*>(std::memchr(t.data() + next, '\n', t.size() - next));
      next = nl ? static_cast<std::size_t>(nl - t.data()) + 1 : t.size();
    }
    cut.push_back(next);
  }
  const std::size_t chunks = cut.size() - 1;
  std::vector<Records> parts(chunks);
  std::vector<std::uint64_t> breaks(chunks, 0);
  std::atomic<bool> quote{false};
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t k) {
    if (std::memchr(t.data() + cut[k], '"', cut[k + 1] - cut[k])) {
      quote = true;
      return;
    }
    std::uint64_t line = 0;  // counted from the chunk's first line; numbered below
    for (std::size_t i = cut[k]; i < cut[k + 1];) {
      const char* nl = static_cast<const char*>(std::memchr(t.data() + i, '\n', cut[k + 1] - i));
      const std::size_t stop = nl ? static_cast<std::size_t>(nl - t.data()) : cut[k + 1];
      parts[k].add(t, i, stop, line);
      i = stop + 1;
      ++line;
    }
    breaks[k] = line;
  });
  if (quote) return std::nullopt;
  Records r;
  std::uint64_t first_line = 1;
  for (std::size_t k = 0; k < chunks; ++k) {
    for (std::size_t j = 0; j < parts[k].spans.size(); ++j) {
      r.spans.push_back(parts[k].spans[j]);
      r.lines.push_back(first_line + parts[k].lines[j]);
    }
    first_line += breaks[k];
  }
  return r;
}

}  // namespace

QueryFile parse_query_csv(const HTree& tree, std::string text, const std::string& where,
                          std::pmr::memory_resource* memory) {
  // The batch made in `memory` here: a pmr vector assigned later would keep
  // the resource it was made with.
  QueryFile q{std::move(text), {}, {}, QueryBatch{0, std::pmr::vector<std::uint32_t>(memory)}};
  const std::string& t = q.text;
  std::optional<Records> by_lines = records_by_lines(t);
  const bool unquoted = by_lines.has_value();
  const Records found = unquoted ? std::move(*by_lines) : records_by_walk(t);
  const auto& records = found.spans;
  const auto& lines = found.lines;
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
  // Small chunks: a server's batch of 10K rows spreads over every core.
  constexpr std::size_t kChunk = 256;
  tbb::parallel_for(std::size_t{0}, (n + kChunk - 1) / kChunk, [&](std::size_t chunk) {
    std::vector<Field> fields;
    for (std::size_t r = chunk * kChunk; r < std::min(n, (chunk + 1) * kChunk); ++r) {
      const std::uint64_t at = lines[r + 1];
      std::string problem;
      if (unquoted) {
        // Fields are the text between commas, coded as they are scanned. A
        // record of the wrong width is reported as such, before its values.
        const std::string_view record = q.line(q.rows[r]);
        const char* p = record.data();
        const char* const end = p + record.size();
        std::size_t c = 0;
        try {
          for (;; ++c) {
            if (c < columns) {
              q.batch.codes[r * m + dim_of[c]] = index[c].scan(p, end);
            } else {
              const char* comma = static_cast<const char*>(std::memchr(p, ',', static_cast<std::size_t>(end - p)));
              p = comma ? comma : end;
            }
            if (p == end) break;
            ++p;  // the comma
          }
        } catch (const InputError& e) {
          problem = fmt::format("column {} ({}): {}", c + 1, header[c].text(), e.what());
        }
        // Counted again only when a value stopped the scan early.
        const std::size_t count =
            problem.empty() ? c + 1 : std::count(record.begin(), record.end(), ',') + std::size_t{1};
        if (count != columns) problem = fmt::format("{} fields, the header has {}", count, columns);
      } else if (!split_fields(q.line(q.rows[r]), fields)) {
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

QueryFile read_query_csv(const HTree& tree, const std::filesystem::path& csv, std::pmr::memory_resource* memory) {
  std::error_code ec;
  // A pipe or a terminal has no size to read up to: read it as a stream
  // (a directory or a missing file is refused there, by name).
  if (!std::filesystem::is_regular_file(csv, ec)) return parse_query_csv(tree, read_text_file(csv), csv.string(), memory);
  std::ifstream in(csv, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open", csv.string()));
  in.seekg(0, std::ios::end);
  std::string text(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return parse_query_csv(tree, std::move(text), csv.string(), memory);
}

std::string answers_csv(const QueryFile& queries, std::span<const Aggregate> answers) {
  // Chunks of rows formatted in parallel, then copied into one string (a
  // server's response body) at their offsets.
  constexpr std::size_t kChunk = 512;
  const std::size_t n = answers.size(), chunks = (n + kChunk - 1) / kChunk;
  std::vector<std::string> text(chunks + 1);
  text[0] = fmt::format("{},count,sum,min,max,avg\n", queries.line(queries.header));
  tbb::parallel_for(std::size_t{0}, chunks, [&](std::size_t k) {
    std::string& s = text[k + 1];
    for (std::size_t i = k * kChunk; i < std::min(n, (k + 1) * kChunk); ++i) {
      s += queries.line(queries.rows[i]);
      const Aggregate& a = answers[i];
      if (a.count == 0) s += ",0,,,,\n";
      else
        fmt::format_to(std::back_inserter(s), FMT_COMPILE(",{},{},{},{},{}\n"), a.count, a.sum, a.min, a.max,
                       a.sum / static_cast<double>(a.count));
    }
  });
  std::vector<std::size_t> at(text.size() + 1, 0);
  for (std::size_t k = 0; k < text.size(); ++k) at[k + 1] = at[k] + text[k].size();
  std::string out(at.back(), '\0');
  tbb::parallel_for(std::size_t{0}, text.size(), [&](std::size_t k) { text[k].copy(out.data() + at[k], text[k].size()); });
  return out;
}

void write_answers(std::ostream& out, const QueryFile& queries, std::span<const Aggregate> answers) {
  out << answers_csv(queries, answers);
}

}  // namespace gpuolap::htree
