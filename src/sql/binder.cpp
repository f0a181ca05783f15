#include "sql/binder.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <functional>
#include <map>
#include <unordered_map>

#include "gpuolap/error.hpp"

namespace gpuolap::sql {

using nlohmann::json;

std::vector<std::string> TablesInMemory::table_names() const {
  std::vector<std::string> names;
  for (const auto& t : tables_) names.push_back(t->name);
  std::sort(names.begin(), names.end());
  return names;
}

std::shared_ptr<const table::Table> TablesInMemory::load(const std::string& name) const {
  for (const auto& t : tables_) {
    if (t->name == name) return t;
  }
  throw InputError("no table " + name);
}

std::size_t column_rows(const table::Column& column) {
  switch (column.type) {
    case table::ColumnType::Int64: return column.int64s.size();
    case table::ColumnType::Double: return column.doubles.size();
    default: return column.int32s.size();
  }
}

SqlType column_sql_type(table::ColumnType type) {
  switch (type) {
    case table::ColumnType::Int64: return SqlType::Int64;
    case table::ColumnType::Double: return SqlType::Double;
    case table::ColumnType::Date: return SqlType::Date;
    case table::ColumnType::String: return SqlType::String;
  }
  return SqlType::Null;
}

void tables_used(const Expr& e, std::vector<bool>& used) {
  if (e.kind == ExprKind::InputColumn) used[e.table] = true;
  for (const auto& c : e.children) tables_used(*c, used);
}

namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "; did you mean "x"?" for the closest of `candidates`, when one is close.
std::string suggestion(const std::string& wanted, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(lower(wanted), lower(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  if (best.empty() || best_distance > std::max<std::size_t>(2, wanted.size() / 2)) return "";
  return "; did you mean \"" + best + "\"?";
}

const json& body(const json& node) { return node.begin().value(); }
std::string kind_of(const json& node) { return node.is_object() && !node.empty() ? node.begin().key() : "?"; }

std::string sval(const json& string_node) { return string_node.at("String").value("sval", ""); }

// The first position anywhere under `node`, for constructs that carry none.
int first_location(const json& node) {
  if (node.is_object()) {
    auto it = node.find("location");
    if (it != node.end() && it->is_number_integer() && it->get<int>() >= 0) return it->get<int>();
    for (const auto& [k, v] : node.items()) {
      int l = first_location(v);
      if (l >= 0) return l;
    }
  } else if (node.is_array()) {
    for (const auto& v : node) {
      int l = first_location(v);
      if (l >= 0) return l;
    }
  }
  return -1;
}

bool is_aggregate_name(const std::string& name) {
  return name == "sum" || name == "count" || name == "avg" || name == "min" || name == "max";
}

std::string last_funcname(const json& call) {
  const auto& names = call.at("funcname");
  return sval(names.back());
}


std::string constant_text(const ValueVector& v) {
  if (v.type == SqlType::Null || v.is_null(0)) return "NULL";
  if (v.type == SqlType::Double) return format_double_shortest(v.doubles[0]);
  if (v.type == SqlType::String) return "'" + v.strings[0] + "'";
  return std::to_string(v.ints[0]);
}

void fingerprint(Expr& e) {
  std::string f = std::to_string(static_cast<int>(e.kind)) + ":" + std::string(type_name(e.type));
  switch (e.kind) {
    case ExprKind::Constant: f += "=" + constant_text(e.constant); break;
    case ExprKind::InputColumn: f += "@" + std::to_string(e.table) + "." + std::to_string(e.column); break;
    case ExprKind::GroupKey:
    case ExprKind::Aggregate: f += "#" + std::to_string(e.index); break;
    default: break;
  }
  f += e.op + (e.negated ? "!" : "") + "(";
  for (int k : e.keys) f += std::to_string(k) + ",";
  for (const auto& c : e.children) f += c->fingerprint + ",";
  e.fingerprint = f + ")";
}

ExprPtr finish(Expr e) {
  fingerprint(e);
  return std::make_shared<const Expr>(std::move(e));
}

ExprPtr make_constant(ValueVector v, int location) {
  Expr e;
  e.kind = ExprKind::Constant;
  e.type = v.type;
  e.constant = std::move(v);
  e.location = location;
  return finish(std::move(e));
}

ExprPtr make_node(ExprKind kind, SqlType type, std::vector<ExprPtr> children, int location, std::string op = "",
                  bool negated = false) {
  Expr e;
  e.kind = kind;
  e.type = type;
  e.children = std::move(children);
  e.location = location;
  e.op = std::move(op);
  e.negated = negated;
  return finish(std::move(e));
}

// An identifier as written: its text (folded by the parser unless quoted)
// and whether it was quoted, read from the query text at a position.
struct Identifier {
  std::string text;
  bool quoted = false;
};

enum class Mode { Row, Grouped };

class Binder {
 public:
  Binder(const SourceText& source, const TableCatalog& catalog) : source_(source), catalog_(catalog) {}

  LogicalQuery bind_statement(const json& statement);

 private:
  [[noreturn]] void fail(int location, const std::string& message) const { source_.fail(location, message); }
  [[noreturn]] void unsupported(const json& node, const std::string& what) const {
    fail(first_location(node), what + " is not supported (gpuolap's SQL subset: README, \"SQL\")");
  }

  std::vector<Identifier> identifier_chain(int location) const;
  void bind_select(const json& select);
  void bind_from_item(const json& item, std::vector<json>& conditions);
  int add_table(const json& range_var);
  void bind_condition(const json& node, const char* clause);

  // Binds an expression. A GROUP BY query binds each subexpression in Row
  // mode to compare it with the keys, at every level of a nested
  // expression: while a Grouped expression is bound, the Row-mode bindings
  // (which change nothing) are kept per node, as is whether a subtree holds
  // an aggregate, so that this stays linear in the expression's size (it
  // was quadratic in its depth: 0.47 s for 500 nested additions, and a 1 MB
  // query could hold hundreds).
  ExprPtr bind(const json& node, Mode mode, bool aggregates_allowed, const char* clause);
  // A Grouped bind under way: the outermost one empties the memos when it ends.
  struct GroupedScope {
    Binder& binder;
    bool grouped;
    GroupedScope(Binder& b, bool g) : binder(b), grouped(g) {
      if (grouped) ++binder.grouped_depth_;
    }
    ~GroupedScope() {
      if (grouped && --binder.grouped_depth_ == 0) {
        binder.row_bound_.clear();
        binder.aggregate_in_.clear();
      }
    }
  };
  // Does the subtree hold an aggregate call or GROUPING()?
  bool contains_aggregate(const json& node);
  ExprPtr bind_column_ref(const json& ref, int location);
  ExprPtr bind_operator(const json& a_expr, Mode mode, bool aggregates_allowed, const char* clause);
  ExprPtr bind_aggregate(const json& call, int location);
  ExprPtr bind_type_cast(const json& cast, Mode mode, bool aggregates_allowed, const char* clause);
  ExprPtr bind_case(const json& case_expr, Mode mode, bool aggregates_allowed, const char* clause);
  ExprPtr bind_constant(const json& a_const, int location);
  std::int64_t integer_constant(const json& a_const, int location) const;
  ExprPtr comparison(const std::string& op, ExprPtr left, ExprPtr right, int location);
  ExprPtr arithmetic(const std::string& op, ExprPtr left, ExprPtr right, int location);
  ExprPtr require_bool(ExprPtr e, const std::string& what);
  // A string or NULL literal given the type its context asks for.
  ExprPtr coerce_literal(ExprPtr e, SqlType to);
  // The value of an expression over constants, as a constant.
  ExprPtr fold(const ExprPtr& e);
  // Makes `a` and `b` comparable (literals coerced), or fails.
  void unify(ExprPtr& a, ExprPtr& b, const std::string& op, int location);

  std::vector<std::vector<int>> grouping_item(const json& item, const json& targets);
  std::vector<int> grouping_keys_of(const json& node, const json& targets);
  int group_key_index(const json& node, const json& targets);
  ExprPtr group_key_of(const ExprPtr& bound);
  std::string output_name(const json& target) const;
  std::pair<std::string, int> figure_name(const json& node) const;
  void expand_star(const json& ref, Mode mode, std::vector<OutputColumn>& out);
  std::optional<std::int64_t> limit_value(const json& node, const char* what);

  const SourceText& source_;
  const TableCatalog& catalog_;
  LogicalQuery q_;
  int grouped_depth_ = 0;                                 // Grouped binds under way
  std::unordered_map<const json*, ExprPtr> row_bound_;   // bind's Row-mode results, by node, meanwhile
  std::unordered_map<const json*, bool> aggregate_in_;   // contains_aggregate's, by node, meanwhile
};

bool Binder::contains_aggregate(const json& node) {
  if (!node.is_object() && !node.is_array()) return false;
  const bool memo = grouped_depth_ > 0;  // as bind's: only while a Grouped expression is bound
  if (const auto it = memo ? aggregate_in_.find(&node) : aggregate_in_.end(); it != aggregate_in_.end()) return it->second;
  bool found = false;
  if (node.is_object()) {
    const auto call = node.find("FuncCall");
    found = node.contains("GroupingFunc") || (call != node.end() && is_aggregate_name(lower(last_funcname(*call))));
    for (auto it = node.begin(); !found && it != node.end(); ++it) found = contains_aggregate(*it);
  } else {
    for (auto it = node.begin(); !found && it != node.end(); ++it) found = contains_aggregate(*it);
  }
  if (memo) aggregate_in_.emplace(&node, found);
  return found;
}

std::vector<Identifier> Binder::identifier_chain(int location) const {
  std::vector<Identifier> chain;
  const std::string& t = source_.text();
  std::size_t i = location < 0 ? t.size() : static_cast<std::size_t>(location);
  while (i < t.size()) {
    Identifier id;
    if (t[i] == '"') {
      id.quoted = true;
      ++i;
      while (i < t.size()) {
        if (t[i] == '"') {
          if (i + 1 < t.size() && t[i + 1] == '"') {
            id.text += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        id.text += t[i++];
      }
    } else {
      while (i < t.size() && (std::isalnum(static_cast<unsigned char>(t[i])) || t[i] == '_' || t[i] == '$' ||
                              static_cast<unsigned char>(t[i]) >= 0x80)) {
        id.text += t[i++];
      }
    }
    chain.push_back(id);
    std::size_t j = i;
    while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
    if (j >= t.size() || t[j] != '.') break;
    ++j;
    while (j < t.size() && std::isspace(static_cast<unsigned char>(t[j]))) ++j;
    i = j;
  }
  return chain;
}

// Finds `wanted` among `names`: exactly, or (when it was not quoted) in any
// case when only one name matches so. Returns the index, -1 when none, -2
// when several match in different cases.
int match_name(const std::string& wanted, bool quoted, const std::vector<std::string>& names) {
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == wanted) return static_cast<int>(i);
  }
  if (quoted) return -1;
  int found = -1;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (lower(names[i]) == lower(wanted)) {
      if (found >= 0) return -2;
      found = static_cast<int>(i);
    }
  }
  return found;
}

LogicalQuery Binder::bind_statement(const json& statement) {
  std::string kind = kind_of(statement);
  const json* select = nullptr;
  if (kind == "ExplainStmt") {
    const auto& e = body(statement);
    if (e.contains("options")) unsupported(e.at("options"), "EXPLAIN with options");
    q_.explain = true;
    if (kind_of(e.at("query")) != "SelectStmt") unsupported(e.at("query"), "EXPLAIN of " + kind_of(e.at("query")));
    select = &body(e.at("query"));
  } else if (kind == "SelectStmt") {
    select = &body(statement);
  } else {
    fail(first_location(statement), "only SELECT and EXPLAIN SELECT are supported, not " + kind);
  }
  bind_select(*select);
  return std::move(q_);
}

void Binder::bind_from_item(const json& item, std::vector<json>& conditions) {
  std::string kind = kind_of(item);
  if (kind == "RangeVar") {
    add_table(body(item));
    return;
  }
  if (kind == "JoinExpr") {
    const auto& j = body(item);
    std::string type = j.value("jointype", "JOIN_INNER");
    if (type != "JOIN_INNER") unsupported(item, type.substr(5) + " JOIN (only inner joins)");
    if (j.value("isNatural", false)) unsupported(item, "NATURAL JOIN");
    if (j.contains("usingClause")) unsupported(item, "JOIN ... USING");
    if (j.contains("alias")) unsupported(item, "an alias of a join");
    bind_from_item(j.at("larg"), conditions);
    bind_from_item(j.at("rarg"), conditions);
    if (j.contains("quals")) conditions.push_back(j.at("quals"));
    return;
  }
  if (kind == "RangeSubselect") unsupported(item, "a subquery in FROM");
  if (kind == "RangeFunction") unsupported(item, "a function in FROM");
  unsupported(item, kind + " in FROM");
}

int Binder::add_table(const json& rv) {
  int location = rv.value("location", -1);
  if (rv.contains("schemaname")) fail(location, "schema-qualified table names are not supported");
  std::vector<Identifier> chain = identifier_chain(location);
  bool quoted = !chain.empty() && chain.back().quoted;
  std::string written = rv.at("relname").get<std::string>();
  std::vector<std::string> names = catalog_.table_names();
  int found = match_name(written, quoted, names);
  if (found == -2) fail(location, "table name \"" + written + "\" matches several tables in different cases; quote it");
  if (found < 0) fail(location, "relation \"" + written + "\" does not exist" + suggestion(written, names));
  BoundTable t;
  t.name = names[found];
  t.alias = rv.contains("alias") ? rv.at("alias").at("aliasname").get<std::string>() : written;
  if (rv.contains("alias") && rv.at("alias").contains("colnames")) fail(location, "column aliases of a table");
  t.location = location;
  for (const auto& other : q_.tables) {
    if (other.alias == t.alias) fail(location, "table name \"" + t.alias + "\" specified more than once");
  }
  t.table = catalog_.load(t.name);
  q_.tables.push_back(std::move(t));
  return static_cast<int>(q_.tables.size() - 1);
}

// Splits WHERE and ON into conjuncts: an equality of two columns of
// different tables is a join; everything else a filter.
void Binder::bind_condition(const json& node, const char* clause) {
  if (kind_of(node) == "BoolExpr" && body(node).value("boolop", "") == "AND_EXPR") {
    for (const auto& arg : body(node).at("args")) bind_condition(arg, clause);
    return;
  }
  if (contains_aggregate(node)) {
    fail(first_location(node), std::string("aggregate functions are not allowed in ") + clause);
  }
  if (kind_of(node) == "A_Expr") {
    const auto& a = body(node);
    if (a.value("kind", "") == "AEXPR_OP" && a.contains("lexpr") && a.contains("rexpr") && sval(a.at("name").back()) == "=" &&
        kind_of(a.at("lexpr")) == "ColumnRef" && kind_of(a.at("rexpr")) == "ColumnRef") {
      ExprPtr l = bind(a.at("lexpr"), Mode::Row, false, clause);
      ExprPtr r = bind(a.at("rexpr"), Mode::Row, false, clause);
      bool same_kind = l->type == r->type && l->type != SqlType::Bool;
      if (l->kind == ExprKind::InputColumn && r->kind == ExprKind::InputColumn && l->table != r->table && same_kind) {
        q_.joins.push_back({l->table, l->column, r->table, r->column, a.value("location", -1)});
        return;
      }
    }
  }
  q_.filters.push_back(require_bool(bind(node, Mode::Row, false, clause), std::string("argument of ") + clause));
}

std::optional<std::int64_t> Binder::limit_value(const json& node, const char* what) {
  if (kind_of(node) != "A_Const") unsupported(node, std::string("an expression in ") + what + " (only a constant)");
  ExprPtr c = bind_constant(body(node), node_location(node));
  if (c->constant.type == SqlType::Null) return std::nullopt;
  if (c->type != SqlType::Int64) fail(node_location(node), std::string("argument of ") + what + " must be an integer");
  if (c->constant.ints[0] < 0) fail(node_location(node), std::string(what) + " must not be negative");
  return c->constant.ints[0];
}

void Binder::bind_select(const json& s) {
  if (s.value("op", "SETOP_NONE") != "SETOP_NONE") unsupported(s, "UNION, INTERSECT and EXCEPT");
  if (s.value("limitOption", "") == "LIMIT_OPTION_WITH_TIES") unsupported(s, "FETCH ... WITH TIES");
  static const char* handled[] = {"targetList", "fromClause", "whereClause", "groupClause", "havingClause",
                                  "sortClause", "limitCount", "limitOffset", "limitOption", "op"};
  for (const auto& [key, value] : s.items()) {
    if (std::find(std::begin(handled), std::end(handled), key) != std::end(handled)) continue;
    std::string what = key == "distinctClause" ? "SELECT DISTINCT"
                       : key == "withClause"   ? "WITH"
                       : key == "windowClause" ? "WINDOW"
                       : key == "intoClause"   ? "SELECT INTO"
                       : key == "valuesLists"  ? "VALUES"
                       : key == "groupDistinct" ? "GROUP BY DISTINCT"
                       : key == "lockingClause" ? "FOR UPDATE/SHARE"
                                               : key;
    int location = first_location(value);
    fail(location >= 0 ? location : first_location(s), what + " is not supported (gpuolap's SQL subset: README, \"SQL\")");
  }

  std::vector<json> conditions;
  if (s.contains("fromClause")) {
    for (const auto& item : s.at("fromClause")) bind_from_item(item, conditions);
  }
  for (const auto& c : conditions) bind_condition(c, "JOIN conditions");
  if (s.contains("whereClause")) bind_condition(s.at("whereClause"), "WHERE");

  const json targets = s.value("targetList", json::array());
  q_.aggregated = s.contains("groupClause") || s.contains("havingClause") || contains_aggregate(targets) ||
                  (s.contains("sortClause") && contains_aggregate(s.at("sortClause")));
  if (s.contains("groupClause")) {
    // PostgreSQL: the grouping sets of the items' cross product, in order.
    std::vector<std::vector<int>> sets{{}};
    for (const auto& item : s.at("groupClause")) {
      if (contains_aggregate(item)) fail(first_location(item), "aggregate functions are not allowed in GROUP BY");
      std::vector<std::vector<int>> item_sets = grouping_item(item, targets);
      std::vector<std::vector<int>> product;
      for (const auto& a : sets) {
        for (const auto& b : item_sets) {
          std::vector<int> merged = a;
          for (int k : b) {
            if (std::find(merged.begin(), merged.end(), k) == merged.end()) merged.push_back(k);
          }
          product.push_back(std::move(merged));
          if (product.size() > 4096) fail(first_location(item), "too many grouping sets present (more than 4096)");
        }
      }
      sets = std::move(product);
    }
    q_.grouping_sets = std::move(sets);
  } else if (q_.aggregated) {
    q_.grouping_sets = {{}};
  }

  const Mode mode = q_.aggregated ? Mode::Grouped : Mode::Row;
  for (const auto& target : targets) {
    const auto& rt = body(target);
    const json& val = rt.at("val");
    if (kind_of(val) == "ColumnRef" && body(val).at("fields").back().contains("A_Star")) {
      expand_star(body(val), mode, q_.outputs);
      continue;
    }
    q_.outputs.push_back({output_name(rt), bind(val, mode, true, "SELECT")});
    if (q_.outputs.back().expr->type == SqlType::Interval) {
      fail(q_.outputs.back().expr->location, "intervals are supported only in date ± interval");
    }
  }
  if (q_.outputs.empty()) fail(first_location(s), "a SELECT without columns is not supported");
  if (s.contains("havingClause")) {
    q_.having = require_bool(bind(s.at("havingClause"), Mode::Grouped, true, "HAVING"), "argument of HAVING");
  }
  if (s.contains("sortClause")) {
    for (const auto& item : s.at("sortClause")) {
      const auto& sb = body(item);
      const json& node = sb.at("node");
      SortKey key;
      std::string dir = sb.value("sortby_dir", "SORTBY_DEFAULT");
      if (dir == "SORTBY_USING") unsupported(item, "ORDER BY ... USING");
      key.descending = dir == "SORTBY_DESC";
      std::string nulls = sb.value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
      key.nulls_first = nulls == "SORTBY_NULLS_FIRST" || (nulls == "SORTBY_NULLS_DEFAULT" && key.descending);
      // PostgreSQL: an integer is an output position; a bare name, an
      // output column's name first; else an expression.
      if (kind_of(node) == "A_Const" && body(node).contains("ival")) {
        std::int64_t pos = integer_constant(body(node), node_location(node));
        if (pos < 1 || pos > static_cast<std::int64_t>(q_.outputs.size())) {
          fail(node_location(node), "ORDER BY position " + std::to_string(pos) + " is not in select list");
        }
        key.expr = q_.outputs[pos - 1].expr;
      } else if (kind_of(node) == "ColumnRef" && body(node).at("fields").size() == 1 &&
                 body(node).at("fields")[0].contains("String")) {
        std::string name = sval(body(node).at("fields")[0]);
        int matches = 0;
        for (const auto& o : q_.outputs) {
          if (o.name == name) {
            if (matches++ == 0) key.expr = o.expr;
          }
        }
        if (matches > 1) fail(node_location(node), "ORDER BY \"" + name + "\" is ambiguous");
        if (!key.expr) key.expr = bind(node, mode, true, "ORDER BY");
      } else {
        key.expr = bind(node, mode, true, "ORDER BY");
      }
      q_.order_by.push_back(std::move(key));
    }
  }
  if (s.contains("limitCount")) q_.limit = limit_value(s.at("limitCount"), "LIMIT");
  if (s.contains("limitOffset")) q_.offset = limit_value(s.at("limitOffset"), "OFFSET").value_or(0);
}

void Binder::expand_star(const json& ref, Mode mode, std::vector<OutputColumn>& out) {
  const auto& fields = ref.at("fields");
  int location = ref.value("location", -1);
  if (q_.tables.empty()) fail(location, "SELECT * with no tables specified is not valid");
  int only = -1;
  if (fields.size() == 2) {
    std::string alias = sval(fields[0]);
    for (std::size_t t = 0; t < q_.tables.size(); ++t) {
      if (q_.tables[t].alias == alias) only = static_cast<int>(t);
    }
    if (only < 0) fail(location, "missing FROM-clause entry for table \"" + alias + "\"");
  } else if (fields.size() != 1) {
    fail(location, "improper qualified name (too many dotted names)");
  }
  for (std::size_t t = 0; t < q_.tables.size(); ++t) {
    if (only >= 0 && static_cast<int>(t) != only) continue;
    for (std::size_t c = 0; c < q_.tables[t].table->columns.size(); ++c) {
      Expr e;
      e.kind = ExprKind::InputColumn;
      e.table = static_cast<int>(t);
      e.column = static_cast<int>(c);
      e.type = column_sql_type(q_.tables[t].table->columns[c].type);
      e.location = location;
      ExprPtr column = finish(std::move(e));
      if (mode == Mode::Grouped) {
        ExprPtr key = group_key_of(column);
        if (!key) {
          fail(location, "column \"" + q_.tables[t].alias + "." + q_.tables[t].table->columns[c].name +
                             "\" must appear in the GROUP BY clause or be used in an aggregate function");
        }
        column = key;
      }
      out.push_back({q_.tables[t].table->columns[c].name, column});
    }
  }
}

ExprPtr Binder::group_key_of(const ExprPtr& bound) {
  for (std::size_t k = 0; k < q_.group_keys.size(); ++k) {
    if (q_.group_keys[k]->fingerprint == bound->fingerprint) {
      Expr e;
      e.kind = ExprKind::GroupKey;
      e.type = bound->type;
      e.index = static_cast<int>(k);
      e.location = bound->location;
      return finish(std::move(e));
    }
  }
  return nullptr;
}

// A GROUP BY expression's key index (added when new). An integer is a
// position in the select list; a bare name that is no input column, an
// output column's name (PostgreSQL's rules).
int Binder::group_key_index(const json& node, const json& targets) {
  const json* expr = &node;
  if (kind_of(node) == "A_Const" && body(node).contains("ival")) {
    std::int64_t pos = integer_constant(body(node), node_location(node));
    if (pos < 1 || pos > static_cast<std::int64_t>(targets.size())) {
      fail(node_location(node), "GROUP BY position " + std::to_string(pos) + " is not in select list");
    }
    expr = &body(targets[pos - 1]).at("val");
    if (contains_aggregate(*expr)) fail(node_location(node), "aggregate functions are not allowed in GROUP BY");
  }
  ExprPtr bound;
  if (kind_of(*expr) == "ColumnRef" && body(*expr).at("fields").size() == 1 &&
      body(*expr).at("fields")[0].contains("String")) {
    try {
      bound = bind(*expr, Mode::Row, false, "GROUP BY");
    } catch (const InputError&) {
      std::string name = sval(body(*expr).at("fields")[0]);
      for (const auto& t : targets) {
        if (body(t).value("name", "") == name) {
          bound = bind(body(t).at("val"), Mode::Row, false, "GROUP BY");
          break;
        }
      }
      if (!bound) throw;
    }
  } else {
    bound = bind(*expr, Mode::Row, false, "GROUP BY");
  }
  for (std::size_t k = 0; k < q_.group_keys.size(); ++k) {
    if (q_.group_keys[k]->fingerprint == bound->fingerprint) return static_cast<int>(k);
  }
  q_.group_keys.push_back(bound);
  return static_cast<int>(q_.group_keys.size() - 1);
}

// The keys of one element of ROLLUP, CUBE or GROUPING SETS: an expression,
// or a parenthesised list of them.
std::vector<int> Binder::grouping_keys_of(const json& node, const json& targets) {
  std::vector<int> keys;
  if (kind_of(node) == "RowExpr") {
    for (const auto& arg : body(node).at("args")) keys.push_back(group_key_index(arg, targets));
  } else if (kind_of(node) == "GroupingSet" && body(node).value("kind", "") == "GROUPING_SET_EMPTY") {
  } else {
    keys.push_back(group_key_index(node, targets));
  }
  return keys;
}

std::vector<std::vector<int>> Binder::grouping_item(const json& item, const json& targets) {
  if (kind_of(item) != "GroupingSet") return {grouping_keys_of(item, targets)};
  const auto& g = body(item);
  std::string kind = g.value("kind", "");
  const json content = g.value("content", json::array());
  if (kind == "GROUPING_SET_EMPTY") return {{}};
  if (kind == "GROUPING_SET_SIMPLE") {
    std::vector<int> keys;
    for (const auto& c : content) {
      for (int k : grouping_keys_of(c, targets)) keys.push_back(k);
    }
    return {keys};
  }
  for (const auto& c : content) {
    if (kind != "GROUPING_SET_SETS" && kind_of(c) == "GroupingSet" &&
        body(c).value("kind", "") != "GROUPING_SET_SIMPLE") {
      unsupported(c, "a grouping set nested in ROLLUP or CUBE");
    }
  }
  if (kind == "GROUPING_SET_ROLLUP") {
    std::vector<std::vector<int>> parts;
    for (const auto& c : content) parts.push_back(grouping_keys_of(c, targets));
    std::vector<std::vector<int>> sets;
    for (std::size_t n = parts.size() + 1; n-- > 0;) {
      std::vector<int> set;
      for (std::size_t i = 0; i < n; ++i) set.insert(set.end(), parts[i].begin(), parts[i].end());
      sets.push_back(std::move(set));
    }
    return sets;
  }
  if (kind == "GROUPING_SET_CUBE") {
    std::vector<std::vector<int>> parts;
    for (const auto& c : content) parts.push_back(grouping_keys_of(c, targets));
    if (parts.size() > 12) fail(g.value("location", -1), "CUBE is limited to 12 elements");
    std::vector<std::vector<int>> sets;
    const std::size_t n = parts.size();
    for (std::size_t mask = (std::size_t{1} << n); mask-- > 0;) {
      std::vector<int> set;
      for (std::size_t i = 0; i < n; ++i) {
        if (mask & (std::size_t{1} << (n - 1 - i))) set.insert(set.end(), parts[i].begin(), parts[i].end());
      }
      sets.push_back(std::move(set));
    }
    return sets;
  }
  if (kind == "GROUPING_SET_SETS") {
    std::vector<std::vector<int>> sets;
    for (const auto& c : content) {
      for (auto& s : grouping_item(c, targets)) sets.push_back(std::move(s));
    }
    return sets;
  }
  unsupported(item, kind);
}

std::pair<std::string, int> Binder::figure_name(const json& node) const {
  // PostgreSQL's FigureColname: a name with a strength; 0 gives "?column?".
  std::string kind = kind_of(node);
  const auto& b = body(node);
  if (kind == "ColumnRef") {
    const auto& last = b.at("fields").back();
    if (last.contains("String")) return {sval(last), 2};
    return {"?column?", 0};
  }
  if (kind == "FuncCall") return {last_funcname(b), 2};
  if (kind == "GroupingFunc") return {"grouping", 2};
  if (kind == "CaseExpr") return {"case", 1};
  if (kind == "TypeCast") {
    auto inner = figure_name(b.at("arg"));
    if (inner.second >= 2) return inner;
    return {sval(b.at("typeName").at("names").back()), 1};
  }
  return {"?column?", 0};
}

std::string Binder::output_name(const json& target) const {
  if (target.contains("name")) return target.at("name").get<std::string>();
  auto [name, strength] = figure_name(target.at("val"));
  return strength == 0 ? "?column?" : name;
}

ExprPtr Binder::require_bool(ExprPtr e, const std::string& what) {
  e = coerce_literal(e, SqlType::Bool);
  if (e->type != SqlType::Bool) {
    fail(e->location, what + " must be type boolean, not type " + std::string(type_name(e->type)));
  }
  return e;
}

ExprPtr Binder::coerce_literal(ExprPtr e, SqlType to) {
  if (e->kind != ExprKind::Constant || e->type == to || to == SqlType::Null) return e;
  if (e->type == SqlType::Null) {
    Expr c = *e;
    c.type = to;
    c.constant = ValueVector(to);
    c.constant.push_null();
    return finish(std::move(c));
  }
  if (e->type != SqlType::String || to == SqlType::Interval) return e;
  // A string literal is of unknown type in PostgreSQL until its context
  // gives it one: read it as that type now, so bad text fails here.
  return fold(make_node(ExprKind::Cast, to, {e}, e->location));
}

ExprPtr Binder::fold(const ExprPtr& e) {
  struct NoLeaves : LeafSource {
    ValueVector leaf(const Expr&, const std::vector<std::uint32_t>&) const override { return {}; }
  } none;
  Evaluator evaluator(none, &source_);
  return make_constant(evaluator.evaluate(*e, {0}), e->location);
}

void Binder::unify(ExprPtr& a, ExprPtr& b, const std::string& op, int location) {
  a = coerce_literal(a, b->type == SqlType::String ? SqlType::Null : b->type);
  b = coerce_literal(b, a->type == SqlType::String ? SqlType::Null : a->type);
  if (a->type == b->type || a->type == SqlType::Null || b->type == SqlType::Null) return;
  if (is_numeric(a->type) && is_numeric(b->type)) return;
  fail(location, "operator does not exist: " + std::string(type_name(a->type)) + " " + op + " " +
                     std::string(type_name(b->type)));
}

ExprPtr Binder::comparison(const std::string& op, ExprPtr l, ExprPtr r, int location) {
  unify(l, r, op, location);
  if (l->type == SqlType::Interval || r->type == SqlType::Interval) {
    fail(location, "intervals are supported only in date ± interval");
  }
  return make_node(ExprKind::Compare, SqlType::Bool, {l, r}, location, op);
}

ExprPtr Binder::arithmetic(const std::string& op, ExprPtr l, ExprPtr r, int location) {
  // Literals take the other side's type; date ± 'n' reads 'n' as days.
  if (l->type == SqlType::Date && r->kind == ExprKind::Constant && r->type == SqlType::String) {
    r = coerce_literal(r, op == "-" ? SqlType::Null : SqlType::Int64);
  }
  if (l->type != SqlType::String) r = coerce_literal(r, l->type == SqlType::Date ? SqlType::Null : l->type);
  if (r->type != SqlType::String) l = coerce_literal(l, r->type == SqlType::Date ? SqlType::Null : r->type);
  SqlType a = l->type == SqlType::Null ? r->type : l->type;
  SqlType b = r->type == SqlType::Null ? l->type : r->type;
  SqlType result = SqlType::Null;
  if (a == SqlType::Int64 && b == SqlType::Int64) result = SqlType::Int64;
  else if (is_numeric(a) && is_numeric(b) && op != "%") result = SqlType::Double;
  else if (a == SqlType::Date && (b == SqlType::Int64 || b == SqlType::Interval) && (op == "+" || op == "-")) result = SqlType::Date;
  else if ((a == SqlType::Int64 || a == SqlType::Interval) && b == SqlType::Date && op == "+") result = SqlType::Date;
  else if (a == SqlType::Date && b == SqlType::Date && op == "-") result = SqlType::Int64;
  if (result == SqlType::Null) {
    fail(location, "operator does not exist: " + std::string(type_name(a)) + " " + op + " " + std::string(type_name(b)));
  }
  if (l->type == SqlType::Null) l = coerce_literal(l, a);
  if (r->type == SqlType::Null) r = coerce_literal(r, b);
  if (result == SqlType::Date && l->type != SqlType::Date) std::swap(l, r);  // date first: integer + date
  return make_node(ExprKind::Arithmetic, result, {l, r}, location, op);
}

// libpg_query 15-4.0.0 writes a negative integer constant as "ival": {}
// in its JSON (its output function writes only values > 0, the protobuf
// default being 0), so the value is read back from the query text there.
std::int64_t Binder::integer_constant(const json& c, int location) const {
  const json& ival = c.at("ival");
  if (ival.contains("ival")) return ival.at("ival").get<std::int64_t>();
  const std::string& t = source_.text();
  std::size_t i = location < 0 ? t.size() : static_cast<std::size_t>(location);
  bool negative = false;
  if (i < t.size() && (t[i] == '-' || t[i] == '+')) negative = t[i++] == '-';
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  std::int64_t magnitude = 0;
  auto r = std::from_chars(t.data() + i, t.data() + t.size(), magnitude);
  if (r.ec != std::errc()) return 0;
  return negative ? -magnitude : magnitude;
}

ExprPtr Binder::bind_constant(const json& c, int location) {
  ValueVector v;
  if (c.value("isnull", false)) {
    v.type = SqlType::Null;
    v.push_null();
  } else if (c.contains("ival")) {
    v.type = SqlType::Int64;
    v.push_int(integer_constant(c, location));
  } else if (c.contains("fval")) {
    std::string text = c.at("fval").value("fval", "0");
    std::int64_t i = 0;
    auto r = std::from_chars(text.data(), text.data() + text.size(), i);
    if (r.ec == std::errc() && r.ptr == text.data() + text.size()) {
      v.type = SqlType::Int64;
      v.push_int(i);
    } else {
      // PostgreSQL reads it as numeric; gpuolap has no numeric type.
      double d = 0;
      auto rd = std::from_chars(text.data(), text.data() + text.size(), d);
      if (rd.ec != std::errc()) fail(location, "numeric constant " + text + " is out of the range of double precision");
      v.type = SqlType::Double;
      v.push_double(d);
    }
  } else if (c.contains("sval")) {
    v.type = SqlType::String;
    v.push_string(c.at("sval").value("sval", ""));
  } else if (c.contains("boolval")) {
    v.type = SqlType::Bool;
    v.push_int(c.at("boolval").value("boolval", false) ? 1 : 0);
  } else {
    fail(location, "a constant of this kind is not supported");
  }
  return make_constant(std::move(v), location);
}

ExprPtr Binder::bind_column_ref(const json& ref, int location) {
  const auto& fields = ref.at("fields");
  for (const auto& f : fields) {
    if (!f.contains("String")) fail(location, "* is allowed only as a whole item of the select list");
  }
  if (fields.size() > 2) fail(location, "improper qualified name (too many dotted names)");
  std::vector<Identifier> chain = identifier_chain(location);
  auto quoted = [&](std::size_t i) { return i < chain.size() && chain[i].quoted; };
  std::string column = sval(fields.back());
  bool column_quoted = quoted(fields.size() - 1);
  std::vector<std::pair<int, int>> found;  // (table, column)
  std::vector<std::string> all_columns;
  int only = -1;
  if (fields.size() == 2) {
    std::string alias = sval(fields[0]);
    std::vector<std::string> aliases;
    for (const auto& t : q_.tables) aliases.push_back(t.alias);
    only = match_name(alias, quoted(0), aliases);
    if (only < 0) fail(location, "missing FROM-clause entry for table \"" + alias + "\"" + suggestion(alias, aliases));
  }
  for (std::size_t t = 0; t < q_.tables.size(); ++t) {
    if (only >= 0 && static_cast<int>(t) != only) continue;
    std::vector<std::string> names;
    for (const auto& c : q_.tables[t].table->columns) names.push_back(c.name);
    int c = match_name(column, column_quoted, names);
    if (c == -2) {
      fail(location, "column name \"" + column + "\" matches several columns of \"" + q_.tables[t].alias +
                         "\" in different cases; quote it");
    }
    if (c >= 0) found.push_back({static_cast<int>(t), c});
    all_columns.insert(all_columns.end(), names.begin(), names.end());
  }
  std::string written = fields.size() == 2 ? sval(fields[0]) + "." + column : column;
  if (found.empty()) fail(location, "column \"" + written + "\" does not exist" + suggestion(column, all_columns));
  if (found.size() > 1) fail(location, "column reference \"" + column + "\" is ambiguous");
  Expr e;
  e.kind = ExprKind::InputColumn;
  e.table = found[0].first;
  e.column = found[0].second;
  e.type = column_sql_type(q_.tables[e.table].table->columns[e.column].type);
  e.location = location;
  return finish(std::move(e));
}

ExprPtr Binder::bind_aggregate(const json& call, int location) {
  std::string name = lower(last_funcname(call));
  const std::pair<const char*, const char*> clauses[] = {{"agg_order", "ORDER BY inside an aggregate"},
                                                         {"agg_filter", "FILTER (WHERE ...) of an aggregate"},
                                                         {"over", "a window function"},
                                                         {"agg_within_group", "WITHIN GROUP"}};
  for (const auto& [key, what] : clauses) {
    if (call.contains(key)) unsupported(call.at(key), what);
  }
  if (call.value("func_variadic", false)) unsupported(call, "VARIADIC");
  AggregateCall agg;
  agg.location = location;
  agg.distinct = call.value("agg_distinct", false);
  // A reference into the parse tree, not a copy: bind() keeps Row-mode
  // bindings by node address while a GROUP BY expression is bound.
  static const json kNoArgs = json::array();
  const json& args = call.contains("args") ? call.at("args") : kNoArgs;
  if (call.value("agg_star", false)) {
    if (name != "count") fail(location, name + "(*) is not a function; only count(*)");
    agg.function = AggregateFunction::CountStar;
    agg.result_type = SqlType::Int64;
  } else {
    if (args.size() != 1) fail(location, "function " + name + " takes one argument here");
    if (contains_aggregate(args[0])) fail(first_location(args[0]), "aggregate function calls cannot be nested");
    agg.argument = bind(args[0], Mode::Row, false, "aggregate arguments");
    SqlType t = agg.argument->type;
    if (agg.distinct && name != "count") unsupported(call, "DISTINCT in " + name + "() (only in count())");
    auto no_such = [&]() {
      fail(location, "function " + name + "(" + std::string(type_name(t)) + ") does not exist");
    };
    if (name == "count") {
      agg.function = AggregateFunction::Count;
      agg.result_type = SqlType::Int64;
    } else if (name == "sum" || name == "avg") {
      if (!is_numeric(t)) no_such();
      agg.function = name == "sum" ? AggregateFunction::Sum : AggregateFunction::Avg;
      agg.result_type = name == "avg" ? SqlType::Double : t;
    } else {
      if (t == SqlType::Null || t == SqlType::Interval) no_such();
      agg.function = name == "min" ? AggregateFunction::Min : AggregateFunction::Max;
      agg.result_type = t;
    }
  }
  agg.fingerprint = name + (agg.distinct ? " distinct " : " ") + (agg.argument ? agg.argument->fingerprint : "*");
  int index = -1;
  for (std::size_t i = 0; i < q_.aggregates.size(); ++i) {
    if (q_.aggregates[i].fingerprint == agg.fingerprint) index = static_cast<int>(i);
  }
  if (index < 0) {
    q_.aggregates.push_back(agg);
    index = static_cast<int>(q_.aggregates.size() - 1);
  }
  Expr e;
  e.kind = ExprKind::Aggregate;
  e.type = agg.result_type;
  e.index = index;
  e.location = location;
  return finish(std::move(e));
}

ExprPtr Binder::bind(const json& node, Mode mode, bool aggregates_allowed, const char* clause) {
  // While a Grouped expression is bound, Row-mode bindings are kept by node
  // (see the declaration). Its nodes live, unchanged, until the outermost
  // Grouped bind returns, which empties the memos before any could be freed
  // and its address reused. (One function, not a wrapper: a frame more a
  // level overflowed the stack at the deepest nesting the parser lets by.)
  const bool memo = mode == Mode::Row && !aggregates_allowed && grouped_depth_ > 0;
  if (memo)
    if (const auto it = row_bound_.find(&node); it != row_bound_.end()) return it->second;
  const GroupedScope scope(*this, mode == Mode::Grouped);
  const auto done = [&](ExprPtr bound) {
    if (memo) row_bound_.emplace(&node, bound);
    return bound;
  };
  const std::string kind = kind_of(node);
  const int location = node_location(node);
  // After aggregation, an expression that is a GROUP BY key reads the key.
  if (mode == Mode::Grouped && kind != "A_Const" && !contains_aggregate(node)) {
    ExprPtr row = bind(node, Mode::Row, false, clause);
    if (ExprPtr key = group_key_of(row)) return done(key);
    if (kind == "ColumnRef") {
      std::string name;
      for (const auto& f : body(node).at("fields")) name += (name.empty() ? "" : ".") + sval(f);
      fail(location, "column \"" + name + "\" must appear in the GROUP BY clause or be used in an aggregate function");
    }
  }
  const auto& b = body(node);
  if (kind == "A_Const") return done(bind_constant(b, location));
  if (kind == "ColumnRef") return done(bind_column_ref(b, location));
  if (kind == "A_Expr") return done(bind_operator(b, mode, aggregates_allowed, clause));
  if (kind == "TypeCast") return done(bind_type_cast(b, mode, aggregates_allowed, clause));
  if (kind == "CaseExpr") return done(bind_case(b, mode, aggregates_allowed, clause));
  if (kind == "BoolExpr") {
    std::string op = b.value("boolop", "");
    std::vector<ExprPtr> args;
    std::string name = op == "AND_EXPR" ? "AND" : (op == "OR_EXPR" ? "OR" : "NOT");
    for (const auto& a : b.at("args")) {
      args.push_back(require_bool(bind(a, mode, aggregates_allowed, clause), "argument of " + name));
    }
    if (op == "NOT_EXPR") return done(make_node(ExprKind::Not, SqlType::Bool, args, location));
    return done(make_node(op == "AND_EXPR" ? ExprKind::And : ExprKind::Or, SqlType::Bool, args, location));
  }
  if (kind == "NullTest") {
    ExprPtr arg = bind(b.at("arg"), mode, aggregates_allowed, clause);
    if (b.value("argisrow", false)) unsupported(node, "IS NULL of a row");
    return done(make_node(ExprKind::IsNull, SqlType::Bool, {arg}, location, "",
                     b.value("nulltesttype", "IS_NULL") == "IS_NOT_NULL"));
  }
  if (kind == "FuncCall") {
    std::string name = lower(last_funcname(b));
    if (is_aggregate_name(name)) {
      if (!aggregates_allowed || mode != Mode::Grouped) {
        fail(location, std::string("aggregate functions are not allowed in ") + clause);
      }
      return done(bind_aggregate(b, location));
    }
    if (name == "extract" && b.at("funcname").size() == 2) {
      const auto& args = b.at("args");
      std::string field = lower(body(args[0]).at("sval").value("sval", ""));
      if (field != "year" && field != "month" && field != "day") {
        fail(node_location(args[0]), "EXTRACT(" + field + " ...) is not supported; only YEAR, MONTH and DAY");
      }
      ExprPtr arg = coerce_literal(bind(args[1], mode, aggregates_allowed, clause), SqlType::Date);
      if (arg->type != SqlType::Date) {
        fail(arg->location, "EXTRACT needs a date, not type " + std::string(type_name(arg->type)));
      }
      return done(make_node(ExprKind::Extract, SqlType::Int64, {arg}, location, field));
    }
    fail(location, "function " + name + "() is not supported (gpuolap's SQL subset: README, \"SQL\")");
  }
  if (kind == "GroupingFunc") {
    if (mode != Mode::Grouped || !aggregates_allowed) fail(location, std::string("GROUPING is not allowed in ") + clause);
    Expr e;
    e.kind = ExprKind::Grouping;
    e.type = SqlType::Int64;
    e.location = location;
    for (const auto& a : b.at("args")) {
      ExprPtr key = group_key_of(bind(a, Mode::Row, false, clause));
      if (!key) {
        fail(node_location(a), "arguments to GROUPING must be grouping expressions of the associated query level");
      }
      e.keys.push_back(key->index);
    }
    if (e.keys.size() > 31) fail(location, "GROUPING must have fewer than 32 arguments");
    return done(finish(std::move(e)));
  }
  if (kind == "SubLink") unsupported(node, "a subquery");
  if (kind == "ParamRef") unsupported(node, "a parameter ($n)");
  if (kind == "CoalesceExpr") unsupported(node, "COALESCE");
  if (kind == "MinMaxExpr") unsupported(node, "GREATEST and LEAST");
  if (kind == "BooleanTest") unsupported(node, "IS TRUE / IS FALSE / IS UNKNOWN");
  if (kind == "RowExpr") unsupported(node, "a row constructor");
  if (kind == "SQLValueFunction") unsupported(node, "CURRENT_DATE and the like");
  unsupported(node, kind);
}

ExprPtr Binder::bind_operator(const json& a, Mode mode, bool aggregates_allowed, const char* clause) {
  const std::string kind = a.value("kind", "");
  const int location = a.value("location", -1);
  const std::string op = sval(a.at("name").back());
  auto side = [&](const char* key) { return bind(a.at(key), mode, aggregates_allowed, clause); };
  if (kind == "AEXPR_OP") {
    if (!a.contains("lexpr")) {
      ExprPtr r = side("rexpr");
      if (op == "+" || op == "-") {
        r = coerce_literal(r, SqlType::Int64);
        if (!is_numeric(r->type)) fail(location, "operator does not exist: " + op + " " + std::string(type_name(r->type)));
        return op == "+" ? r : make_node(ExprKind::Negate, r->type, {r}, location);
      }
      fail(location, "prefix operator " + op + " is not supported");
    }
    ExprPtr l = side("lexpr"), r = side("rexpr");
    if (op == "+" || op == "-" || op == "*" || op == "/" || op == "%") return arithmetic(op, l, r, location);
    if (op == "=" || op == "<>" || op == "<" || op == "<=" || op == ">" || op == ">=") return comparison(op, l, r, location);
    fail(location, "operator " + op + " is not supported");
  }
  if (kind == "AEXPR_LIKE") {
    if (kind_of(a.at("rexpr")) == "FuncCall") unsupported(a.at("rexpr"), "LIKE ... ESCAPE");
    ExprPtr l = coerce_literal(side("lexpr"), SqlType::String);
    ExprPtr r = coerce_literal(side("rexpr"), SqlType::String);
    if (l->type != SqlType::String || r->type != SqlType::String) {
      fail(location, "operator does not exist: " + std::string(type_name(l->type)) + " ~~ " + std::string(type_name(r->type)));
    }
    return make_node(ExprKind::Like, SqlType::Bool, {l, r}, location, "", op == "!~~");
  }
  if (kind == "AEXPR_IN") {
    ExprPtr l = side("lexpr");
    std::vector<ExprPtr> children{l};
    const auto& list = a.at("rexpr");
    if (kind_of(list) != "List") unsupported(list, "IN with a subquery");
    for (const auto& item : body(list).at("items")) {
      ExprPtr v = bind(item, mode, aggregates_allowed, clause);
      ExprPtr probe = l;
      unify(probe, v, "=", node_location(item));
      children.push_back(v);
    }
    ExprPtr in = make_node(ExprKind::In, SqlType::Bool, children, location);
    return op == "<>" ? make_node(ExprKind::Not, SqlType::Bool, {in}, location) : in;
  }
  if (kind == "AEXPR_BETWEEN" || kind == "AEXPR_NOT_BETWEEN") {
    ExprPtr x = side("lexpr");
    const auto& items = body(a.at("rexpr")).at("items");
    ExprPtr lo = bind(items[0], mode, aggregates_allowed, clause);
    ExprPtr hi = bind(items[1], mode, aggregates_allowed, clause);
    ExprPtr both = make_node(ExprKind::And, SqlType::Bool, {comparison(">=", x, lo, location), comparison("<=", x, hi, location)},
                             location);
    return kind == "AEXPR_BETWEEN" ? both : make_node(ExprKind::Not, SqlType::Bool, {both}, location);
  }
  std::string what = kind == "AEXPR_ILIKE"                                    ? "ILIKE"
                     : kind == "AEXPR_SIMILAR"                                ? "SIMILAR TO"
                     : kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT" ? "IS [NOT] DISTINCT FROM"
                     : kind == "AEXPR_NULLIF"                                 ? "NULLIF"
                     : kind == "AEXPR_OP_ANY" || kind == "AEXPR_OP_ALL"       ? "ANY/ALL"
                     : kind == "AEXPR_BETWEEN_SYM" || kind == "AEXPR_NOT_BETWEEN_SYM" ? "BETWEEN SYMMETRIC"
                                                                              : kind;
  fail(location, what + " is not supported (gpuolap's SQL subset: README, \"SQL\")");
}

ExprPtr Binder::bind_type_cast(const json& c, Mode mode, bool aggregates_allowed, const char* clause) {
  const auto& type_name_node = c.at("typeName");
  const int location = type_name_node.value("location", c.value("location", -1));
  std::string type = sval(type_name_node.at("names").back());
  if (type_name_node.contains("arrayBounds")) fail(location, "array types are not supported");
  const json& arg = c.at("arg");
  if (type == "interval") {
    // interval 'n' day, interval 'n days': whole days only.
    if (kind_of(arg) != "A_Const" || !body(arg).contains("sval")) fail(location, "only interval literals are supported");
    std::string text = body(arg).at("sval").value("sval", "");
    int mask = -1;
    if (type_name_node.contains("typmods")) mask = body(type_name_node.at("typmods")[0]).at("ival").value("ival", -1);
    constexpr int kDay = 1 << 3;
    std::int64_t days = 0;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end && *p == ' ') ++p;
    auto r = std::from_chars(p, end, days);
    std::string rest = lower(std::string(r.ptr, end));
    rest.erase(0, rest.find_first_not_of(' '));
    bool ok = r.ec == std::errc() && (mask == kDay ? rest.empty() : (mask == -1 && (rest == "day" || rest == "days")));
    if (!ok) fail(location, "interval '" + text + "' is not supported; only whole days (interval 'n' day)");
    ValueVector v(SqlType::Interval);
    v.push_int(days);
    return make_constant(std::move(v), location);
  }
  SqlType to;
  if (type == "int8" || type == "int4" || type == "int2") to = SqlType::Int64;
  else if (type == "float8" || type == "float4") to = SqlType::Double;
  else if (type == "numeric") {
    if (type_name_node.contains("typmods")) fail(location, "numeric with a precision is not supported (it would round); use double precision");
    to = SqlType::Double;
  } else if (type == "date") to = SqlType::Date;
  else if (type == "text" || type == "varchar" || type == "bpchar") {
    if (type_name_node.contains("typmods")) fail(location, "character types with a length are not supported");
    to = SqlType::String;
  } else if (type == "bool") to = SqlType::Bool;
  else fail(location, "type " + type + " is not supported");
  ExprPtr value = bind(arg, mode, aggregates_allowed, clause);
  SqlType from = value->type;
  bool allowed = from == to || from == SqlType::Null || from == SqlType::String || to == SqlType::String ||
                 (is_numeric(from) && is_numeric(to)) || (from == SqlType::Bool && to == SqlType::Int64);
  if (!allowed || from == SqlType::Interval) {
    fail(location, "cannot cast type " + std::string(type_name(from)) + " to " + std::string(type_name(to)));
  }
  ExprPtr cast = make_node(ExprKind::Cast, to, {value}, location);
  return value->kind == ExprKind::Constant ? fold(cast) : cast;
}

ExprPtr Binder::bind_case(const json& c, Mode mode, bool aggregates_allowed, const char* clause) {
  const int location = c.value("location", -1);
  ExprPtr subject;
  if (c.contains("arg")) subject = bind(c.at("arg"), mode, aggregates_allowed, clause);
  std::vector<ExprPtr> conditions, results;
  for (const auto& w : c.at("args")) {
    const auto& when = body(w);
    ExprPtr cond = bind(when.at("expr"), mode, aggregates_allowed, clause);
    if (subject) cond = comparison("=", subject, cond, when.value("location", location));
    conditions.push_back(require_bool(cond, "argument of CASE/WHEN"));
    results.push_back(bind(when.at("result"), mode, aggregates_allowed, clause));
  }
  if (c.contains("defresult")) results.push_back(bind(c.at("defresult"), mode, aggregates_allowed, clause));
  else {
    ValueVector null_value(SqlType::Null);
    null_value.push_null();
    results.push_back(make_constant(std::move(null_value), location));
  }
  // PostgreSQL: the first non-literal type; integers widen to double.
  SqlType type = SqlType::Null;
  for (const auto& r : results) {
    if (r->type == SqlType::Null || (r->kind == ExprKind::Constant && r->type == SqlType::String)) continue;
    if (type == SqlType::Null) type = r->type;
    else if (is_numeric(type) && is_numeric(r->type)) type = type == SqlType::Double || r->type == SqlType::Double ? SqlType::Double : SqlType::Int64;
    else if (type != r->type) {
      fail(r->location, "CASE types " + std::string(type_name(type)) + " and " + std::string(type_name(r->type)) + " cannot be matched");
    }
  }
  if (type == SqlType::Null) {
    for (const auto& r : results) {
      if (r->type == SqlType::String) type = SqlType::String;
    }
  }
  if (type == SqlType::Interval) fail(location, "intervals are supported only in date ± interval");
  std::vector<ExprPtr> children;
  for (std::size_t i = 0; i < results.size(); ++i) {
    ExprPtr r = coerce_literal(results[i], type);
    if (r->type != type && r->type != SqlType::Null && !(type == SqlType::Double && r->type == SqlType::Int64)) {
      fail(r->location, "CASE types " + std::string(type_name(type)) + " and " + std::string(type_name(r->type)) + " cannot be matched");
    }
    if (i < conditions.size()) children.push_back(conditions[i]);
    children.push_back(r);
  }
  return make_node(ExprKind::Case, type, children, location);
}

}  // namespace

LogicalQuery bind_query(const json& statement, const SourceText& source, const TableCatalog& catalog) {
  Binder binder(source, catalog);
  return binder.bind_statement(statement);
}

}  // namespace gpuolap::sql
