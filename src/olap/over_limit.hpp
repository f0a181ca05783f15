#pragma once
// An operation refused because it would exceed a limit its caller set (the
// target cells of an area, the base cells a splash or a write may touch):
// bad input of its own kind, so that the server can answer it with 413 and
// the shell with its code.
#include <cstdint>
#include <string>
#include <utility>

#include "gpuolap/area_query.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap::olap {

class OverLimit : public InputError {
 public:
  OverLimit(std::string code, const std::string& detail) : InputError(detail), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// Target cells of an area (as a double: it may exceed 2^64).
double target_cells(const AreaQuery& query);
// Refuses (too_many_cells) an area of more than `max_cells` target cells.
void check_area_cells(const AreaQuery& query, uint64_t max_cells);

}  // namespace gpuolap::olap
