#pragma once
// Errors are part of the interface: bad input (the user's files, queries,
// options) is an InputError and makes the CLI exit 2; anything else that
// escapes is an internal error and exits 1.
#include <stdexcept>
#include <string>

namespace gpuolap {

class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace gpuolap
