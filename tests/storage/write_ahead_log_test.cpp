// The write-ahead log and recovery: logged writes survive reopening; a torn
// or corrupt tail is reported and none of it is applied; a log older than
// the snapshot is never applied twice.
#include "gpuolap/write_ahead_log.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "gpuolap/durable_cube.hpp"
#include "gpuolap/error.hpp"
#include "gpuolap/formats.hpp"
#include "support/test_path.hpp"

namespace gpuolap {
namespace {

namespace fs = std::filesystem;

const char* kSchema = R"({"name": "Shop", "dimensions": [
  {"name": "Product", "elements": [{"name": "All", "children": [{"name": "a"}, {"name": "b"}, {"name": "c"}]},
                                   {"name": "a"}, {"name": "b"}, {"name": "c"}]},
  {"name": "Year", "elements": [{"name": "2024"}, {"name": "2025"}]}],
  "measures": ["Sales", "Units"]})";

class WriteAheadLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::gpuolap::testing::fresh_test_path("wal_test");
    const Schema schema = parse_schema_json(kSchema, "schema");
    FactTable facts(schema.codec(), {key(schema, 0, 0)}, {{1.0}, {kNoValue}});
    save_store(dir_, schema, facts);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static uint64_t key(const Schema& s, uint32_t product, uint32_t year) {
    const uint32_t ids[] = {product, year};
    return s.codec().encode(ids);
  }
  // A record adding `v` to Sales of (product, 2025).
  static LogRecord add(const Schema& s, uint32_t product, double v) {
    LogRecord r;
    r.batches.push_back(WriteBatch{WriteMode::add, {key(s, product, 1)}, {{v}, {}}, {true, false}});
    return r;
  }
  // Sales of every filled cell, by key.
  static std::map<uint64_t, double> sales(const FactTable& t) {
    std::map<uint64_t, double> m;
    for (size_t i = 0; i < t.size(); ++i) m[t.keys()[i]] = t.values(0)[i];
    return m;
  }
  // Writes n records of add(product i % 3, i + 1), synced one by one;
  // returns the log's size after each.
  std::vector<uint64_t> write_records(int n) {
    DurableCube cube(dir_);
    std::vector<uint64_t> sizes;
    for (int i = 0; i < n; ++i) {
      LogRecord r = add(cube.schema(), i % 3, i + 1);
      cube.append(r);
      cube.sync();
      apply_record(cube.store(), r);
      sizes.push_back(cube.log_bytes());
    }
    return sizes;
  }
  std::string log_bytes() {
    std::ifstream in(log_file(dir_), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void set_log_bytes(const std::string& b) { std::ofstream(log_file(dir_), std::ios::binary | std::ios::trunc) << b; }

  fs::path dir_;
};

TEST_F(WriteAheadLogTest, LoggedWritesSurviveReopeningWithoutASnapshot) {
  const std::string snapshot_before = [&] {
    std::ifstream in(store_file(dir_), std::ios::binary);
    return std::string{std::istreambuf_iterator<char>(in), {}};
  }();
  write_records(5);  // adds 1, 4 to a; 2, 5 to b; 3 to c (2025)
  DurableCube cube(dir_);
  EXPECT_EQ(cube.recovery().records_replayed, 5u);
  EXPECT_EQ(cube.recovery().problem, "");
  const Schema& s = cube.schema();
  const std::map<uint64_t, double> want{{key(s, 0, 0), 1}, {key(s, 0, 1), 5}, {key(s, 1, 1), 7}, {key(s, 2, 1), 3}};
  EXPECT_EQ(sales(cube.store().table()), want);
  std::ifstream in(store_file(dir_), std::ios::binary);
  EXPECT_EQ(std::string({std::istreambuf_iterator<char>(in), {}}), snapshot_before);
  EXPECT_EQ(sales(load_cube_with_log(dir_).facts), want);
}

TEST_F(WriteAheadLogTest, ATornTailAtAnyByteIsReportedAndNothingOfItApplied) {
  const std::vector<uint64_t> sizes = write_records(3);
  const std::string full = log_bytes();
  ASSERT_EQ(full.size(), sizes.back());
  const Schema s = parse_schema_json(kSchema, "schema");
  // Records 1 and 2: a += 1, b += 2.
  const std::map<uint64_t, double> after_two{{key(s, 0, 0), 1}, {key(s, 0, 1), 1}, {key(s, 1, 1), 2}};
  for (uint64_t cut = sizes[1] + 1; cut < sizes[2]; ++cut) {
    set_log_bytes(full.substr(0, cut));
    std::string warning;
    EXPECT_EQ(sales(load_cube_with_log(dir_, {}, [&](const std::string& w) { warning = w; }).facts), after_two);
    EXPECT_NE(warning.find("record 3"), std::string::npos) << warning;
    DurableCube cube(dir_);
    EXPECT_EQ(cube.recovery().records_replayed, 2u);
    EXPECT_EQ(cube.recovery().bytes_dropped, cut - sizes[1]);
    EXPECT_NE(cube.recovery().problem.find("torn"), std::string::npos) << cube.recovery().problem;
    EXPECT_EQ(sales(cube.store().table()), after_two);
    EXPECT_EQ(fs::file_size(dir_ / "cube.wal.bad"), cut - sizes[1]);
    EXPECT_EQ(fs::file_size(log_file(dir_)), sizes[1]);  // the tail is cut off
  }
  // Appending after a repaired tail gives a log that reads back whole.
  write_records(1);
  DurableCube cube(dir_);
  EXPECT_EQ(cube.recovery().records_replayed, 3u);
  EXPECT_EQ(cube.recovery().problem, "");
}

// Recovery writes the bad tail into a new cube.wal.bad: a link planted
// under that name is replaced, and the file it points to is left alone
// (issue 24, item 4).
TEST_F(WriteAheadLogTest, RecoveryNeverWritesThroughALinkInTheStore) {
  const std::vector<uint64_t> sizes = write_records(2);
  set_log_bytes(log_bytes().substr(0, sizes[1] - 3));  // record 2 torn
  const fs::path victim = dir_.parent_path() / (dir_.filename().string() + "-victim");
  std::ofstream(victim) << "precious";
  fs::create_symlink(victim, dir_ / "cube.wal.bad");
  DurableCube cube(dir_);
  EXPECT_EQ(cube.recovery().records_replayed, 1u);
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
  EXPECT_FALSE(fs::is_symlink(dir_ / "cube.wal.bad"));
  EXPECT_EQ(fs::file_size(dir_ / "cube.wal.bad"), sizes[1] - 3 - sizes[0]);
  fs::remove(victim);
}

// A record whose checksum matches but whose values no live write could
// have stored (an infinity) is not replayed, nor anything after it
// (issue 24, item 5).
// An add that would overflow a double on replay is refused as a live write
// refuses it: its record is corrupt (issue 24, item 5).
TEST_F(WriteAheadLogTest, ARecordWhoseAddOverflowsIsNotReplayed) {
  {
    DurableCube cube(dir_);
    for (double v : {1e308, 1e308, 1.0}) {
      LogRecord r = add(cube.schema(), 2, v);
      cube.append(r);
    }
    cube.sync();
  }
  EXPECT_THROW(load_cube_with_log(dir_), InputError);  // a whole record follows the bad one
  EXPECT_THROW(DurableCube refused(dir_), InputError);
  std::string warning;
  const Cube read = load_cube_with_log(dir_, {}, [&](const std::string& w) { warning = w; },
                                       LogRecovery::discard_after_corruption);
  EXPECT_NE(warning.find("record 2 at byte"), std::string::npos) << warning;
  EXPECT_NE(warning.find("overflow a double"), std::string::npos) << warning;
  DurableCube cube(dir_, {}, {}, LogRecovery::discard_after_corruption);
  EXPECT_EQ(cube.recovery().records_replayed, 1u);
  EXPECT_EQ(cube.recovery().records_discarded, 1u);
  const Schema& s = cube.schema();
  EXPECT_EQ(sales(cube.store().table()), (std::map<uint64_t, double>{{key(s, 0, 0), 1}, {key(s, 2, 1), 1e308}}));
  EXPECT_EQ(sales(read.facts), sales(cube.store().table()));
}

TEST_F(WriteAheadLogTest, ARecordCarryingAnInfinityIsNotReplayed) {
  write_records(2);
  {
    DurableCube cube(dir_);
    LogRecord r = add(cube.schema(), 2, std::numeric_limits<double>::infinity());
    cube.append(r);
    LogRecord after = add(cube.schema(), 2, 1);
    cube.append(after);
    cube.sync();
  }
  // A whole record follows it: refused as corruption, then discarded when told to.
  EXPECT_THROW(DurableCube refused(dir_), InputError);
  DurableCube cube(dir_, {}, {}, LogRecovery::discard_after_corruption);
  EXPECT_EQ(cube.recovery().records_replayed, 2u);
  EXPECT_NE(cube.recovery().problem.find("record 3 at byte"), std::string::npos) << cube.recovery().problem;
  EXPECT_NE(cube.recovery().problem.find("the value inf"), std::string::npos) << cube.recovery().problem;
  for (double v : cube.store().table().values(0)) EXPECT_TRUE(std::isfinite(v));
}

// Corruption inside the log, with whole records after it, would lose
// acknowledged writes if the log were cut there: opening refuses and
// changes nothing, unless told to discard them (issue 24, item 3).
TEST_F(WriteAheadLogTest, ACorruptRecordBeforeWholeOnesRefusesToOpenUnlessToldToDiscard) {
  const std::vector<uint64_t> sizes = write_records(4);
  std::string bytes = log_bytes();
  bytes[sizes[1] + 20] ^= 0x40;  // inside record 3
  set_log_bytes(bytes);
  EXPECT_EQ(read_log(log_file(dir_), parse_schema_json(kSchema, "schema")).records_after_problem, 1u);
  try {
    DurableCube refused(dir_);
    ADD_FAILURE() << "opened";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("record 3 at byte"), std::string::npos) << what;
    EXPECT_NE(what.find("1 whole records follow it"), std::string::npos) << what;
    EXPECT_NE(what.find("--recovery discard-after-corruption"), std::string::npos) << what;
  }
  EXPECT_THROW(load_cube_with_log(dir_), InputError);
  EXPECT_EQ(log_bytes(), bytes);  // nothing changed
  EXPECT_FALSE(fs::exists(dir_ / "cube.wal.bad"));
  DurableCube cube(dir_, {}, {}, LogRecovery::discard_after_corruption);
  EXPECT_EQ(cube.recovery().records_replayed, 2u);
  EXPECT_EQ(cube.recovery().records_discarded, 1u);
  EXPECT_NE(cube.recovery().problem.find("record 3 at byte"), std::string::npos) << cube.recovery().problem;
  EXPECT_NE(cube.recovery().problem.find("checksum"), std::string::npos) << cube.recovery().problem;
  EXPECT_EQ(cube.recovery().bytes_dropped, sizes[3] - sizes[1]);
  // The discarded records are kept in a file of their own, which no later repair replaces.
  std::vector<fs::path> kept;
  for (const auto& entry : fs::directory_iterator(dir_))
    if (entry.path().filename().string().rfind("cube.wal.discarded-", 0) == 0) kept.push_back(entry.path());
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(fs::file_size(kept[0]), sizes[3] - sizes[1]);
}

