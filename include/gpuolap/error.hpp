#pragma once
// Errors are part of the interface: bad input (the user's files, queries,
// options) is an InputError and makes the CLI exit 2; anything else that
// escapes is an internal error and exits 1.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpuolap {

class InputError : public std::runtime_error {
 public:
  // A message past kMostBytes keeps its start (where: the file, the line,
  // the element) and its end, and says how much was left out: a bad field
  // of 100 MB echoed in a message must not make a message of 100 MB.
  static constexpr size_t kMostBytes = 4096;

  explicit InputError(const std::string& message) : std::runtime_error(clipped(message)) {}
  explicit InputError(const char* message) : InputError(std::string(message)) {}

 private:
  static std::string clipped(const std::string& m) {
    if (m.size() <= kMostBytes) return m;
    constexpr size_t kHead = 3072, kTail = 512;
    return m.substr(0, kHead) + " ... [" + std::to_string(m.size() - kHead - kTail) + " bytes left out] ... " +
           m.substr(m.size() - kTail);
  }
};

}  // namespace gpuolap
