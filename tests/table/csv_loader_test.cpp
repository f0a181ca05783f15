#include "table/csv_loader.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <random>

#include "support/input_error.hpp"
#include "support/test_path.hpp"
#include "table/date.hpp"

namespace gpuolap::table {
namespace {

namespace fs = std::filesystem;
using ::gpuolap::testing::error_of;

class CsvLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::gpuolap::testing::fresh_test_path("table_csv");
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& text, const std::string& name = "t.csv") {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }
  Table load(const std::string& text, CsvLoadOptions o = {}) {
    if (o.table_name.empty()) o.table_name = "t";
    return load_csv(write(text), o);
  }
  std::string error(const std::string& text, CsvLoadOptions o = {}) {
    return error_of([&] { load(text, o); });
  }
  // The strings of a string column, "<NULL>" for NULL.
  static std::vector<std::string> strings(const Table& t, const std::string& name) {
    const Column& c = *t.find(name);
    std::vector<std::string> out;
    for (std::size_t r = 0; r < c.size(); ++r)
      out.push_back(c.is_null(r) ? "<NULL>" : std::string(c.dictionary.at(static_cast<std::size_t>(c.int32s[r]))));
    return out;
  }
  fs::path dir_;
};

TEST(Dates, ParseFormatAndRefuse) {
  std::int32_t d = -1;
  ASSERT_TRUE(parse_date("1970-01-01", d));
  EXPECT_EQ(d, 0);
  ASSERT_TRUE(parse_date("2000-02-29", d));
  EXPECT_EQ(format_date(d), "2000-02-29");
  ASSERT_TRUE(parse_date("1969-12-31", d));
  EXPECT_EQ(d, -1);
  EXPECT_EQ(format_date(days_from_civil(1995, 6, 17)), "1995-06-17");
  for (const char* bad : {"1900-02-29", "2021-13-01", "2021-04-31", "2021-4-01", "20210401", "2021-04-01 ", "0000-00-00"})
    EXPECT_FALSE(parse_date(bad, d)) << bad;
}

TEST_F(CsvLoad, InfersEveryTypeAndWidens) {
  const Table t = load(
      "i,d,day,s,mixed,wide,none\n"
      "1,1.5,2024-01-31,x,1,1,\n"
      "-2,2,1999-12-31,y,2024-01-01,2.5,\n"
      ",,,,,1e3,\n");
  EXPECT_EQ(t.find("i")->type, ColumnType::Int64);
  EXPECT_EQ(t.find("d")->type, ColumnType::Double);
  EXPECT_EQ(t.find("day")->type, ColumnType::Date);
  EXPECT_EQ(t.find("s")->type, ColumnType::String);
  EXPECT_EQ(t.find("mixed")->type, ColumnType::String);  // a number and a date
  EXPECT_EQ(t.find("wide")->type, ColumnType::Double);
  EXPECT_EQ(t.find("none")->type, ColumnType::String);  // no value at all
  EXPECT_EQ(t.find("i")->int64s, (std::vector<std::int64_t>{1, -2, 0}));
  EXPECT_EQ(t.find("i")->nulls, (std::vector<std::uint8_t>{0, 0, 1}));
  EXPECT_EQ(t.find("d")->doubles, (std::vector<double>{1.5, 2, 0}));
  EXPECT_EQ(t.find("wide")->doubles, (std::vector<double>{1, 2.5, 1000}));
  EXPECT_EQ(format_date(t.find("day")->int32s[1]), "1999-12-31");
  EXPECT_EQ(strings(t, "mixed"), (std::vector<std::string>{"1", "2024-01-01", "<NULL>"}));
  EXPECT_EQ(t.find("none")->nulls, (std::vector<std::uint8_t>{1, 1, 1}));
  EXPECT_TRUE(t.find("wide")->nulls.empty());
  check_table(t);
}