// A corrupt last record hides nothing: it is cut off like a torn tail.
// Records appended together before one sync reach the disk in any order
// when the power is cut before it: a record lost with whole ones of its
// own group after it is a torn tail (none of them was acknowledged), while
// a record lost before a later group's records hides acknowledged writes
// (issue 24, power loss).
TEST_F(WriteAheadLogTest, AGroupCommitCutShortIsATornTailNotCorruption) {
  write_records(2);  // synced one by one: acknowledged
  std::vector<uint64_t> sizes;
  {
    DurableCube cube(dir_);
    for (int i = 0; i < 3; ++i) {  // one group: three appends, one sync
      LogRecord r = add(cube.schema(), 2, 10 + i);
      cube.append(r);
      sizes.push_back(cube.log_bytes());
    }
    cube.sync();
  }
  const std::string full = log_bytes();
  const uint64_t group_start = sizes[0] - (sizes[1] - sizes[0]);  // the records are the same size
  const Schema s = parse_schema_json(kSchema, "schema");
  const std::map<uint64_t, double> after_two{{key(s, 0, 0), 1}, {key(s, 0, 1), 1}, {key(s, 1, 1), 2}};
  // The group's first record never reached the disk, the two after it did.
  std::string lost_first = full;
  std::fill(lost_first.begin() + static_cast<std::ptrdiff_t>(group_start),
            lost_first.begin() + static_cast<std::ptrdiff_t>(sizes[0]), '\0');
  set_log_bytes(lost_first);
  EXPECT_EQ(sales(load_cube_with_log(dir_).facts), after_two);
  {
    DurableCube cube(dir_);
    EXPECT_EQ(cube.recovery().records_replayed, 2u);
    EXPECT_EQ(cube.recovery().records_discarded, 0u);
    EXPECT_NE(cube.recovery().problem.find("group commit cut short"), std::string::npos) << cube.recovery().problem;
  }
  // A record of the group acknowledged before it (record 2) lost, the group whole after it: refused.
  std::string lost_acknowledged = full;
  std::fill(lost_acknowledged.begin() + static_cast<std::ptrdiff_t>(group_start) - 10,
            lost_acknowledged.begin() + static_cast<std::ptrdiff_t>(group_start), '\0');
  set_log_bytes(lost_acknowledged);
  EXPECT_EQ(read_log(log_file(dir_), s).records_after_problem, 3u);
  EXPECT_THROW(load_cube_with_log(dir_), InputError);
  EXPECT_THROW(DurableCube refused(dir_), InputError);
}

