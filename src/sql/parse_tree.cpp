#include "sql/parse_tree.hpp"

#include <pg_query.h>

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

}  // namespace

nlohmann::json parse_statement(const SourceText& source) {
  if (source.text().find('\0') != std::string::npos) throw InputError("SQL: the query text holds a NUL byte");
  ParseResult parsed(source.text());
  if (parsed.result.error) {
    // cursorpos counts from 1; 0 when the parser knows no position.
    int cursor = parsed.result.error->cursorpos;
    source.fail(cursor > 0 ? cursor - 1 : -1, std::string("SQL: ") + parsed.result.error->message);
  }
  nlohmann::json tree = nlohmann::json::parse(parsed.result.parse_tree);
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
