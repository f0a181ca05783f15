#include "sql/parse_tree.hpp"

#include <fmt/format.h>
#include <pg_query.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuolap/error.hpp"

namespace gpuolap::sql {

std::string SourceText::position(int offset) const {
  if (offset < 0) return "";
  std::size_t end = std::min(static_cast<std::size_t>(offset), text_.size());
  int line = 1, column = 1;
  for (std::size_t i = 0; i < end; ++i) {
    if (text_[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text_[i]) & 0xC0) != 0x80) {
      ++column;  // a character, not a UTF-8 continuation byte
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

void SourceText::fail(int offset, const std::string& message) const {
  std::string where = position(offset);
  throw InputError(where.empty() ? message : where + ": " + message);
}

namespace {

// Frees libpg_query's result whatever happens while it is read.
struct ParseResult {
  PgQueryParseResult result;
  explicit ParseResult(const std::string& text) : result(pg_query_parse(text.c_str())) {}
  ~ParseResult() { pg_query_free_parse_result(result); }
  ParseResult(const ParseResult&) = delete;
  ParseResult& operator=(const ParseResult&) = delete;
};

// The offset of the first byte that does not start or continue a
// well-formed UTF-8 character (RFC 3629: no overlong forms, no surrogates,
// nothing past U+10FFFF), or npos. The parse tree comes back as JSON, which
// must be UTF-8; PostgreSQL refuses such text too.
std::size_t first_invalid_utf8(std::string_view text) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = bytes[i];
    std::size_t length;
    unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      length = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
      length = 3;
      if (b == 0xE0) low = 0xA0;
      if (b == 0xED) high = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      length = 4;
      if (b == 0xF0) low = 0x90;
      if (b == 0xF4) high = 0x8F;
    } else {
      return i;
    }
    if (i + length > text.size() || bytes[i + 1] < low || bytes[i + 1] > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if ((bytes[i + k] & 0xC0) != 0x80) return i;
    i += length;
  }
  return std::string_view::npos;
}

// How deeply the parse tree nests, measured without recursion.
std::size_t tree_depth(const nlohmann::json& root) {
  std::size_t deepest = 0;
  std::vector<std::pair<const nlohmann::json*, std::size_t>> pending{{&root, 1}};
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    deepest = std::max(deepest, depth);
    if (node->is_structured())
      for (const auto& child : *node) pending.emplace_back(&child, depth + 1);
  }
  return deepest;
}

// The binder and the engines walk expressions recursively; a tree deeper
// than this (some 300 nested operators, far past any query a person
// writes) is refused before they do, as PostgreSQL refuses a query past its
// stack depth limit. Found by the SQL fuzzer: 750 nested unary '+'
// overflowed the stack.
constexpr std::size_t kMostTreeDepth = 1200;

}  // namespace

nlohmann::json parse_statement(const SourceText& source) {
  if (source.text().find('\0') != std::string::npos) throw InputError("SQL: the query text holds a NUL byte");
  if (const std::size_t bad = first_invalid_utf8(source.text()); bad != std::string_view::npos)
    source.fail(static_cast<int>(bad), "SQL: invalid byte sequence for encoding \"UTF8\": 0x" +
                                           fmt::format("{:02x}", static_cast<unsigned char>(source.text()[bad])));
  ParseResult parsed(source.text());
  if (parsed.result.error) {
    // cursorpos counts from 1; 0 when the parser knows no position.
    int cursor = parsed.result.error->cursorpos;
    source.fail(cursor > 0 ? cursor - 1 : -1, std::string("SQL: ") + parsed.result.error->message);
  }
  nlohmann::json tree = nlohmann::json::parse(parsed.result.parse_tree);
  if (tree_depth(tree) > kMostTreeDepth)
    throw InputError("SQL: stack depth limit exceeded: the query nests expressions too deeply");
  const auto& statements = tree.value("stmts", nlohmann::json::array());
  if (statements.empty()) throw InputError("SQL: the text holds no statement");
  if (statements.size() > 1) {
    source.fail(statements[1].value("stmt_location", 0), "SQL: one statement at a time, and this is a second one");
  }
  return statements[0].at("stmt");
}

int node_location(const nlohmann::json& node) {
  if (!node.is_object() || node.empty()) return -1;
  const auto& body = node.begin().value();
  if (!body.is_object()) return -1;
  auto it = body.find("location");
  return it != body.end() && it->is_number_integer() ? it->get<int>() : -1;
}

}  // namespace gpuolap::sql