// A whole record that is wrong (not what a power cut leaves) before whole
// records of its own group is corruption all the same.
TEST_F(WriteAheadLogTest, AWholeButWrongRecordBeforeItsGroupIsCorruption) {
  {
    DurableCube cube(dir_);
    for (int i = 0; i < 2; ++i) {
      LogRecord r = add(cube.schema(), 0, 1 + i);
      cube.append(r);
    }
    cube.sync();
  }
  std::string bytes = log_bytes();
  // Record 1 claims sequence 9, its checksum made to match.
  constexpr size_t kFirst = 32;
  uint32_t length;
  std::memcpy(&length, bytes.data() + kFirst, 4);
  const uint64_t nine = 9;
  std::memcpy(bytes.data() + kFirst + 8, &nine, 8);
  const uint64_t checksum = XXH3_64bits(bytes.data() + kFirst, 16 + length);
  std::memcpy(bytes.data() + kFirst + 16 + length, &checksum, 8);
  set_log_bytes(bytes);
  EXPECT_EQ(read_log(log_file(dir_), parse_schema_json(kSchema, "schema")).records_after_problem, 1u);
  EXPECT_THROW(load_cube_with_log(dir_), InputError);
}

// A log of version 1 (before records said their place in a group) is read
// as it was, and appended to in its own version.
TEST_F(WriteAheadLogTest, AVersionOneLogIsReadAndAppendedToAsVersionOne) {
  write_records(2);
  std::string bytes = log_bytes();
  const uint32_t one = 1;
  std::memcpy(bytes.data() + 8, &one, 4);
  const uint64_t header_checksum = XXH3_64bits(bytes.data(), 24);
  std::memcpy(bytes.data() + 24, &header_checksum, 8);
  set_log_bytes(bytes);
  {
    DurableCube cube(dir_);
    EXPECT_EQ(cube.recovery().records_replayed, 2u);
    for (int i = 0; i < 2; ++i) {  // a group of two
      LogRecord r = add(cube.schema(), 2, 5);
      cube.append(r);
    }
    cube.sync();
  }
  const std::string after = log_bytes();
  uint32_t version, kind;
  std::memcpy(&version, after.data() + 8, 4);
  EXPECT_EQ(version, 1u);
  std::memcpy(&kind, after.data() + after.size() - (after.size() - bytes.size()) / 2 + 4, 4);
  EXPECT_EQ(kind, 1u);  // the second of its group, written as version 1 writes it
  EXPECT_EQ(read_log(log_file(dir_), parse_schema_json(kSchema, "schema")).records.size(), 4u);
}