TEST_F(CsvLoad, Int64OverflowWidensToDoubleAndInfinityIsAString) {
  const Table t = load("big,inf\n9223372036854775807,1\n9223372036854775808,inf\n");
  EXPECT_EQ(t.find("big")->type, ColumnType::Double);
  EXPECT_EQ(t.find("inf")->type, ColumnType::String);
}

TEST_F(CsvLoad, QuotesCommasCrlfAndEmbeddedNewlines) {
  const Table t = load(
      "name,\"a \"\"quoted\"\" header\"\r\n"
      "\"x, y\",1\r\n"
      "\"two\r\nlines\",\"2\"\r\n"
      "\"say \"\"hi\"\"\",3\r\n"
      "\"\",4\r\n"
      ",5");  // no final line break
  EXPECT_EQ(t.columns[1].name, "a \"quoted\" header");
  EXPECT_EQ(t.columns[1].type, ColumnType::Int64);
  EXPECT_EQ(t.columns[1].int64s, (std::vector<std::int64_t>{1, 2, 3, 4, 5}));
  // A quoted empty field is the empty string in a string column; an unquoted one is NULL.
  EXPECT_EQ(strings(t, "name"), (std::vector<std::string>{"x, y", "two\r\nlines", "say \"hi\"", "", "<NULL>"}));
  EXPECT_EQ(t.columns[0].dictionary, (Dictionary{"", "say \"hi\"", "two\r\nlines", "x, y"}));
}

TEST_F(CsvLoad, QuotedEmptyIsNullInOtherTypesAndBlankLinesAreSkipped) {
  const Table t = load("\n\na,b\n1,\"\"\n\n\r\n2,3\n\n");
  EXPECT_EQ(t.row_count(), 2u);
  EXPECT_EQ(t.find("b")->type, ColumnType::Int64);
  EXPECT_EQ(t.find("b")->nulls, (std::vector<std::uint8_t>{1, 0}));
}

TEST_F(CsvLoad, DeclaredTypesAreUsed) {
  CsvLoadOptions o;
  o.types = {{"code", ColumnType::String}, {"amount", ColumnType::Double}};
  const Table t = load("code,amount,n\n007,1,5\n12,,6\n", o);
  EXPECT_EQ(t.find("code")->type, ColumnType::String);
  EXPECT_EQ(strings(t, "code"), (std::vector<std::string>{"007", "12"}));
  EXPECT_EQ(t.find("amount")->type, ColumnType::Double);
  EXPECT_EQ(t.find("n")->type, ColumnType::Int64);
}

TEST_F(CsvLoad, TypesFile) {
  const fs::path p = write(R"({"a": "date", "b": "int64"})", "types.json");
  const auto types = read_types_json(p);
  EXPECT_EQ(types.at("a"), ColumnType::Date);
  EXPECT_EQ(types.at("b"), ColumnType::Int64);
  const std::string e = error_of([&] { read_types_json(write(R"({"a": "float"})", "bad.json")); });
  EXPECT_NE(e.find("bad.json"), std::string::npos) << e;
  EXPECT_NE(e.find("int64, double, date or string"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { read_types_json(write(R"(["a"])", "arr.json")); }).find("expected an object"),
            std::string::npos);
  EXPECT_NE(error_of([&] { read_types_json(write(R"({"a": )", "cut.json")); }).find("cut.json"), std::string::npos);
}

