#pragma once
// A refused request with its HTTP status: 400 for bad input (any
// InputError), 401/403 for a missing or wrong token, 404 for an unknown
// endpoint, 413 for a body or an area over the limits.
#include <string>

#include "gpuolap/error.hpp"

namespace gpuolap::server {

class ApiError : public InputError {
 public:
  ApiError(int status, std::string code, const std::string& detail)
      : InputError(detail), status_(status), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string code_;
};

}  // namespace gpuolap::server
