#include "sql/expression.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "gpuolap/error.hpp"
#include "sql/parse_tree.hpp"

namespace gpuolap::sql {

std::vector<std::uint32_t> all_positions(std::size_t n) {
  std::vector<std::uint32_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<std::uint32_t>(i);
  return p;
}

// Howard Hinnant's civil-calendar algorithms (proleptic Gregorian).
std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

void civil_from_days(std::int64_t z, std::int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<std::int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool parse_date(std::string_view text, std::int64_t& days) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  bool bc = false;
  if (text.size() > 3 && text.substr(text.size() - 3) == " BC") {
    bc = true;
    text.remove_suffix(3);
  }
  std::int64_t y = 0;
  unsigned m = 0, d = 0;
  const char* p = text.data();
  const char* end = text.data() + text.size();
  auto r = std::from_chars(p, end, y);
  if (r.ec != std::errc() || r.ptr - p < 4 || r.ptr == end || *r.ptr != '-' || y < 0) return false;
  p = r.ptr + 1;
  r = std::from_chars(p, end, m);
  if (r.ec != std::errc() || r.ptr - p != 2 || r.ptr == end || *r.ptr != '-') return false;
  p = r.ptr + 1;
  r = std::from_chars(p, end, d);
  if (r.ec != std::errc() || r.ptr - p != 2 || r.ptr != end) return false;
  if (bc) {
    if (y == 0) return false;
    y = 1 - y;
  } else if (y == 0) {
    return false;
  }
  static const unsigned month_days[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > month_days[m - 1]) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (m == 2 && d == 29 && !leap) return false;
  if (y > 5874897 || y < -4713) return false;
  days = days_from_civil(y, m, d);
  return true;
}

std::string format_date(std::int64_t days) {
  std::int64_t y;
  unsigned m, d;
  civil_from_days(days, y, m, d);
  char buf[48];
  if (y <= 0) std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u BC", static_cast<long long>(1 - y), m, d);
  else std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u", static_cast<long long>(y), m, d);
  return buf;
}

std::string format_double_shortest(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

bool like_match(std::string_view text, std::string_view pattern) {
  // Iterative matching with one backtrack point (the last %): linear for
  // the usual patterns, never exponential.
  std::size_t t = 0, p = 0, star_p = std::string_view::npos, star_t = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star_p = ++p;
      star_t = t;
      continue;
    }
    if (p < pattern.size()) {
      bool escaped = pattern[p] == '\\' && p + 1 < pattern.size();
      char want = escaped ? pattern[p + 1] : pattern[p];
      if ((!escaped && want == '_') || want == text[t]) {
        // '_' is one character: skip a whole UTF-8 sequence.
        std::size_t step = 1;
        if (!escaped && want == '_') {
          while (t + step < text.size() && (static_cast<unsigned char>(text[t + step]) & 0xC0) == 0x80) ++step;
        }
        t += step;
        p += escaped ? 2 : 1;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    p = star_p;
    t = ++star_t;
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

void Evaluator::fail(const Expr& e, const std::string& message) const {
  if (source_) source_->fail(e.location, message);
  throw InputError(message);
}

namespace {

double as_double(const ValueVector& v, std::size_t i) {
  return v.type == SqlType::Double ? v.doubles[i] : static_cast<double>(v.ints[i]);
}

ValueVector bools_of(std::size_t n) {
  ValueVector out(SqlType::Bool);
  out.ints.assign(n, 0);
  out.nulls.assign(n, 0);
  return out;
}

}  // namespace

ValueVector Evaluator::arithmetic(const Expr& e, const std::vector<std::uint32_t>& positions) const {
  ValueVector a = evaluate(*e.children[0], positions);
  ValueVector b = evaluate(*e.children[1], positions);
  const std::size_t n = positions.size();
  ValueVector out(e.type);
  out.reserve(n);
  const char op = e.op[0];
  if (e.type == SqlType::Double) {
    // Written in place, the operand types read once: the arithmetic of
    // aggregate arguments (TPC-H Q1's prices) runs on every row.
    out.doubles.assign(n, 0);
    out.nulls.resize(n);
    const bool a_double = a.type == SqlType::Double, b_double = b.type == SqlType::Double;
    for (std::size_t i = 0; i < n; ++i) {
      out.nulls[i] = a.nulls[i] | b.nulls[i];
      if (out.nulls[i]) continue;
      const double x = a_double ? a.doubles[i] : static_cast<double>(a.ints[i]);
      const double y = b_double ? b.doubles[i] : static_cast<double>(b.ints[i]);
      double r = 0;
      switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '/':
          if (y == 0) fail(e, "division by zero");
          r = x / y;
          break;
      }
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(e, "value out of range: overflow");
      out.doubles[i] = r;
    }
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (a.is_null(i) || b.is_null(i)) {
      out.push_null();
      continue;
    }
    if (e.type == SqlType::Double) {
      double x = as_double(a, i), y = as_double(b, i), r = 0;
      switch (op) {
        case '+': r = x + y; break;
        case '-': r = x - y; break;
        case '*': r = x * y; break;
        case '/':
          if (y == 0) fail(e, "division by zero");
          r = x / y;
          break;
      }
      if (std::isinf(r) && std::isfinite(x) && std::isfinite(y)) fail(e, "value out of range: overflow");
      out.push_double(r);
      continue;
    }
    // Int64 and dates: date ± integer or interval counts days; date - date
    // is the integer of days between them.
    std::int64_t x = a.ints[i], y = b.ints[i], r = 0;
    bool overflow = false;
    switch (op) {
      case '+': overflow = __builtin_add_overflow(x, y, &r); break;
      case '-': overflow = __builtin_sub_overflow(x, y, &r); break;
      case '*': overflow = __builtin_mul_overflow(x, y, &r); break;
      case '/':
        if (y == 0) fail(e, "division by zero");
        if (x == std::numeric_limits<std::int64_t>::min() && y == -1) overflow = true;
        else r = x / y;
        break;
      case '%':
        if (y == 0) fail(e, "division by zero");
        r = y == -1 ? 0 : x % y;
        break;
    }
    if (overflow) fail(e, "bigint out of range");
    if (e.type == SqlType::Date) {
      std::int64_t year;
      unsigned month, day;
      civil_from_days(r, year, month, day);
      if (year > 5874897 || year < -4713) fail(e, "date out of range");
    }
    out.push_int(r);
  }
  return out;
}

// AND and OR evaluate their next operand only where the result is still
// open, as PostgreSQL does in practice: `b <> 0 AND a / b > 1` never
// divides by zero.
ValueVector Evaluator::logical(const Expr& e, const std::vector<std::uint32_t>& positions) const {
  const bool is_and = e.kind == ExprKind::And;
  const std::size_t n = positions.size();
  ValueVector out = bools_of(n);
  for (std::size_t i = 0; i < n; ++i) out.ints[i] = is_and ? 1 : 0;
  std::vector<std::uint32_t> open = all_positions(n);  // indexes into positions
  for (const auto& child : e.children) {
    if (open.empty()) break;
    std::vector<std::uint32_t> sub(open.size());
    for (std::size_t k = 0; k < open.size(); ++k) sub[k] = positions[open[k]];
    ValueVector v = evaluate(*child, sub);
    std::vector<std::uint32_t> still_open;
    for (std::size_t k = 0; k < open.size(); ++k) {
      std::uint32_t i = open[k];
      if (v.is_null(k)) {
        out.nulls[i] = 1;
        still_open.push_back(i);
      } else if ((v.ints[k] != 0) == is_and) {
        still_open.push_back(i);  // true for AND, false for OR: undecided
      } else {
        out.ints[i] = is_and ? 0 : 1;  // decided, whatever NULL came before
        out.nulls[i] = 0;
      }
    }
    open = std::move(still_open);
  }
  return out;
}

ValueVector Evaluator::case_when(const Expr& e, const std::vector<std::uint32_t>& positions) const {
  const std::size_t n = positions.size();
  ValueVector out(e.type);
  for (std::size_t i = 0; i < n; ++i) out.push_null();
  std::vector<std::uint32_t> open = all_positions(n);
  auto fill = [&](const Expr& branch, const std::vector<std::uint32_t>& which) {
    if (which.empty()) return;
    std::vector<std::uint32_t> sub(which.size());
    for (std::size_t k = 0; k < which.size(); ++k) sub[k] = positions[which[k]];
    ValueVector v = evaluate(branch, sub);
    for (std::size_t k = 0; k < which.size(); ++k) {
      if (v.is_null(k)) continue;
      if (e.type == SqlType::Double && v.type == SqlType::Int64) {
        out.nulls[which[k]] = 0;
        out.doubles[which[k]] = static_cast<double>(v.ints[k]);
      } else {
        out.set_from(which[k], v, k);
      }
    }
  };
  const std::size_t pairs = (e.children.size() - 1) / 2;
  for (std::size_t w = 0; w < pairs && !open.empty(); ++w) {
    std::vector<std::uint32_t> sub(open.size());
    for (std::size_t k = 0; k < open.size(); ++k) sub[k] = positions[open[k]];
    ValueVector cond = evaluate(*e.children[2 * w], sub);
    std::vector<std::uint32_t> taken, rest;
    for (std::size_t k = 0; k < open.size(); ++k) {
      (!cond.is_null(k) && cond.ints[k] != 0 ? taken : rest).push_back(open[k]);
    }
    fill(*e.children[2 * w + 1], taken);
    open = std::move(rest);
  }
  fill(*e.children.back(), open);
  return out;
}

namespace {

std::string trimmed(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t\n\r"), e = s.find_last_not_of(" \t\n\r");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

}  // namespace

namespace {

enum class CompareOp { Eq, Ne, Lt, Le, Gt, Ge };

CompareOp compare_op(const std::string& op) {
  if (op == "=") return CompareOp::Eq;
  if (op == "<>") return CompareOp::Ne;
  if (op == "<") return CompareOp::Lt;
  if (op == "<=") return CompareOp::Le;
  if (op == ">") return CompareOp::Gt;
  return CompareOp::Ge;
}

// a op b  <=>  b flipped(op) a
CompareOp flipped(CompareOp op) {
  switch (op) {
    case CompareOp::Lt: return CompareOp::Gt;
    case CompareOp::Le: return CompareOp::Ge;
    case CompareOp::Gt: return CompareOp::Lt;
    case CompareOp::Ge: return CompareOp::Le;
    default: return op;
  }
}

bool holds(CompareOp op, int c) {
  switch (op) {
    case CompareOp::Eq: return c == 0;
    case CompareOp::Ne: return c != 0;
    case CompareOp::Lt: return c < 0;
    case CompareOp::Le: return c <= 0;
    case CompareOp::Gt: return c > 0;
    case CompareOp::Ge: return c >= 0;
  }
  return false;
}

bool is_string_constant(const Expr& e) {
  return e.kind == ExprKind::Constant && e.constant.type == SqlType::String && !e.constant.is_null(0);
}

// Whether `code op literal` holds, for every code of a dictionary sorted in
// byte order: the literal's place in it by binary search, so the test is two
// integer comparisons ([lo, hi) are the codes equal to the literal: one or none).
struct CodeRange {
  std::int32_t lo, hi;
  CodeRange(const table::Dictionary& dictionary, const std::string& literal) {
    lo = static_cast<std::int32_t>(std::lower_bound(dictionary.begin(), dictionary.end(), literal) - dictionary.begin());
    hi = lo + (lo < static_cast<std::int32_t>(dictionary.size()) && dictionary[lo] == literal ? 1 : 0);
  }
  bool holds(CompareOp op, std::int32_t code) const {
    switch (op) {
      case CompareOp::Eq: return code >= lo && code < hi;
      case CompareOp::Ne: return code < lo || code >= hi;
      case CompareOp::Lt: return code < lo;
      case CompareOp::Le: return code < hi;
      case CompareOp::Gt: return code >= hi;
      case CompareOp::Ge: return code >= lo;
    }
    return false;
  }
};

}  // namespace

bool Evaluator::on_codes(const Expr& e, const std::vector<std::uint32_t>& positions, ValueVector& out) const {
  const std::size_t n = positions.size();
  if (e.children.empty()) return false;
  std::size_t column_child = 0;
  if (e.kind == ExprKind::Compare && is_string_constant(*e.children[0])) column_child = 1;
  for (std::size_t k = 0; k < e.children.size(); ++k) {
    if (k != column_child && !is_string_constant(*e.children[k])) return false;
  }
  std::vector<std::uint32_t> rows;
  const table::Column* column = leaves_.input_column(*e.children[column_child], positions, rows);
  if (!column || column->type != table::ColumnType::String) return false;
  const table::Dictionary& dictionary = column->dictionary;
  // The predicate's value for each code that can occur.
  std::vector<std::uint8_t> code_holds;
  if (e.kind == ExprKind::Compare) {
    const CompareOp op = column_child == 0 ? compare_op(e.op) : flipped(compare_op(e.op));
    const CodeRange range(dictionary, e.children[1 - column_child]->constant.strings[0]);
    out = bools_of(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (column->is_null(rows[i])) out.nulls[i] = 1;
      else out.ints[i] = range.holds(op, column->int32s[rows[i]]);
    }
    return true;
  }
  if (e.kind == ExprKind::In) {
    std::vector<std::int32_t> codes;  // of the listed strings that are in the dictionary
    for (std::size_t k = 1; k < e.children.size(); ++k) {
      const CodeRange range(dictionary, e.children[k]->constant.strings[0]);
      if (range.hi > range.lo) codes.push_back(range.lo);
    }
    out = bools_of(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (column->is_null(rows[i])) {
        out.nulls[i] = 1;
        continue;
      }
      const std::int32_t code = column->int32s[rows[i]];
      out.ints[i] = std::find(codes.begin(), codes.end(), code) != codes.end();
    }
    return true;
  }
  if (e.kind == ExprKind::Like) {
    // Once per dictionary entry, where the dictionary is no longer than the
    // batch; a larger dictionary is matched row by row.
    if (dictionary.size() > n) return false;
    const std::string& pattern = e.children[1]->constant.strings[0];
    if (!pattern.empty() && pattern.back() == '\\' &&
        (pattern.size() - pattern.find_last_not_of('\\') - 1) % 2 == 1) {
      fail(e, "LIKE pattern must not end with escape character");
    }
    code_holds.resize(dictionary.size());
    for (std::size_t c = 0; c < dictionary.size(); ++c) code_holds[c] = like_match(dictionary[c], pattern) != e.negated;
    out = bools_of(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (column->is_null(rows[i])) out.nulls[i] = 1;
      else out.ints[i] = code_holds[column->int32s[rows[i]]];
    }
    return true;
  }
  return false;
}

ValueVector Evaluator::compare(const Expr& e, const std::vector<std::uint32_t>& positions) const {
  ValueVector coded;
  if (on_codes(e, positions, coded)) return coded;
  ValueVector a = evaluate(*e.children[0], positions);
  ValueVector b = evaluate(*e.children[1], positions);
  const std::size_t n = positions.size();
  const CompareOp op = compare_op(e.op);
  ValueVector out = bools_of(n);
  for (std::size_t i = 0; i < n; ++i) out.nulls[i] = a.nulls[i] | b.nulls[i];
  const bool ints = a.type != SqlType::Double && a.type != SqlType::String && b.type != SqlType::Double &&
                    b.type != SqlType::String && a.type != SqlType::Null && b.type != SqlType::Null;
  if (ints) {  // bigint, date, boolean: integers compared as they are
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t x = a.ints[i], y = b.ints[i];
      out.ints[i] = !out.nulls[i] && holds(op, (x > y) - (x < y));
    }
    return out;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!out.nulls[i]) out.ints[i] = holds(op, compare_values(a, i, b, i));
  }
  return out;
}

namespace {

// An expression that reads no column and no group: its value is the same on
// every row.
bool is_constant_tree(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Constant: return true;
    case ExprKind::InputColumn:
    case ExprKind::GroupKey:
    case ExprKind::Aggregate:
    case ExprKind::Grouping: return false;
    default:
      return std::all_of(e.children.begin(), e.children.end(), [](const ExprPtr& c) { return is_constant_tree(*c); });
  }
}

}  // namespace

ValueVector Evaluator::evaluate(const Expr& e, const std::vector<std::uint32_t>& positions) const {
  const std::size_t n = positions.size();
  // `date '1998-12-01' - interval '90' day` once a batch, not once a row.
  if (n > 1 && e.kind != ExprKind::Constant && is_constant_tree(e)) return evaluate(e, {positions[0]}).repeated(n);
  switch (e.kind) {
    case ExprKind::Constant: {
      if (e.constant.type == SqlType::Null || e.constant.is_null(0)) {
        ValueVector out(e.type);
        for (std::size_t i = 0; i < n; ++i) out.push_null();
        return out;
      }
      return e.constant.repeated(n);
    }
    case ExprKind::InputColumn:
    case ExprKind::GroupKey:
    case ExprKind::Aggregate:
    case ExprKind::Grouping: return leaves_.leaf(e, positions);
    case ExprKind::Arithmetic: return arithmetic(e, positions);
    case ExprKind::Negate: {
      ValueVector v = evaluate(*e.children[0], positions);
      for (std::size_t i = 0; i < n; ++i) {
        if (v.is_null(i)) continue;
        if (v.type == SqlType::Double) {
          v.doubles[i] = -v.doubles[i];
        } else {
          if (v.ints[i] == std::numeric_limits<std::int64_t>::min()) fail(e, "bigint out of range");
          v.ints[i] = -v.ints[i];
        }
      }
      return v;
    }
    case ExprKind::Compare: return compare(e, positions);
    case ExprKind::And:
    case ExprKind::Or: return logical(e, positions);
    case ExprKind::Not: {
      ValueVector v = evaluate(*e.children[0], positions);
      for (std::size_t i = 0; i < n; ++i) v.ints[i] = v.ints[i] ? 0 : 1;
      return v;
    }
    case ExprKind::IsNull: {
      ValueVector v = evaluate(*e.children[0], positions);
      ValueVector out = bools_of(n);
      for (std::size_t i = 0; i < n; ++i) out.ints[i] = (v.is_null(i) != 0) != e.negated;
      return out;
    }
    case ExprKind::Like: {
      ValueVector coded;
      if (on_codes(e, positions, coded)) return coded;
      ValueVector t = evaluate(*e.children[0], positions);
      ValueVector p = evaluate(*e.children[1], positions);
      ValueVector out = bools_of(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (t.is_null(i) || p.is_null(i)) {
          out.nulls[i] = 1;
          continue;
        }
        const std::string& pattern = p.strings[i];
        if (!pattern.empty() && pattern.back() == '\\' &&
            (pattern.size() - pattern.find_last_not_of('\\') - 1) % 2 == 1) {
          fail(e, "LIKE pattern must not end with escape character");
        }
        out.ints[i] = like_match(t.strings[i], pattern) != e.negated;
      }
      return out;
    }
    case ExprKind::In: {
      ValueVector coded;
      if (on_codes(e, positions, coded)) return coded;
      ValueVector v = evaluate(*e.children[0], positions);
      std::vector<ValueVector> items;
      for (std::size_t k = 1; k < e.children.size(); ++k) items.push_back(evaluate(*e.children[k], positions));
      ValueVector out = bools_of(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (v.is_null(i)) {
          out.nulls[i] = 1;
          continue;
        }
        bool found = false, saw_null = false;
        for (const auto& item : items) {
          if (item.is_null(i)) saw_null = true;
          else if (compare_values(v, i, item, i) == 0) found = true;
          if (found) break;
        }
        out.ints[i] = found;
        out.nulls[i] = !found && saw_null;
      }
      return out;
    }
    case ExprKind::Case: return case_when(e, positions);
    case ExprKind::Extract: {
      ValueVector v = evaluate(*e.children[0], positions);
      ValueVector out(SqlType::Int64);
      out.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (v.is_null(i)) {
          out.push_null();
          continue;
        }
        std::int64_t y;
        unsigned m, d;
        civil_from_days(v.ints[i], y, m, d);
        out.push_int(e.op == "year" ? y : (e.op == "month" ? m : d));
      }
      return out;
    }
    case ExprKind::Cast: {
      ValueVector v = evaluate(*e.children[0], positions);
      if (v.type == e.type) return v;
      ValueVector out(e.type);
      out.reserve(n);
      for (std::size_t i = 0; i < n; ++i) {
        if (v.type == SqlType::Null || v.is_null(i)) {
          out.push_null();
          continue;
        }
        switch (e.type) {
          case SqlType::Int64:
            if (v.type == SqlType::Double) {
              // PostgreSQL rounds half to even (rint), and refuses what does not fit.
              double r = std::nearbyint(v.doubles[i]);
              if (!(r >= -9223372036854775808.0 && r < 9223372036854775808.0)) fail(e, "bigint out of range");
              out.push_int(static_cast<std::int64_t>(r));
            } else if (v.type == SqlType::String) {
              std::string s = trimmed(v.strings[i]);
              std::int64_t x = 0;
              auto r = std::from_chars(s.data(), s.data() + s.size(), x);
              if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
                fail(e, "invalid input syntax for type bigint: \"" + v.strings[i] + "\"");
              }
              out.push_int(x);
            } else {
              out.push_int(v.ints[i]);  // boolean: 1 or 0
            }
            break;
          case SqlType::Double:
            if (v.type == SqlType::String) {
              std::string s = trimmed(v.strings[i]);
              double x = 0;
              auto r = std::from_chars(s.data(), s.data() + s.size(), x);
              if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
                fail(e, "invalid input syntax for type double precision: \"" + v.strings[i] + "\"");
              }
              out.push_double(x);
            } else {
              out.push_double(static_cast<double>(v.ints[i]));
            }
            break;
          case SqlType::Date: {
            std::int64_t days = 0;
            if (!parse_date(v.strings[i], days)) fail(e, "invalid input syntax for type date: \"" + v.strings[i] + "\"");
            out.push_int(days);
            break;
          }
          case SqlType::String:
            if (v.type == SqlType::Int64) out.push_string(std::to_string(v.ints[i]));
            else if (v.type == SqlType::Double) out.push_string(format_double_shortest(v.doubles[i]));
            else if (v.type == SqlType::Date) out.push_string(format_date(v.ints[i]));
            else out.push_string(v.ints[i] ? "true" : "false");
            break;
          case SqlType::Bool: {
            std::string s = trimmed(v.strings[i]);
            for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (s == "t" || s == "true" || s == "yes" || s == "on" || s == "1") out.push_int(1);
            else if (s == "f" || s == "false" || s == "no" || s == "off" || s == "0") out.push_int(0);
            else fail(e, "invalid input syntax for type boolean: \"" + v.strings[i] + "\"");
            break;
          }
          default: fail(e, "cannot cast to " + std::string(type_name(e.type)));
        }
      }
      return out;
    }
  }
  return ValueVector();
}