TEST_F(WriteAheadLogTest, ACorruptLastRecordIsCutOffLikeATornTail) {
  const std::vector<uint64_t> sizes = write_records(3);
  std::string bytes = log_bytes();
  bytes[sizes[1] + 20] ^= 0x40;  // inside record 3, the last
  set_log_bytes(bytes);
  DurableCube cube(dir_);
  EXPECT_EQ(cube.recovery().records_replayed, 2u);
  EXPECT_EQ(cube.recovery().records_discarded, 0u);
  EXPECT_EQ(cube.recovery().bytes_dropped, sizes[2] - sizes[1]);
}

TEST_F(WriteAheadLogTest, ARecordThatDoesNotFitTheCubeIsCorrupt) {
  // A well-formed, checksummed record whose key names a base id the cube
  // lacks: product 3 of 3.
  {
    DurableCube cube(dir_);
    LogRecord r = add(cube.schema(), 3, 1);
    cube.append(r);
    cube.sync();
  }
  DurableCube cube(dir_);
  EXPECT_EQ(cube.recovery().records_replayed, 0u);
  EXPECT_NE(cube.recovery().problem.find("outside the cube"), std::string::npos) << cube.recovery().problem;
}

TEST_F(WriteAheadLogTest, ALogOlderThanTheSnapshotIsNotAppliedAgain) {
  write_records(3);
  const std::string old_log = log_bytes();
  {
    DurableCube cube(dir_);
    cube.checkpoint();
    EXPECT_LT(cube.log_bytes(), 64u);
  }
  // A crash between the snapshot's rename and the new log's leaves the old log.
  set_log_bytes(old_log);
  const Schema s = parse_schema_json(kSchema, "schema");
  const std::map<uint64_t, double> want{{key(s, 0, 0), 1}, {key(s, 0, 1), 1}, {key(s, 1, 1), 2}, {key(s, 2, 1), 3}};
  EXPECT_EQ(sales(load_cube_with_log(dir_).facts), want);
  {
    DurableCube cube(dir_);
    EXPECT_EQ(cube.recovery().records_replayed, 0u);
    EXPECT_NE(cube.recovery().problem.find("predates the snapshot"), std::string::npos);
    EXPECT_EQ(sales(cube.store().table()), want);
  }
  // Stale with a torn tail too: still reported as stale, not as records replayed.
  set_log_bytes(old_log + "torn");
  DurableCube cube(dir_);
  EXPECT_EQ(cube.recovery().records_replayed, 0u);
  EXPECT_NE(cube.recovery().problem.find("predates the snapshot"), std::string::npos) << cube.recovery().problem;
  EXPECT_EQ(cube.recovery().problem.find("records replayed"), std::string::npos) << cube.recovery().problem;
  EXPECT_EQ(sales(cube.store().table()), want);
}

