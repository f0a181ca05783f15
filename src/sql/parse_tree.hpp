// The text of a query through PostgreSQL's own parser (libpg_query): its
// parse tree as JSON, and the positions the tree names turned into line and
// column for messages.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpuolap::sql {

// The query text, kept for turning byte offsets into line:column.
class SourceText {
 public:
  explicit SourceText(std::string text) : text_(std::move(text)) {}
  const std::string& text() const { return text_; }
  // "line L, column C" of a byte offset (0-based, as the parse tree gives
  // them); a negative offset (no position known) gives "".
  std::string position(int offset) const;
  // Throws InputError "line L, column C: message".
  [[noreturn]] void fail(int offset, const std::string& message) const;

 private:
  std::string text_;
};

// One statement's parse tree: the object under "stmt" of PostgreSQL's
// RawStmt (e.g. {"SelectStmt": {...}}). Syntax errors, and text with no or
// several statements, are InputErrors with the position.
nlohmann::json parse_statement(const SourceText& source);

// The "location" of a node ({"Kind": {..., "location": n}}), or -1.
int node_location(const nlohmann::json& node);

}  // namespace gpuolap::sql