TEST_F(CsvLoad, EveryBadInputNamesFileLineAndColumn) {
  struct Case {
    std::string csv, expected;
    CsvLoadOptions options{};
  };
  CsvLoadOptions ints;
  ints.types = {{"b", ColumnType::Int64}};
  CsvLoadOptions dates;
  dates.types = {{"b", ColumnType::Date}};
  CsvLoadOptions doubles;
  doubles.types = {{"b", ColumnType::Double}};
  CsvLoadOptions unknown;
  unknown.types = {{"zz", ColumnType::Double}};
  const std::vector<Case> cases = {
      {"", "empty"},
      {"\n\n", "empty"},
      {"a,b\n1,2\n3\n", "line 3, column 1 (a): 1 fields; the header has 2"},
      {"a,b\n1,2\n3,4,5\n", "line 3, column 3: 3 fields; the header has 2"},
      {"a,b\n1,\"2\n3,4\n", "line 2, column 2 (b): a quoted field that is never closed"},
      {"a,b\n1,\"2\"x\n", "line 2, column 2 (b): a character after the closing quote"},
      {"a,b\n1,2\"\n", "line 2, column 2 (b): a quote inside an unquoted field"},
      {"a,\n1,2\n", "line 1, column 2: an empty column name"},
      {"a,a\n1,2\n", "line 1, column 2: column name 'a' given twice in the header (also column 1)"},
      {"a,b\n1,2\n\"x\ny\",5\n3,4.5\n", "line 5, column 2 (b): '4.5' is not an int64", ints},
      {"a,b\n1,99999999999999999999\n", "line 2, column 2 (b): '99999999999999999999' is not an int64", ints},
      {"a,b\n1,2021-02-30\n", "line 2, column 2 (b): '2021-02-30' is not a date (YYYY-MM-DD)", dates},
      {"a,b\n1,nan\n", "line 2, column 2 (b): 'nan' is not a double", doubles},
      {"a,b\n1,2\n", "--types: 'zz' is no column", unknown},
  };
  for (const Case& c : cases) {
    const std::string e = error(c.csv, c.options);
    EXPECT_NE(e.find(c.expected), std::string::npos) << "csv: " << c.csv << "\nmessage: " << e;
    if (c.expected.rfind("--types", 0) != 0) {
      EXPECT_NE(e.find("t.csv"), std::string::npos) << e;
    }
  }
  CsvLoadOptions named;
  named.table_name = "t";
  EXPECT_NE(error_of([&] { load_csv(dir_ / "absent.csv", named); }).find("absent.csv: cannot open"),
            std::string::npos);
  named.table_name = "no-dash";
  EXPECT_NE(error("a\n1\n", named).find("table name 'no-dash'"), std::string::npos);
}

TEST_F(CsvLoad, AHugeBadFieldMakesAShortMessage) {
  CsvLoadOptions o;
  o.types = {{"b", ColumnType::Int64}};
  const std::string e = error("a,b\n1," + std::string(1 << 20, 'x') + "\n", o);
  EXPECT_LT(e.size(), 1000u) << e.size();
  EXPECT_NE(e.find("line 2, column 2 (b)"), std::string::npos);
  EXPECT_NE(e.find("(1048576 bytes)"), std::string::npos) << e;
}

TEST_F(CsvLoad, SortBySortsAndRecordsTheOrder) {
  CsvLoadOptions o;
  o.sort_by = {"g", "v"};
  const Table t = load("g,v\nb,2\na,3\nb,1\n,9\na,1\n", o);
  EXPECT_EQ(t.sort_order, (std::vector<std::string>{"g", "v"}));
  EXPECT_EQ(strings(t, "g"), (std::vector<std::string>{"<NULL>", "a", "a", "b", "b"}));
  EXPECT_EQ(t.find("v")->int64s, (std::vector<std::int64_t>{9, 1, 3, 1, 2}));
  check_table(t);
  o.sort_by = {"nope"};
  EXPECT_NE(error("g,v\nb,2\n", o).find("--sort-by: 'nope' is no column of"), std::string::npos);
  EXPECT_NE(error("g,v\nb,2\n3\n", o).find("--sort-by"), std::string::npos);  // refused before the body is read
}

