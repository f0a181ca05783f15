#pragma once
// The line interface: one command a line on `in`, one JSON answer a line on
// `out`, so that scripts can drive a cube over a pipe. Commands:
//   query <area JSON>      cell/area          value <path>|<JSON>  cell/value
//   values <JSON>          cell/values        export <JSON>        cell/export
//   elements <dimension>   dimension/elements write <JSON>         cell/replace (replace_bulk with "cells")
//   info                   cube/info          save                 cube/save
//   exit | quit            end (as does the end of input)
// An error answers {"error": ..., "detail": ...} and the shell goes on.
#include <istream>
#include <ostream>

#include "cube_api.hpp"

namespace gpuolap::server {

// Returns the number of commands that failed.
int run_shell(CubeApi& api, std::istream& in, std::ostream& out);

// The commands, comma-separated, as --help and the unknown-command error list them.
const char* shell_commands();

}  // namespace gpuolap::server
