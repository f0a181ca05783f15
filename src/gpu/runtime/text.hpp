#pragma once
// Joins its arguments as text, numbers as a stream prints them: the messages
// and plan text of .cu files (fmt does not compile under nvcc).
#include <sstream>
#include <string>

namespace gpuolap::gpu {

template <class... Args>
std::string text(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}

}  // namespace gpuolap::gpu
