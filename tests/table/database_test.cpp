#include "table/database.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>
#include <cmath>
#include <fstream>
#include <limits>

#include "support/input_error.hpp"
#include "support/test_path.hpp"

namespace gpuolap::table {
namespace {

namespace fs = std::filesystem;
using ::gpuolap::testing::error_of;

Column column(std::string name, ColumnType type) {
  Column c;
  c.name = std::move(name);
  c.type = type;
  return c;
}

// One column of every type, each with NULLs, and a dictionary.
Table every_type() {
  Table t;
  t.name = "every_type";
  Column i = column("i", ColumnType::Int64);
  i.int64s = {INT64_MIN, 0, 7, INT64_MAX};
  i.nulls = {0, 1, 0, 0};
  i.int64s[1] = 0;
  Column d = column("d", ColumnType::Double);
  d.doubles = {-1.5, 0, 1e300, 0};
  d.nulls = {0, 0, 0, 1};
  Column day = column("day", ColumnType::Date);
  day.int32s = {-719162, 0, 0, 2932896};
  day.nulls = {0, 0, 1, 0};
  Column s = column("s", ColumnType::String);
  s.dictionary = {"", "a,b", std::string("nul\0in", 6), "\xc3\xa9t\xc3\xa9"};
  s.int32s = {3, 0, 1, 0};
  s.nulls = {0, 0, 0, 1};
  Column plain = column("plain", ColumnType::Int64);
  plain.int64s = {1, 2, 3, 4};
  t.columns = {i, d, day, s, plain};
  return t;
}

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = ::gpuolap::testing::fresh_test_path("table_db"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<char> bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_bytes(const fs::path& p, const std::vector<char>& b) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  std::vector<std::string> files() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
  fs::path dir_;
};

TEST_F(DatabaseTest, EveryTypeWithNullsRoundTrips) {
  Database db(dir_, true);
  const Table t = every_type();
  db.store(t);
  const auto back = db.load("every_type");
  ASSERT_EQ(back->columns.size(), t.columns.size());
  EXPECT_EQ(back->name, "every_type");
  EXPECT_EQ(back->row_count(), 4u);
  for (std::size_t c = 0; c < t.columns.size(); ++c) {
    const Column& a = t.columns[c];
    const Column& b = back->columns[c];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.int64s, b.int64s);
    EXPECT_EQ(a.doubles, b.doubles);
    EXPECT_EQ(a.int32s, b.int32s);
    EXPECT_EQ(a.dictionary, b.dictionary);
    EXPECT_EQ(a.nulls, b.nulls);
  }
  EXPECT_TRUE(back->columns[4].nulls.empty());
}

TEST_F(DatabaseTest, EmptyTableAndNoColumnsRoundTrip) {
  Database db(dir_, true);
  Table t;
  t.name = "empty";
  t.columns.push_back(column("s", ColumnType::String));
  db.store(t);
  EXPECT_EQ(db.load("empty")->row_count(), 0u);
  EXPECT_EQ(db.load("empty")->columns.size(), 1u);
}

TEST_F(DatabaseTest, ListsTablesAndReplacesOne) {
  Database db(dir_, true);
  Table t = every_type();
  db.store(t);
  t.name = "another";
  db.store(t);
  t.columns.pop_back();
  db.store(t);
  EXPECT_EQ(db.table_names(), (std::vector<std::string>{"another", "every_type"}));
  EXPECT_TRUE(db.has_table("another"));
  EXPECT_FALSE(db.has_table("../another"));
  EXPECT_EQ(db.load("another")->columns.size(), 4u);
  const TableSummary summary = db.summary("every_type");
  EXPECT_EQ(summary.rows, 4u);
  EXPECT_EQ(summary.file_bytes, fs::file_size(dir_ / "every_type.table"));
  ASSERT_EQ(summary.columns.size(), 5u);
  EXPECT_EQ(summary.columns[3].name, "s");
  EXPECT_EQ(summary.columns[3].type, ColumnType::String);
  EXPECT_EQ(summary.columns[3].dictionary_size, 4u);
  EXPECT_TRUE(summary.columns[3].nullable);
  EXPECT_FALSE(summary.columns[4].nullable);
  EXPECT_EQ(files(), (std::vector<std::string>{"another.table", "every_type.table"}));
}

TEST_F(DatabaseTest, UnknownTableNamesTheClosest) {
  Database db(dir_, true);
  db.store(every_type());
  const std::string e = error_of([&] { db.load("every_typo"); });
  EXPECT_NE(e.find("no table 'every_typo'"), std::string::npos) << e;
  EXPECT_NE(e.find("closest: every_type"), std::string::npos) << e;
}

TEST_F(DatabaseTest, MissingOrFileDirectoryRefused) {
  EXPECT_NE(error_of([&] { Database db(dir_); }).find("no such database directory"), std::string::npos);
  fs::create_directories(dir_);
  write_bytes(dir_ / "file", {'x'});
  EXPECT_NE(error_of([&] { Database db(dir_ / "file"); }).find("not a directory"), std::string::npos);
}

TEST_F(DatabaseTest, InconsistentTableIsRefusedAndNothingIsWritten) {
  Database db(dir_, true);
  Table t = every_type();
  t.columns[3].int32s[0] = 4;  // past its dictionary of 4
  EXPECT_NE(error_of([&] { db.store(t); }).find("outside its dictionary"), std::string::npos);
  t = every_type();
  t.columns[4].int64s.push_back(1);
  EXPECT_NE(error_of([&] { db.store(t); }).find("has 5 rows"), std::string::npos);
  t = every_type();
  t.columns[3].dictionary = {"b", "a", "c", "d"};
  EXPECT_NE(error_of([&] { db.store(t); }).find("byte order"), std::string::npos);
  t = every_type();
  t.columns[1].name = "i";
  EXPECT_NE(error_of([&] { db.store(t); }).find("two columns named 'i'"), std::string::npos);
  t = every_type();
  t.sort_order = {"plain"};
  db.store(t);
  t.sort_order = {"i"};  // INT64_MIN, NULL, 7, MAX: NULL must come first
  EXPECT_NE(error_of([&] { db.store(t); }).find("do not follow"), std::string::npos);
  t.name = "bad/name";
  EXPECT_NE(error_of([&] { db.store(t); }).find("table name"), std::string::npos);
  EXPECT_EQ(files(), std::vector<std::string>{"every_type.table"});
}

TEST_F(DatabaseTest, EveryCorruptionIsRefusedNamingTheFile) {
  Database db(dir_, true);
  db.store(every_type());
  const fs::path path = dir_ / "every_type.table";
  const std::vector<char> good = bytes(path);
  auto refused = [&](std::vector<char> b, const std::string& what) {
    write_bytes(path, b);
    const std::string e = error_of([&] { db.load("every_type"); });
    EXPECT_NE(e.find(path.string()), std::string::npos) << e;
    EXPECT_NE(e.find(what), std::string::npos) << e;
  };
  refused({}, "truncated");
  refused(std::vector<char>(good.begin(), good.begin() + 70), "");
  refused(std::vector<char>(good.begin(), good.end() - 1), "truncated");
  auto longer = good;
  longer.push_back(0);
  refused(longer, "after the end");
  // Every single flipped byte is refused: header, metadata, values, flags,
  // dictionary, padding, checksum.
  for (std::size_t i = 0; i < good.size(); ++i) {
    auto flipped = good;
    flipped[i] ^= 0x20;
    write_bytes(path, flipped);
    const std::string e = error_of([&] { db.load("every_type"); });
    EXPECT_NE(e.find(path.string()), std::string::npos) << "byte " << i << ": " << e;
  }
  write_bytes(path, good);
  EXPECT_EQ(db.load("every_type")->row_count(), 4u);
}

TEST_F(DatabaseTest, StoreLeavesNoTemporaryWhenItFailsAndKeepsTheOldTable) {
  Database db(dir_, true);
  db.store(every_type());
  const std::vector<char> before = bytes(dir_ / "every_type.table");
  // A table larger than the file-size limit: its write fails half-way.
  Table big = every_type();
  big.columns.resize(4);
  for (Column& c : big.columns) {
    c.int64s.resize(c.int64s.empty() ? 0 : 100000);
    c.doubles.resize(c.doubles.empty() ? 0 : 100000);
    c.int32s.resize(c.int32s.empty() ? 0 : 100000);
    c.nulls.resize(100000);
  }
  rlimit old_limit{};
  ::getrlimit(RLIMIT_FSIZE, &old_limit);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 100000;
  ::setrlimit(RLIMIT_FSIZE, &small);
  const std::string e = error_of([&] { db.store(big); });
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_NE(e.find("write failed"), std::string::npos) << e;
  EXPECT_EQ(files(), std::vector<std::string>{"every_type.table"});
  EXPECT_EQ(bytes(dir_ / "every_type.table"), before);
  EXPECT_EQ(db.load("every_type")->row_count(), 4u);
}

TEST(SortTable, SortsStablyWithNullsFirstAndRecordsTheOrder) {
  Table t = every_type();
  sort_table(t, {"i"});
  EXPECT_EQ(t.sort_order, std::vector<std::string>{"i"});
  EXPECT_EQ(t.columns[4].int64s, (std::vector<std::int64_t>{2, 1, 3, 4}));
  EXPECT_EQ(t.columns[0].nulls, (std::vector<std::uint8_t>{1, 0, 0, 0}));
  sort_table(t, {"s", "plain"});  // NULL, "" (code 0), "a,b", "\xc3\xa9t\xc3\xa9"
  EXPECT_EQ(t.columns[4].int64s, (std::vector<std::int64_t>{4, 2, 3, 1}));
  EXPECT_TRUE(is_sorted_by(t, {"s", "plain"}));
  EXPECT_FALSE(is_sorted_by(t, {"plain"}));
  EXPECT_NE(error_of([&] { sort_table(t, {"nope"}); }).find("no column 'nope'"), std::string::npos);
}


// NaN sorts after every number and with the other NaNs (PostgreSQL's order),
// so a table sorted on a double column holds each value, NaN too, in one run.
TEST(SortTable, NaNSortsLastAndTogether) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Table t;
  t.name = "d";
  Column c;
  c.name = "x";
  c.type = ColumnType::Double;
  c.doubles = {1.0, nan, -2.0, nan, 1.0};
  t.columns.push_back(c);
  EXPECT_FALSE(is_sorted_by(t, {"x"}));  // [1, NaN, 1] is not sorted
  sort_table(t, {"x"});
  EXPECT_EQ(t.columns[0].doubles[0], -2.0);
  EXPECT_EQ(t.columns[0].doubles[1], 1.0);
  EXPECT_EQ(t.columns[0].doubles[2], 1.0);
  EXPECT_TRUE(std::isnan(t.columns[0].doubles[3]) && std::isnan(t.columns[0].doubles[4]));
  EXPECT_TRUE(is_sorted_by(t, {"x"}));
}

}  // namespace
}  // namespace gpuolap::table
