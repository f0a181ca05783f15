#pragma once
// An operation refused because it would exceed a limit its caller set (the
// base cells a splash or a write may touch): bad input of its own kind, so
// that the server can answer it with 413 and the shell with its code.
#include <string>
#include <utility>

#include "gpuolap/error.hpp"

namespace gpuolap::olap {

class OverLimit : public InputError {
 public:
  OverLimit(std::string code, const std::string& detail) : InputError(detail), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

}  // namespace gpuolap::olap