TEST_F(WriteAheadLogTest, TemporaryFilesOfACheckpointCutShortAreRemovedOnOpening) {
  std::ofstream(dir_ / "cube.gpuolap.tmp-Ab12Cd") << "half a snapshot";
  std::ofstream(dir_ / "cube.wal.tmp") << "half a log header";
  std::ofstream(dir_ / "notes.txt") << "a person's file";
  DurableCube cube(dir_);
  EXPECT_FALSE(fs::exists(dir_ / "cube.gpuolap.tmp-Ab12Cd"));
  EXPECT_FALSE(fs::exists(dir_ / "cube.wal.tmp"));
  EXPECT_TRUE(fs::exists(dir_ / "notes.txt"));
}

TEST_F(WriteAheadLogTest, BatchesOfEveryModeReplayAsTheyWereApplied) {
  std::map<uint64_t, double> live;
  {
    DurableCube cube(dir_);
    const Schema& s = cube.schema();
    LogRecord r;
    // set a and b in 2024, add to a twice (in one batch), delete c... then a large batch.
    r.batches.push_back(WriteBatch{WriteMode::set, {key(s, 0, 0), key(s, 1, 0)}, {{10, 20}, {1, kNoValue}}, {true, true}});
    r.batches.push_back(WriteBatch{WriteMode::add, {key(s, 0, 0), key(s, 0, 0)}, {{1, 2}, {}}, {true, false}});
    r.batches.push_back(WriteBatch{WriteMode::remove, {key(s, 1, 0)}, {{}, {}}, {false, false}});
    // A batch of no rows (a delete splash over empty cells logs one).
    r.batches.push_back(WriteBatch{WriteMode::remove, {}, {{}, {}}, {false, false}});
    r.batches.push_back(WriteBatch{WriteMode::set, {}, {{}, {}}, {true, false}});
    WriteBatch big{WriteMode::add, {}, {{}, {}}, {true, false}};
    for (int i = 0; i < 10000; ++i) {
      big.keys.push_back(key(s, static_cast<uint32_t>(i % 3), 1));
      big.values[0].push_back(0.5);
    }
    r.batches.push_back(big);
    cube.append(r);
    cube.sync();
    apply_record(cube.store(), r);
    live = sales(cube.store().table());
  }
  const Schema s = parse_schema_json(kSchema, "schema");
  EXPECT_EQ(live.at(key(s, 0, 0)), 13);
  EXPECT_EQ(live.at(key(s, 2, 1)), 3333 * 0.5);
  EXPECT_EQ(live.count(key(s, 1, 0)), 0u);
  EXPECT_EQ(sales(DurableCube(dir_).store().table()), live);
}

TEST_F(WriteAheadLogTest, ASecondWriterWaitsOrGivesUp) {
  DurableCube first(dir_);
  bool told = false;
  EXPECT_THROW(DurableCube(dir_, {}, [&] {
                 told = true;
                 throw InputError("busy");
               }),
               InputError);
  EXPECT_TRUE(told);
}

}  // namespace
}  // namespace gpuolap
