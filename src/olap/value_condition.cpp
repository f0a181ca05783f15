#include "olap/value_condition.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "gpuolap/error.hpp"

namespace gpuolap::olap {

ValueCondition::ValueCondition(const std::string& text) {
  // Thrown at the call, so the compiler sees that no path goes on after it.
  auto error = [&](const std::string& why) { return InputError(fmt::format("condition \"{}\": {}", text, why)); };
  size_t at = 0;
  auto skip_space = [&] {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  };
  auto word = [&](const char* w) {
    const size_t n = std::char_traits<char>::length(w);
    if (text.compare(at, n, w) != 0) return false;
    if (at + n < text.size() && !std::isspace(static_cast<unsigned char>(text[at + n]))) return false;
    at += n;
    return true;
  };
  any_of_.emplace_back();
  for (;;) {
    skip_space();
    Op op;
    if (text.compare(at, 2, "<=") == 0) op = Op::le, at += 2;
    else if (text.compare(at, 2, ">=") == 0) op = Op::ge, at += 2;
    else if (text.compare(at, 2, "==") == 0) op = Op::eq, at += 2;
    else if (text.compare(at, 2, "!=") == 0 || text.compare(at, 2, "<>") == 0) op = Op::ne, at += 2;
    else if (text.compare(at, 1, "<") == 0) op = Op::lt, at += 1;
    else if (text.compare(at, 1, ">") == 0) op = Op::gt, at += 1;
    else if (text.compare(at, 1, "=") == 0) op = Op::eq, at += 1;
    else throw error(fmt::format("expected a comparison (< <= > >= = != <>) at position {}", at + 1));
    skip_space();
    double operand = 0;
    const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), operand);
    if (ec != std::errc() || !std::isfinite(operand)) throw error(fmt::format("expected a number at position {}", at + 1));
    at = static_cast<size_t>(end - text.data());
    any_of_.back().push_back({op, operand});
    skip_space();
    if (at == text.size()) break;
    if (word("and")) continue;
    if (word("or")) {
      any_of_.emplace_back();
      continue;
    }
    throw error(fmt::format("expected 'and' or 'or' at position {}", at + 1));
  }
}

bool ValueCondition::operator()(double v) const {
  if (any_of_.empty()) return true;
  for (const auto& all : any_of_) {
    bool holds = true;
    for (const Comparison& c : all) {
      switch (c.op) {
        case Op::lt: holds = v < c.operand; break;
        case Op::le: holds = v <= c.operand; break;
        case Op::gt: holds = v > c.operand; break;
        case Op::ge: holds = v >= c.operand; break;
        case Op::eq: holds = v == c.operand; break;
        case Op::ne: holds = v != c.operand; break;
      }
      if (!holds) break;
    }
    if (holds) return true;
  }
  return false;
}

}  // namespace gpuolap::olap
