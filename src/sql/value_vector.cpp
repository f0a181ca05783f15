#include "sql/value_vector.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "sql/concatenate.hpp"
#include "gpuolap/huge_pages.hpp"

namespace gpuolap::sql {

std::string_view type_name(SqlType type) {
  switch (type) {
    case SqlType::Null: return "unknown";
    case SqlType::Bool: return "boolean";
    case SqlType::Int64: return "bigint";
    case SqlType::Double: return "double precision";
    case SqlType::Date: return "date";
    case SqlType::String: return "text";
    case SqlType::Interval: return "interval";
  }
  return "?";
}

bool is_numeric(SqlType type) { return type == SqlType::Int64 || type == SqlType::Double; }

namespace {
bool uses_ints(SqlType t) {
  return t == SqlType::Bool || t == SqlType::Int64 || t == SqlType::Date || t == SqlType::Interval;
}
}  // namespace

void ValueVector::reserve(std::size_t n) {
  nulls.reserve(n);
  if (uses_ints(type)) ints.reserve(n);
  else if (type == SqlType::Double) doubles.reserve(n);
  else if (type == SqlType::String) strings.reserve(n);
}

void ValueVector::push_null() {
  nulls.push_back(1);
  if (uses_ints(type)) ints.push_back(0);
  else if (type == SqlType::Double) doubles.push_back(0);
  else if (type == SqlType::String) strings.emplace_back();
}

void ValueVector::push_int(std::int64_t v) {
  nulls.push_back(0);
  ints.push_back(v);
}

void ValueVector::push_double(double v) {
  nulls.push_back(0);
  doubles.push_back(v);
}

void ValueVector::push_string(std::string v) {
  nulls.push_back(0);
  strings.push_back(std::move(v));
}

void ValueVector::push_from(const ValueVector& from, std::size_t row) {
  if (from.type == SqlType::Null || from.is_null(row)) return push_null();
  nulls.push_back(0);
  if (uses_ints(type)) ints.push_back(from.ints[row]);
  else if (type == SqlType::Double) doubles.push_back(from.doubles[row]);
  else if (type == SqlType::String) strings.push_back(from.strings[row]);
}

void ValueVector::append_all(const std::vector<const ValueVector*>& parts, std::vector<std::function<void()>>& tasks) {
  for (const ValueVector* p : parts)
    if (p->type != type) throw std::logic_error("ValueVector::append_all: a part of another type");
  add_concatenation(tasks, nulls, parts, &ValueVector::nulls);
  add_concatenation(tasks, ints, parts, &ValueVector::ints);
  add_concatenation(tasks, doubles, parts, &ValueVector::doubles);
  add_concatenation(tasks, strings, parts, &ValueVector::strings);
}

ValueVector gather_rows(const ValueVector& from, const std::vector<std::uint32_t>& positions) {
  const std::size_t n = positions.size();
  ValueVector out(from.type);
  resize_on_huge_pages(out.nulls, n);
  const bool ints = uses_ints(from.type), doubles = from.type == SqlType::Double, strings = from.type == SqlType::String;
  if (ints) resize_on_huge_pages(out.ints, n);
  if (doubles) resize_on_huge_pages(out.doubles, n);
  if (strings) out.strings.resize(n);
  const bool all_null = from.type == SqlType::Null;
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 1 << 14), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t i = r.begin(); i < r.end(); ++i) {
      const std::uint32_t p = positions[i];
      const bool null = all_null || from.nulls[p] != 0;
      out.nulls[i] = null;
      if (ints) out.ints[i] = null ? 0 : from.ints[p];
      else if (doubles) out.doubles[i] = null ? 0 : from.doubles[p];
      else if (strings && !null) out.strings[i] = from.strings[p];
    }
  });
  return out;
}

void ValueVector::set_from(std::size_t row, const ValueVector& from, std::size_t from_row) {
  if (from.type == SqlType::Null || from.is_null(from_row)) {
    nulls[row] = 1;
    return;
  }
  nulls[row] = 0;
  if (uses_ints(type)) ints[row] = from.ints[from_row];
  else if (type == SqlType::Double) doubles[row] = from.doubles[from_row];
  else if (type == SqlType::String) strings[row] = from.strings[from_row];
}

ValueVector ValueVector::repeated(std::size_t count) const {
  ValueVector out(type);
  out.nulls.assign(count, nulls.at(0));
  if (uses_ints(type)) out.ints.assign(count, ints.at(0));
  else if (type == SqlType::Double) out.doubles.assign(count, doubles.at(0));
  else if (type == SqlType::String) out.strings.assign(count, strings.at(0));
  return out;
}

int compare_values(const ValueVector& a, std::size_t i, const ValueVector& b, std::size_t j) {
  if (a.type == SqlType::Double || b.type == SqlType::Double) {
    double x = a.type == SqlType::Double ? a.doubles[i] : static_cast<double>(a.ints[i]);
    double y = b.type == SqlType::Double ? b.doubles[j] : static_cast<double>(b.ints[j]);
    // PostgreSQL orders NaN above every other double, equal to itself.
    bool xn = x != x, yn = y != y;
    if (xn || yn) return xn == yn ? 0 : (xn ? 1 : -1);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.type == SqlType::String) {
    int c = a.strings[i].compare(b.strings[j]);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  return a.ints[i] < b.ints[j] ? -1 : (a.ints[i] > b.ints[j] ? 1 : 0);
}

int compare_extremes(const ValueVector& a, std::size_t i, const ValueVector& b, std::size_t j) {
  const int c = compare_values(a, i, b, j);
  if (c != 0 || a.type != SqlType::Double || b.type != SqlType::Double) return c;
  const bool a_negative = std::signbit(a.doubles[i]), b_negative = std::signbit(b.doubles[j]);
  if (a.doubles[i] != 0 || a_negative == b_negative) return 0;  // NaNs, or equal values
  return a_negative ? -1 : 1;
}

bool same_group_value(const ValueVector& a, std::size_t i, const ValueVector& b, std::size_t j) {
  const bool null_a = a.type == SqlType::Null || a.is_null(i), null_b = b.type == SqlType::Null || b.is_null(j);
  if (null_a || null_b) return null_a == null_b;
  if (a.type == SqlType::Double) {
    const double x = a.doubles[i], y = b.doubles[j];
    return x == y || (x != x && y != y);
  }
  if (a.type == SqlType::String) return a.strings[i] == b.strings[j];
  return a.ints[i] == b.ints[j];
}

void append_key_bytes(const ValueVector& v, std::size_t row, std::string& key) {
  if (v.type == SqlType::Null || v.is_null(row)) {
    key.push_back('\0');
    return;
  }
  key.push_back('\1');
  if (v.type == SqlType::Double) {
    double d = v.doubles[row];
    if (d == 0) d = 0;                                        // -0.0 and 0.0 are one group
    if (d != d) d = std::numeric_limits<double>::quiet_NaN();  // so are all NaNs
    char bytes[sizeof d];
    std::memcpy(bytes, &d, sizeof d);
    key.append(bytes, sizeof d);
  } else if (v.type == SqlType::String) {
    std::uint32_t n = static_cast<std::uint32_t>(v.strings[row].size());
    char bytes[sizeof n];
    std::memcpy(bytes, &n, sizeof n);
    key.append(bytes, sizeof n);
    key.append(v.strings[row]);
  } else {
    char bytes[sizeof(std::int64_t)];
    std::memcpy(bytes, &v.ints[row], sizeof bytes);
    key.append(bytes, sizeof bytes);
  }
}

}  // namespace gpuolap::sql
