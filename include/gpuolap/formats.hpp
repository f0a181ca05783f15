#pragma once
// The portable formats: schema and query JSON, facts and result CSV.
// Every reader throws InputError naming the file, line or element at fault.
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "gpuolap/area_query.hpp"
#include "gpuolap/fact_table.hpp"
#include "gpuolap/progress.hpp"
#include "gpuolap/schema.hpp"

namespace gpuolap {

// ---- schema JSON ----
Schema read_schema_file(const std::filesystem::path& path);
Schema parse_schema_json(const std::string& text, const std::string& where);
std::string schema_to_json(const Schema& schema);

// ---- facts CSV ----
// The rows of a facts file, in file order, with their line numbers. With
// parse_values false (deletes) the measure columns are not read.
// Columnar: 8 bytes of key, 8 per measure and 8 of line number a row.
struct FactRows {
  std::vector<uint64_t> keys;
  std::vector<std::vector<double>> values;  // per measure; NaN for an empty field
  std::vector<bool> present;                // per measure: named in the header
  std::vector<uint64_t> lines;

  size_t size() const { return keys.size(); }
};
FactRows read_facts_csv(const Schema& schema, const std::filesystem::path& path,
                        bool parse_values, const ProgressFn& progress = {});
FactRows parse_facts_csv(const Schema& schema, const std::string& text, const std::string& where,
                         bool parse_values, const ProgressFn& progress = {});
// Builds the sorted fact table of a facts file given to `create`; the same
// cell twice is an InputError naming both lines.
FactTable build_fact_table(const Schema& schema, const FactRows& rows, const std::string& where);
// Checks a `write --mode set` file holds no cell twice.
void check_unique_cells(const FactRows& rows, const std::string& where);
void write_facts_csv(const Schema& schema, const FactTable& facts, std::ostream& out,
                     const ProgressFn& progress = {});

// ---- query JSON ----
AreaQuery read_query_file(const Schema& schema, const std::filesystem::path& path);
AreaQuery parse_query_json(const Schema& schema, const std::string& text, const std::string& where);
// The same from a JSON value already parsed (the server's request body).
AreaQuery parse_query_object(const Schema& schema, const nlohmann::json& doc, const std::string& where);

// ---- an area's answer ----
// CSV: the dimension names and "<aggregate>(<measure>)", then one row per
// non-empty target cell in area order. JSON: {"aggregate", "cells": [{"path":
// [names], "value"}], "dimensions", "measure", "target_cells"} (the
// server's /cell/area). Numbers are the shortest text that reads back to
// the same double; counts are whole numbers.
enum class AnswerFormat { json, csv };
void append_area_answer(std::string& out, const Schema& schema, const AreaQuery& query, const AreaResult& result,
                        uint64_t target_cells, AnswerFormat format);
void write_result_csv(const Schema& schema, const AreaQuery& query, const AreaResult& result, std::ostream& out);
// "<aggregate>(<measure>)": the value column's name.
std::string area_value_column(const Schema& schema, const AreaQuery& query);

// Quotes a CSV field when RFC 4180 requires it.
std::string csv_field(const std::string& text);
std::string read_text_file(const std::filesystem::path& path);

}  // namespace gpuolap