// Numbers are read by short paths where they can be (up to 18 integer
// digits; decimals of up to 15 digits); every value must be the one
// std::from_chars gives, to the bit, at every length and point position.
TEST_F(CsvLoad, NumbersAreReadToTheBitAsFromCharsReadsThem) {
  std::mt19937_64 rng(5);
  std::vector<std::string> decimals, integers;
  for (int r = 0; r < 20000; ++r) {
    std::string d = rng() % 4 == 0 ? "-" : "";
    const std::size_t digits = 1 + rng() % 18;
    const std::size_t point = rng() % (digits + 1);
    for (std::size_t i = 0; i < digits; ++i) {
      if (i == point && rng() % 5) d += '.';
      d += static_cast<char>('0' + rng() % 10);
    }
    decimals.push_back(d);
    std::string n = rng() % 3 == 0 ? "-" : "";
    const std::size_t int_digits = 1 + rng() % 19;
    for (std::size_t i = 0; i < int_digits; ++i) n += static_cast<char>('0' + (i == 0 && int_digits == 19 ? rng() % 9 : rng() % 10));
    integers.push_back(n);
  }
  integers.insert(integers.end(), {"9223372036854775807", "-9223372036854775808", "-0", "000123"});
  decimals.insert(decimals.end(), {"-0.0", "0.1", "0.30000000000000004", "5.", ".5", "999999999999999.9"});
  std::string csv = "d,n\n";
  const std::size_t rows = std::max(decimals.size(), integers.size());
  for (std::size_t r = 0; r < rows; ++r) csv += decimals[r % decimals.size()] + "," + integers[r % integers.size()] + "\n";
  const Table t = load(csv);
  ASSERT_EQ(t.find("d")->type, ColumnType::Double);
  ASSERT_EQ(t.find("n")->type, ColumnType::Int64);
  for (std::size_t r = 0; r < rows; ++r) {
    const std::string& d = decimals[r % decimals.size()];
    double expected_d = 0;
    std::from_chars(d.data(), d.data() + d.size(), expected_d);
    const double got_d = t.find("d")->doubles[r];
    ASSERT_EQ(std::memcmp(&got_d, &expected_d, sizeof got_d), 0) << d << " read as " << got_d;
    const std::string& n = integers[r % integers.size()];
    std::int64_t expected_n = 0;
    std::from_chars(n.data(), n.data() + n.size(), expected_n);
    ASSERT_EQ(t.find("n")->int64s[r], expected_n) << n;
  }
}

