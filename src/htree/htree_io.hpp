// H-trees from tables and CSV files, and answers as CSV: the tree's shell
// (dimensions in popular-path order, measure, dictionaries), tuples coded by
// its dictionaries (new values appended), query files, the answer file.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "htree/htree.hpp"
#include "table/table.hpp"

namespace gpuolap::htree {

// An empty tree over table `t`: `order` the popular path (empty: every
// column but the measure, by ascending distinct count as the paper
// orders them), `measure` an int64 or double column. Unknown columns, a
// measure among the dimensions, or a dimension twice are InputErrors.
HTree tree_shell(const table::Table& t, std::vector<std::string> order, const std::string& measure);

// The rows of `t` (which has every dimension and the measure, by name)
// coded by the tree's dictionaries, new values added to them. `what` names
// the input in errors.
CodedTuples code_rows(HTree& tree, const table::Table& t, const std::string& what);

// A batch file: a CSV whose header names every dimension and the measure
// (any order, nothing else), read with the tree's types (to code_rows).
table::Table read_batch_table(const HTree& tree, const std::filesystem::path& csv);
// The same over CSV text (a request's body); `where` names it in errors.
table::Table parse_batch_table(const HTree& tree, std::string_view text, const std::string& where);

// A query file (query_csv.cpp): a header naming every dimension of the tree
// (any order), a query a row, each field a value or `*` (an empty field is
// NULL). Read in one pass, its rows tokenized in parallel, each dimension's
// values looked up through an index of the tree's dictionary.
struct QueryFile {
  std::string text;                      // the file
  std::pair<std::size_t, std::size_t> header;               // its header line in text: offset, length
  std::vector<std::pair<std::size_t, std::size_t>> rows;    // each query's line
  QueryBatch batch;                      // coded in popular-path order

  std::string_view line(std::pair<std::size_t, std::size_t> span) const { return {text.data() + span.first, span.second}; }
};
// The batch's codes live in `memory` (a tree's query_memory(), where its
// engine reads them best).
QueryFile read_query_csv(const HTree& tree, const std::filesystem::path& csv,
                         std::pmr::memory_resource* memory = std::pmr::get_default_resource());
// The same over CSV text (a request's body); `where` names it in errors.
QueryFile parse_query_csv(const HTree& tree, std::string text, const std::string& where,
                          std::pmr::memory_resource* memory = std::pmr::get_default_resource());

// The answer: each query's line as written, then count, sum, min, max, avg
// (count 0 and empty fields where nothing matches).
std::string answers_csv(const QueryFile& queries, std::span<const Aggregate> answers);
void write_answers(std::ostream& out, const QueryFile& queries, std::span<const Aggregate> answers);

}  // namespace gpuolap::htree
