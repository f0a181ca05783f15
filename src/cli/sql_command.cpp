// gpuolap sql: one SELECT (or EXPLAIN SELECT) over a database directory.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "gpuolap/error.hpp"
#include "sql/cached_tables.hpp"
#include "sql/result_format.hpp"
#include "sql/sql.hpp"
#include "table/database.hpp"

namespace gpuolap::cli {

int run_sql(const SqlCommandOptions& o) {
  using Clock = std::chrono::steady_clock;
  const sql::ResultFormat format = sql::parse_result_format(o.format);
  if (o.query.empty() == o.file.empty()) throw InputError("sql: give the query as an argument or with -f FILE, one of them");
  std::string text = o.query;
  if (!o.file.empty()) {
    std::ifstream in(o.file, std::ios::binary);
    if (!in) throw InputError("sql: cannot read " + o.file);
    std::ostringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  table::Database database(o.db);
  sql::SqlOptions options;
  options.engine = sql::parse_engine(o.engine);
  options.grouping_sets = sql::parse_grouping_sets(o.grouping_sets);
  options.max_rows = o.max_rows;
  // With --repeat the first run reads the tables and warms the caches; the
  // runs timed after it see the tables in memory, as an in-memory database's
  // queries do.
  const sql::CachedTables cached(database);
  const sql::TableCatalog& tables = cached;
  std::vector<double> repeat_seconds;
  auto start = Clock::now();
  sql::QueryResult result;
  try {
    result = sql::run(tables, text, options);
    const double first = std::chrono::duration<double>(Clock::now() - start).count();
    for (std::uint64_t i = 0; i < o.repeat; ++i) {
      start = Clock::now();
      result = sql::run(tables, text, options);
      repeat_seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
    if (o.repeat == 0) repeat_seconds.push_back(first);
  } catch (const InputError& e) {
    throw InputError(o.file.empty() ? std::string(e.what()) : o.file + ": " + e.what());
  }
  std::sort(repeat_seconds.begin(), repeat_seconds.end());
  const std::size_t n = repeat_seconds.size();
  const double median = n % 2 ? repeat_seconds[n / 2] : (repeat_seconds[n / 2 - 1] + repeat_seconds[n / 2]) / 2;
  std::cout << sql::format_result(result, format);
  std::cout.flush();
  if (o.timing) {
    std::cerr << "engine: " << o.engine << "\nplan:\n";
    for (const auto& line : result.plan) std::cerr << "  " << line << "\n";
    std::cerr << "operators:\n";
    for (const auto& t : result.timings) {
      std::cerr << fmt::format("  {:<50} {:10.3f} ms {:>12} rows out\n", t.name, t.seconds * 1e3, t.rows_out);
    }
    if (o.repeat == 0) {
      std::cerr << fmt::format("total (parse, bind, plan, run; tables read from disk): {:.3f} ms\n", median * 1e3);
    } else {
      std::cerr << fmt::format(
          "repeat: {} runs after a warm-up, tables in memory (parse, bind, plan, run): median {:.3f} ms, min {:.3f} ms\n",
          n, median * 1e3, repeat_seconds.front() * 1e3);
    }
  }
  return 0;
}

}  // namespace gpuolap::cli
