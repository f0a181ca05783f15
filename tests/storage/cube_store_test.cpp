#include "gpuolap/cube_store.hpp"

#include <gtest/gtest.h>

#include <sys/resource.h>

#include <csignal>
#include <fstream>

#include "gpuolap/error.hpp"
#include "gpuolap/generate.hpp"
#include "support/test_path.hpp"

namespace gpuolap {
namespace {

namespace fs = std::filesystem;

class CubeStore : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::gpuolap::testing::fresh_test_path("store_test");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string load_error() {
    try {
      load_store(dir_);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  }
  std::vector<char> bytes() {
    std::ifstream in(store_file(dir_), std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void write_bytes(const std::vector<char>& b) {
    std::ofstream out(store_file(dir_), std::ios::binary | std::ios::trunc);
    out.write(b.data(), static_cast<std::streamsize>(b.size()));
  }

  fs::path dir_;
};

TEST_F(CubeStore, RoundTripsSchemaAndFacts) {
  const GeneratedCube demo = generate_demo(7);
  save_store(dir_, demo.schema, demo.facts);
  const Cube cube = load_store(dir_);
  EXPECT_EQ(schema_to_json(cube.schema), schema_to_json(demo.schema));
  ASSERT_EQ(cube.facts.size(), demo.facts.size());
  for (size_t i = 0; i < demo.facts.size(); ++i) {
    ASSERT_EQ(cube.facts.keys()[i], demo.facts.keys()[i]);
    ASSERT_EQ(cube.facts.values(0)[i], demo.facts.values(0)[i]);
    ASSERT_EQ(cube.facts.values(1)[i], demo.facts.values(1)[i]);
  }
  EXPECT_FALSE(fs::exists(dir_ / "cube.gpuolap.tmp"));
}

TEST_F(CubeStore, DetectsTruncationCorruptionAndOtherVersions) {
  const GeneratedCube demo = generate_demo(7);
  save_store(dir_, demo.schema, demo.facts);
  const std::vector<char> good = bytes();

  std::vector<char> b = good;
  b.resize(b.size() - 100);
  write_bytes(b);
  EXPECT_NE(load_error().find("truncated"), std::string::npos) << load_error();

  b = good;
  b.resize(30);
  write_bytes(b);
  EXPECT_NE(load_error().find("truncated"), std::string::npos) << load_error();

  b = good;
  b[b.size() / 2] ^= 0x40;
  write_bytes(b);
  EXPECT_NE(load_error().find("corrupt: checksum mismatch"), std::string::npos) << load_error();

  b = good;
  b[8] = 99;  // version
  write_bytes(b);
  EXPECT_NE(load_error().find("store version 99; this gpuolap reads version 1"), std::string::npos) << load_error();

  b = good;
  b[0] = 'X';
  write_bytes(b);
  EXPECT_NE(load_error().find("not a gpuolap cube store"), std::string::npos);

  b = good;
  b.push_back(0);
  write_bytes(b);
  EXPECT_NE(load_error().find("corrupt"), std::string::npos);

  fs::remove_all(dir_);
  EXPECT_NE(load_error().find("no such cube store directory"), std::string::npos);
}

TEST_F(CubeStore, AFailedSaveLeavesTheOldStoreAsItWas) {
  const GeneratedCube demo = generate_demo(7);
  save_store(dir_, demo.schema, demo.facts);
  const std::vector<char> before = bytes();
  // A file-size limit makes the write of the new store fail half-way.
  rlimit old_limit{};
  ::getrlimit(RLIMIT_FSIZE, &old_limit);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old_limit;
  small.rlim_cur = 1000;
  ::setrlimit(RLIMIT_FSIZE, &small);
  EXPECT_THROW(save_store(dir_, demo.schema, demo.facts), InputError);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(bytes(), before);
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find("tmp"), std::string::npos) << entry.path();
}

TEST_F(CubeStore, RefusesKeysOutsideTheCubeEvenWithAValidChecksum) {
  const GeneratedCube demo = generate_demo(7);
  // Regions has 8 bases in 3 key bits; id 7 is valid, so use Products (12 bases, 4 bits): id 13 is not.
  const uint32_t ids[] = {0, 13, 0};
  FactTable bad(demo.schema.codec(), {demo.schema.codec().encode(ids)}, {{1.0}, {2.0}});
  save_store(dir_, demo.schema, bad);
  EXPECT_NE(load_error().find("corrupt: fact 0 has a key outside the cube"), std::string::npos) << load_error();
}

}  // namespace
}  // namespace gpuolap