// The types are guessed from each chunk's first records; values past them
// that the guess does not fit must give the type of all the values, as if
// every value had been tried, with every value read as that type.
TEST_F(CsvLoad, ValuesPastTheSampledRecordsWidenTheGuessedTypes) {
  const int rows = 300000;  // many chunks, each sampled only at its start
  const int late = 277777;  // far past the first records of its chunk
  std::string csv = "id,to_double,to_string,null_then_date,dates_then_number,all_null,quoted_empty,ints\n";
  for (int r = 0; r < rows; ++r) {
    const bool at = r == late;
    csv += fmt::format("{},{},{},{},{},,{},{}\n", r, at ? "2.5" : std::to_string(r), at ? "x" : std::to_string(r),
                       r < late ? "" : "2024-02-29", at ? "17" : "2000-01-01", at ? "\"\"" : "", r % 5);
  }
  const Table t = load(csv);
  ASSERT_EQ(t.row_count(), static_cast<std::size_t>(rows));
  EXPECT_EQ(t.find("id")->type, ColumnType::Int64);
  EXPECT_EQ(t.find("ints")->type, ColumnType::Int64);
  EXPECT_EQ(t.find("to_double")->type, ColumnType::Double);
  EXPECT_EQ(t.find("to_string")->type, ColumnType::String);
  EXPECT_EQ(t.find("null_then_date")->type, ColumnType::Date);
  EXPECT_EQ(t.find("dates_then_number")->type, ColumnType::String);
  EXPECT_EQ(t.find("all_null")->type, ColumnType::String);
  EXPECT_EQ(t.find("quoted_empty")->type, ColumnType::String);
  const std::vector<std::string> to_string = strings(t, "to_string");
  const std::vector<std::string> dates_then_number = strings(t, "dates_then_number");
  const std::vector<std::string> quoted_empty = strings(t, "quoted_empty");
  for (int r = 0; r < rows; ++r) {
    const bool at = r == late;
    ASSERT_EQ(t.find("id")->int64s[r], r);
    ASSERT_EQ(t.find("to_double")->doubles[r], at ? 2.5 : r) << r;
    ASSERT_EQ(to_string[r], at ? "x" : std::to_string(r)) << r;
    ASSERT_EQ(t.find("null_then_date")->is_null(r), r < late) << r;
    if (r >= late) {
      ASSERT_EQ(format_date(t.find("null_then_date")->int32s[r]), "2024-02-29");
    }
    ASSERT_EQ(dates_then_number[r], at ? "17" : "2000-01-01") << r;
    ASSERT_TRUE(t.find("all_null")->is_null(r)) << r;
    ASSERT_EQ(quoted_empty[r], at ? "" : "<NULL>") << r;  // a quoted empty field is the empty string
    ASSERT_EQ(t.find("ints")->int64s[r], r % 5);
  }
  EXPECT_TRUE(t.find("all_null")->dictionary.empty());
  EXPECT_TRUE(t.find("to_double")->nulls.empty());
  check_table(t);
  // A declared type is not guessed: a late value it does not fit is an error.
  CsvLoadOptions declared;
  declared.types = {{"to_double", ColumnType::Int64}};
  EXPECT_NE(error(csv, declared).find(fmt::format("line {}, column 2 (to_double): '2.5' is not an int64", late + 2)),
            std::string::npos);
}

// A file large enough for many parallel chunks, with quoted line breaks and
// commas everywhere, read the same as the serial reading of its rows.
TEST_F(CsvLoad, ParallelChunksReadWhatWasWritten) {
  std::mt19937_64 rng(7);
  std::string csv = "id,text,x\n";
  std::vector<std::string> texts;
  const int rows = 60000;
  for (int r = 0; r < rows; ++r) {
    std::string text;
    const int len = static_cast<int>(rng() % 40);
    for (int i = 0; i < len; ++i) text += "ab,\"\n\r xy"[rng() % 10];
    texts.push_back(text);
    std::string quoted = "\"";
    for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    quoted += "\"";
    csv += std::to_string(r) + "," + quoted + "," + (r % 7 == 0 ? "" : std::to_string(r * 0.5)) + (r % 2 ? "\r\n" : "\n");
  }
  const Table t = load(csv);
  ASSERT_EQ(t.row_count(), static_cast<std::size_t>(rows));
  EXPECT_EQ(t.find("x")->type, ColumnType::Double);
  const std::vector<std::string> got = strings(t, "text");
  for (int r = 0; r < rows; ++r) {
    ASSERT_EQ(t.find("id")->int64s[r], r);
    ASSERT_EQ(got[r], texts[r]) << "row " << r;
    ASSERT_EQ(t.find("x")->is_null(r), r % 7 == 0);
  }
  check_table(t);
  // An error deep in the file still names its line: row r sits on the line
  // after all line breaks before it.
  const std::size_t bad_row = 54321;
  std::size_t line = 2;
  for (std::size_t r = 0; r < bad_row; ++r) line += 1 + std::count(texts[r].begin(), texts[r].end(), '\n');
  const std::string marker = std::to_string(bad_row) + ",";
  std::size_t at = csv.find("\n" + marker);
  if (at == std::string::npos) at = csv.find("\r\n" + marker) + 1;
  csv.insert(at + 1 + marker.size(), "oops\"");
  const std::string e = error(csv);
  EXPECT_NE(e.find(fmt::format("line {}, column 2 (text)", line)), std::string::npos) << e;
}

}  // namespace
}  // namespace gpuolap::table
