#pragma once
// The operations of the server, in JSON: what the HTTP API and the line
// shell both answer. Each takes the request's fields as a JSON object and
// returns the answer; bad input throws InputError (400) or ApiError.
#include <nlohmann/json.hpp>
#include <string>

#include "gpuolap/formats.hpp"
#include "olap/cube_service.hpp"

namespace gpuolap::server {

struct Limits {
  uint64_t max_cells = 1000000;         // target cells of an area, base-cell writes of one write
  size_t max_paths = 100000;            // paths of one cell/values
  size_t max_blocksize = 100000;        // cells of one export page
  size_t max_body_bytes = size_t{64} << 20;  // of a request body (HTTP)
};

class CubeApi {
 public:
  CubeApi(olap::CubeService& service, Limits limits) : service_(service), limits_(limits) {}
  const Limits& limits() const { return limits_; }
  const Schema& schema() const { return service_.schema(); }

  nlohmann::json server_info() const;
  nlohmann::json cube_info() const;
  // {"dimension": name}
  nlohmann::json elements(const nlohmann::json& request) const;
  // {"path", "measure"?, "aggregate"?}
  nlohmann::json value(const nlohmann::json& request) const;
  // {"paths": [...], "measure"?, "aggregate"?}
  nlohmann::json values(const nlohmann::json& request) const;
  // {"measure", "aggregate"?, "area", "expand"?}: the answer as text, JSON
  // or CSV, written straight from the result (no JSON tree of the cells is
  // built), with the time each step took, which the HTTP route sends as
  // its Server-Timing header.
  struct AreaSteps {
    double parse_ms = 0, map_ms = 0, engine_ms = 0, write_ms = 0;
  };
  struct AreaText {
    std::string body;
    AreaSteps steps;
  };
  AreaText area_text(const nlohmann::json& request, AnswerFormat format) const;
  // the area's fields plus "blocksize"?, "path"? (resume after), "condition"?, "base_only"?
  nlohmann::json export_cells(const nlohmann::json& request) const;
  // {"path", "value", "measure"?, "mode"?, "splash"?}
  nlohmann::json replace(const nlohmann::json& request) const;
  // {"cells": [{"path", "value", ...}], "measure"?, "mode"?, "splash"?}: all or nothing
  nlohmann::json replace_bulk(const nlohmann::json& request) const;
  nlohmann::json save() const;

 private:
  struct AreaAnswer {
    AreaQuery query;
    AreaResult result;
    uint64_t target_cells;
    AreaSteps steps;  // all but write_ms
  };
  AreaAnswer answer_area(const nlohmann::json& request) const;

  olap::CubeService& service_;
  Limits limits_;
};

// The "cells" of an area, values or export answer as CSV: one column per
// dimension, then the value (named `value_column`).
std::string cells_csv(const Schema& schema, const nlohmann::json& answer, const std::string& value_column);
std::string elements_csv(const nlohmann::json& answer);

}  // namespace gpuolap::server
