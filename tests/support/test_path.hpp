#pragma once
// Where a test keeps its files: <tmp>/gpuolap_<kind>_<pid>_<test name>,
// emptied first. The pid keeps parallel ctest runs apart; the test name keeps
// the tests of one binary apart.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

namespace gpuolap::testing {

inline std::filesystem::path fresh_test_path(const std::string& kind) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("gpuolap_" + kind + "_" + std::to_string(::getpid()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(path);
  return path;
}

}  // namespace gpuolap::testing