bool Evaluator::select_on_column(const Expr& e, const std::vector<std::uint32_t>& positions,
                                 std::vector<std::uint32_t>& kept) const {
  if (e.kind != ExprKind::Compare || positions.empty()) return false;
  const std::size_t column_child = is_constant_tree(*e.children[0]) ? 1 : 0;
  const Expr& other = *e.children[1 - column_child];
  if (!is_constant_tree(other) || e.children[column_child]->kind != ExprKind::InputColumn) return false;
  if (other.type != SqlType::Int64 && other.type != SqlType::Date) return false;
  std::vector<std::uint32_t> rows;
  const table::Column* column = leaves_.input_column(*e.children[column_child], positions, rows);
  if (!column || (column->type != table::ColumnType::Int64 && column->type != table::ColumnType::Date)) return false;
  if ((column->type == table::ColumnType::Date) != (other.type == SqlType::Date)) return false;
  const ValueVector value = evaluate(other, {positions[0]});
  kept.clear();
  if (value.is_null(0)) return true;  // NULL: the comparison is never true
  const std::int64_t y = value.ints[0];
  const CompareOp op = column_child == 0 ? compare_op(e.op) : flipped(compare_op(e.op));
  // Branch-free: every position is written, the count advances where the
  // row passes (filters of random data mispredict half their branches).
  kept.resize(positions.size());
  std::size_t k = 0;
  const std::uint8_t* nulls = column->nulls.empty() ? nullptr : column->nulls.data();
  auto keep_where = [&](const auto* values, auto test) {
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const std::uint32_t r = rows[i];
      bool pass = test(static_cast<std::int64_t>(values[r]));
      if (nulls) pass &= !nulls[r];
      kept[k] = positions[i];
      k += pass;
    }
  };
  auto with_op = [&](const auto* values) {
    switch (op) {
      case CompareOp::Eq: keep_where(values, [y](std::int64_t x) { return x == y; }); break;
      case CompareOp::Ne: keep_where(values, [y](std::int64_t x) { return x != y; }); break;
      case CompareOp::Lt: keep_where(values, [y](std::int64_t x) { return x < y; }); break;
      case CompareOp::Le: keep_where(values, [y](std::int64_t x) { return x <= y; }); break;
      case CompareOp::Gt: keep_where(values, [y](std::int64_t x) { return x > y; }); break;
      case CompareOp::Ge: keep_where(values, [y](std::int64_t x) { return x >= y; }); break;
    }
  };
  if (column->type == table::ColumnType::Int64) with_op(column->int64s.data());
  else with_op(column->int32s.data());
  kept.resize(k);
  return true;
}

std::vector<std::uint32_t> Evaluator::select(const Expr& predicate, const std::vector<std::uint32_t>& positions) const {
  // A conjunction: each conjunct filters the rows the ones before it kept
  // (a selection vector narrowing), so later conjuncts read fewer rows.
  if (predicate.kind == ExprKind::And) {
    std::vector<std::uint32_t> kept = positions;
    for (const auto& child : predicate.children) {
      if (kept.empty()) break;
      kept = select(*child, kept);
    }
    return kept;
  }
  std::vector<std::uint32_t> kept;
  if (select_on_column(predicate, positions, kept)) return kept;
  ValueVector v = evaluate(predicate, positions);
  kept.reserve(positions.size());
  for (std::size_t i = 0; i < positions.size(); ++i) {
    if (!v.is_null(i) && v.ints[i] != 0) kept.push_back(positions[i]);
  }
  return kept;
}

}  // namespace gpuolap::sql
