// H-tree query files (htree/query_csv.cpp) over a small tree of an int64, a
// string and a date dimension. Any text is read or refused with an
// InputError; a file it reads has a query per row, each code a value of its
// dictionary, kAny or kAbsent, and its answers echo every row.
#include <sstream>

#include "fuzz_input.hpp"
#include "gpuolap/error.hpp"
#include "htree/htree_io.hpp"

using namespace gpuolap;
using namespace gpuolap::htree;

namespace {

const HTree& tree() {
  static const HTree t = [] {
    HTree h;
    h.dimensions = {"n", "s", "d"};
    h.measure = "m";
    const table::ColumnType types[] = {table::ColumnType::Int64, table::ColumnType::String, table::ColumnType::Date};
    const char* values[3][3] = {{"1", "-7", ""}, {"x", "a,b", "007"}, {"2024-01-02", "1999-12-31", ""}};
    for (int d = 0; d < 3; ++d) {
      Dictionary dict;
      dict.type = types[d];
      for (const char* v : values[d]) dict.code(v);
      h.dictionaries.push_back(std::move(dict));
    }
    h.levels.assign(3, {});
    return h;
  }();
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  QueryFile q;
  try {
    q = parse_query_csv(tree(), fuzz::as_text(data, size), "fuzz.csv");
  } catch (const InputError&) {
    return 0;
  }
  if (q.batch.dimensions != 3 || q.batch.size() != q.rows.size()) fuzz::broken("a query per row");
  for (std::size_t i = 0; i < q.batch.codes.size(); ++i) {
    const std::uint32_t c = q.batch.codes[i];
    if (c != kAny && c != kAbsent && c >= tree().dictionaries[i % 3].values.size()) fuzz::broken("a code outside its dictionary");
  }
  std::ostringstream out;
  write_answers(out, q, std::vector<Aggregate>(q.rows.size()));
  std::size_t lines = 0;
  for (char ch : out.str()) lines += ch == '\n';
  if (lines < q.rows.size() + 1) fuzz::broken("an answer line missing");
  return 0;
}
