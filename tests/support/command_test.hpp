#pragma once
// A test fixture that drives the gpuolap binary as a user would: each test
// gets a fresh folder of its own; run() returns the exit status and what
// the command printed; expect_input_error() checks a bad-input run (exit 2,
// stderr naming every fragment).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/test_path.hpp"

namespace gpuolap::testing {

struct Outcome {
  int status;
  std::string out, err;
};

class CommandTest : public ::testing::Test {
 protected:
  // `kind` names the tests' folders (fresh_test_path).
  explicit CommandTest(std::string kind) : kind_(std::move(kind)) {}

  void SetUp() override {
    dir_ = fresh_test_path(kind_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Outcome run(const std::string& args) {
    const std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    const std::string cmd = std::string(GPUOLAP_BINARY) + " " + args + " >" + out + " 2>" + err + " </dev/null";
    const int raw = std::system(cmd.c_str());
    return Outcome{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
  }
  static std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  // Writes `text` to a file of the test's folder; its path.
  std::string file(const std::string& name, const std::string& text) {
    const std::filesystem::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  void expect_input_error(const std::string& args, const std::vector<std::string>& fragments) {
    const Outcome r = run(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    for (const auto& f : fragments)
      EXPECT_NE(r.err.find(f), std::string::npos) << args << "\nwant: " << f << "\ngot: " << r.err;
  }

  std::filesystem::path dir_;

 private:
  std::string kind_;
};

}  // namespace gpuolap::testing
