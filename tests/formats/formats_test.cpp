#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "gpuolap/error.hpp"
#include "support/input_error.hpp"
#include "gpuolap/formats.hpp"

namespace gpuolap {
namespace {

const char* kSchema = R"({"name": "Sales", "dimensions": [
  {"name": "Products", "elements": [
    {"name": "Bikes", "children": [{"name": "Bike A", "weight": 1.0}, {"name": "Bike, \"B\""}]},
    {"name": "Bike A"}, {"name": "Bike, \"B\""}]},
  {"name": "Years", "elements": [{"name": "2024"}, {"name": "2025"}]}],
  "measures": ["Revenue", "Units"]})";

using testing::error_of;

TEST(SchemaJson, ReadsChildrenDeclaredBeforeTheirElementsAndRoundTrips) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  EXPECT_EQ(s.name(), "Sales");
  ASSERT_EQ(s.dimension_count(), 2u);
  EXPECT_EQ(s.dimension(0).base_count(), 2u);
  EXPECT_EQ(s.measures(), (std::vector<std::string>{"Revenue", "Units"}));
  const Schema again = parse_schema_json(schema_to_json(s), "again");
  EXPECT_EQ(schema_to_json(again), schema_to_json(s));
}

TEST(SchemaJson, ErrorsNameTheFileAndTheElement) {
  EXPECT_NE(error_of([] { parse_schema_json("{\"name\": ", "bad.json"); }).find("bad.json: malformed JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [{"name": "a"}, {"name": "a"}]}],
                                   "measures": ["V"]})", "dup.json");
            }).find("dup.json: dimension 'D': element 'a' is declared twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [{"name": "p", "children": [{"name": "q"}]}]}],
                                   "measures": ["V"]})", "c.json");
            }).find("c.json: dimension 'D': element 'p' has child 'q', which does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [{"name": "a"}]}], "measures": ["D"]})",
                                "m.json");
            }).find("measure 'D'"),
            std::string::npos);
}

TEST(FactsCsv, ReadsQuotedFieldsAnyColumnOrderAndEmptyValues) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const std::string csv =
      "Units,Years,Products\r\n"
      "3,2024,Bike A\r\n"
      ",2025,\"Bike, \"\"B\"\"\"\r\n"
      "+1.5e1,2025,Bike A\r\n";
  const FactRows rows = parse_facts_csv(s, csv, "f.csv", true);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows.lines, (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(rows.values[1][0], 3.0);
  EXPECT_FALSE(rows.present[0]);  // Revenue is not in the header
  EXPECT_TRUE(rows.present[1]);
  EXPECT_FALSE(has_value(rows.values[1][1]));
  EXPECT_EQ(rows.values[1][2], 15.0);
  const uint32_t ids[] = {1, 1};
  EXPECT_EQ(rows.keys[1], s.codec().encode(ids));

  // A row with no value at all is not a filled cell.
  const FactTable t = build_fact_table(s, rows, "f.csv");
  EXPECT_EQ(t.size(), 2u);
}

TEST(FactsCsv, CountsLinesInsideQuotedFields) {
  const Schema s = parse_schema_json(
      R"({"dimensions": [{"name": "D", "elements": [{"name": "a\nb"}, {"name": "c"}]}], "measures": ["V"]})", "s");
  const std::string e = error_of([&] { parse_facts_csv(s, "D,V\n\"a\nb\",1\nc,x\n", "f.csv", true); });
  EXPECT_NE(e.find("f.csv: line 4: measure 'V': 'x' is not a number"), std::string::npos) << e;
}

TEST(FactsCsv, ErrorsNameFileLineAndElement) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  auto err = [&](const std::string& csv) { return error_of([&] { parse_facts_csv(s, csv, "f.csv", true); }); };
  EXPECT_NE(err("Products,Years,Units\nBike C,2024,1\n").find("f.csv: line 2: dimension 'Products' has no element 'Bike C'"),
            std::string::npos);
  EXPECT_NE(err("Products,Years,Units\nBikes,2024,1\n").find("line 2: dimension 'Products': element 'Bikes' is consolidated"),
            std::string::npos);
  EXPECT_NE(err("Products,Years,Units\nBike A,2024,nan\n").find("line 2: measure 'Units': 'nan' is not a finite number"),
            std::string::npos);
  EXPECT_NE(err("Products,Years,Units\nBike A,2024,inf\n").find("not a finite number"), std::string::npos);
  EXPECT_NE(err("Products,Years,Units\nBike A,2024,12abc\n").find("'12abc' is not a number"), std::string::npos);
  EXPECT_NE(err("Products,Years,Units\nBike A,2024\n").find("line 2: 2 fields, the header has 3"), std::string::npos);
  EXPECT_NE(err("Products,Units\nBike A,1\n").find("line 1: the header has no column for dimension 'Years'"),
            std::string::npos);
  EXPECT_NE(err("Products,Years,Colour\n").find("column 'Colour' is neither"), std::string::npos);
  EXPECT_NE(err("Products,Years,Units\n\"Bike A,2024,1\n").find("line 2: unterminated quoted field"),
            std::string::npos);
  EXPECT_NE(err("").find("f.csv: line 1: the header is missing"), std::string::npos);
}

// A huge bad field is not echoed whole (issue 24, item 7): the message
// keeps where it is and what is wrong, and says how much it left out.
TEST(FactsCsv, AHugeBadFieldMakesAShortMessage) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const std::string csv = "Products,Years,Revenue\n" + std::string(1 << 20, 'x') + ",2024,1\n";
  const std::string message = error_of([&] { parse_facts_csv(s, csv, "f.csv", true); });
  EXPECT_LE(message.size(), InputError::kMostBytes + 64);
  EXPECT_NE(message.find("f.csv: line 2: dimension 'Products' has no element 'xxx"), std::string::npos);
  EXPECT_NE(message.find("bytes left out"), std::string::npos);
}

TEST(FactsCsv, TheSameCellTwiceNamesBothLines) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const FactRows rows = parse_facts_csv(s, "Products,Years,Units\nBike A,2024,1\nBike A,2025,1\nBike A,2024,2\n", "f.csv", true);
  const std::string e = error_of([&] { build_fact_table(s, rows, "f.csv"); });
  EXPECT_NE(e.find("f.csv: lines 2 and 4 give the same base cell"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { check_unique_cells(rows, "f.csv"); }).find("lines 2 and 4"), std::string::npos);
}

TEST(FactsCsv, WritesWhatItReads) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const FactTable t = build_fact_table(
      s, parse_facts_csv(s, "Products,Years,Revenue,Units\nBike A,2025,0.1,\n\"Bike, \"\"B\"\"\",2024,-3,7\n", "f", true), "f");
  std::ostringstream out;
  write_facts_csv(s, t, out);
  EXPECT_EQ(out.str(), "Products,Years,Revenue,Units\nBike A,2025,0.10000000000000001,\n\"Bike, \"\"B\"\"\",2024,-3,7\n");
  const FactTable again = build_fact_table(s, parse_facts_csv(s, out.str(), "again", true), "again");
  EXPECT_EQ(std::vector<uint64_t>(again.keys().begin(), again.keys().end()),
            std::vector<uint64_t>(t.keys().begin(), t.keys().end()));
  EXPECT_EQ(again.values(0)[0], 0.1);
}

TEST(QueryJson, ReadsListsAndStar) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const AreaQuery q = parse_query_json(
      s, R"({"measure": "Units", "aggregate": "max", "area": {"Years": "*", "Products": ["Bike A", "Bikes"]}})", "q");
  EXPECT_EQ(q.measure, 1u);
  EXPECT_EQ(q.aggregate, Aggregate::max);
  EXPECT_EQ(q.area[0], (std::vector<ElementId>{1, 0}));
  EXPECT_EQ(q.area[1], (std::vector<ElementId>{0, 1}));
}

// As the README says, and as the server's cell/value does: without
// "measure", the first measure (issue 24, item 8; issue 25).
TEST(QueryJson, MeasureDefaultsToTheFirst) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const AreaQuery q = parse_query_json(s, R"({"area": {"Products": ["Bikes"], "Years": "*"}})", "q.json");
  EXPECT_EQ(q.measure, 0u);
  EXPECT_EQ(parse_query_json(s, R"({"measure": "Units", "area": {"Products": "*", "Years": "*"}})", "q.json").measure, 1u);
  EXPECT_NE(error_of([&] { parse_query_json(s, R"({"measure": 1, "area": {"Products": "*", "Years": "*"}})", "q.json"); })
                .find("\"measure\" must name a measure"),
            std::string::npos);
}

TEST(QueryJson, ErrorsNameTheFileAndWhatIsWrong) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  auto err = [&](const std::string& q) { return error_of([&] { parse_query_json(s, q, "q.json"); }); };
  EXPECT_NE(err(R"({"measure": "Units", "area": {"Years": "*"}})").find("q.json: area: dimension 'Products' is missing"),
            std::string::npos);
  EXPECT_NE(err(R"({"measure": "Units", "area": {"Years": "*", "Products": [], "Colour": "*"}})").find("no dimension 'Colour'"),
            std::string::npos);
  EXPECT_NE(err(R"({"measure": "Units", "area": {"Years": "*", "Products": []}})").find("dimension 'Products': the element list is empty"),
            std::string::npos);
  EXPECT_NE(err(R"({"measure": "Units", "area": {"Years": ["1999"], "Products": "*"}})").find("dimension 'Years' has no element '1999'"),
            std::string::npos);
  EXPECT_NE(err(R"({"measure": "Units", "aggregate": "median", "area": {"Years": "*", "Products": "*"}})").find("unknown aggregate 'median'"),
            std::string::npos);
  EXPECT_NE(err(R"({"measure": "Profit", "area": {"Years": "*", "Products": "*"}})").find("no measure 'Profit'"),
            std::string::npos);
  EXPECT_NE(err(R"({"measure": "Units", "area": )").find("q.json: malformed JSON"), std::string::npos);
}

TEST(SchemaJson, RefusesUnknownFieldsAndNumbersBeyondADouble) {
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [{"name": "a"},
                                   {"name": "p", "children": [{"name": "a", "weigth": 2}]}]}], "measures": ["V"]})", "w.json");
            }).find("w.json: dimension 'D': element 'p': child 'a': unknown field \"weigth\""),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [{"name": "a", "childs": []}]}], "measures": ["V"]})", "c.json");
            }).find("unknown field \"childs\""),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "elements": [{"name": "a"},
                                   {"name": "p", "children": [{"name": "a", "weight": 1e400}]}]}], "measures": ["V"]})", "big.json");
            }).find("big.json: malformed JSON"),
            std::string::npos);
}

TEST(FactsCsv, SkipsAByteOrderMarkAndRefusesOddNumbers) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  EXPECT_EQ(parse_facts_csv(s, "\xEF\xBB\xBFProducts,Years,Units\nBike A,2024,1\n", "bom.csv", true).size(), 1u);
  auto err = [&](const std::string& v) {
    return error_of([&] { parse_facts_csv(s, "Products,Years,Units\nBike A,2024," + v + "\n", "f.csv", true); });
  };
  EXPECT_NE(err("+-5").find("'+-5' is not a number"), std::string::npos);
  EXPECT_NE(err("1e400").find("'1e400' is out of the range of a double"), std::string::npos);
  EXPECT_EQ(err("-0"), "no error");
}

TEST(QueryJson, NumbersBeyondADoubleAreMalformedInput) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  EXPECT_NE(error_of([&] { parse_query_json(s, R"({"measure": "Units", "x": 1e400})", "q.json"); }).find("q.json: malformed JSON"),
            std::string::npos);
}

TEST(QueryJson, AKeyTwiceInOneObjectIsMalformed) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  EXPECT_NE(error_of([&] {
              parse_query_json(s, R"({"measure": "Units", "area": {"Years": "*", "Years": ["2024"], "Products": "*"}})", "q.json");
            }).find("q.json: malformed JSON: key \"Years\" appears twice"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_schema_json(R"({"dimensions": [{"name": "D", "name": "E", "elements": [{"name": "a"}]}], "measures": ["V"]})", "s.json");
            }).find("key \"name\" appears twice"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuolap

namespace gpuolap {
namespace {

// The area answer written straight as text: names escaped once per element
// (quotes and commas in them), the cells in target order, every number
// reading back to the same double, counts whole.
TEST(AreaAnswer, JsonAndCsvReadBackExactly) {
  const Schema s = parse_schema_json(kSchema, "s.json");
  const AreaQuery q = parse_query_json(
      s, R"({"measure": "Revenue", "area": {"Products": ["Bikes", "Bike, \"B\""], "Years": ["2024", "2025"]}})", "q.json");
  const AreaResult r{{0, 1, 3}, {0.1, 830.0, -1e300}};
  std::string json_text;
  append_area_answer(json_text, s, q, r, 4, AnswerFormat::json);
  const nlohmann::json j = nlohmann::json::parse(json_text);
  EXPECT_EQ(j, nlohmann::json::parse(R"({"aggregate": "sum", "dimensions": ["Products", "Years"], "measure": "Revenue",
      "target_cells": 4, "cells": [{"path": ["Bikes", "2024"], "value": 0.1}, {"path": ["Bikes", "2025"], "value": 830.0},
      {"path": ["Bike, \"B\"", "2025"], "value": -1e300}]})"));
  EXPECT_TRUE(j["cells"][1]["value"].is_number_float()) << "830 must stay a double in JSON: " << json_text;
  std::string csv;
  append_area_answer(csv, s, q, r, 4, AnswerFormat::csv);
  EXPECT_EQ(csv, "Products,Years,sum(Revenue)\nBikes,2024,0.1\nBikes,2025,830\n\"Bike, \"\"B\"\"\",2025,-1e+300\n");
  AreaQuery counts = q;
  counts.aggregate = Aggregate::count;
  std::string count_csv;
  append_area_answer(count_csv, s, counts, AreaResult{{2}, {7}}, 4, AnswerFormat::csv);
  EXPECT_EQ(count_csv, "Products,Years,count(Revenue)\n\"Bike, \"\"B\"\"\",2024,7\n");
  // A sum past the largest double: null in JSON (which has no inf), as a
  // JSON tree writes it; the text in CSV.
  std::string inf_json;
  append_area_answer(inf_json, s, q, AreaResult{{0}, {HUGE_VAL}}, 4, AnswerFormat::json);
  EXPECT_TRUE(nlohmann::json::parse(inf_json)["cells"][0]["value"].is_null()) << inf_json;
  std::string inf_csv;
  append_area_answer(inf_csv, s, q, AreaResult{{0}, {-HUGE_VAL}}, 4, AnswerFormat::csv);
  EXPECT_EQ(inf_csv, "Products,Years,sum(Revenue)\nBikes,2024,-inf\n");
  // Shortest text, read back exactly, for awkward doubles.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    const double v = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 200) - 100) * (i % 2 ? -1 : 1);
    std::string text;
    append_area_answer(text, s, q, AreaResult{{0}, {v}}, 4, AnswerFormat::json);
    EXPECT_EQ(nlohmann::json::parse(text)["cells"][0]["value"].get<double>(), v) << text;
    std::string line;
    append_area_answer(line, s, q, AreaResult{{0}, {v}}, 4, AnswerFormat::csv);
    const std::string field = line.substr(line.rfind(',') + 1);
    EXPECT_EQ(std::stod(field), v) << line;
  }
}

// The answer walks the ascending targets as an odometer, not by dividing
// each: every cell's path must still be target_positions' path, for steps
// of one, steps that carry over several digits, and long jumps.
TEST(AreaAnswer, PathsFollowTheTargetNumbersAcrossCarries) {
  std::string schema_text = R"({"name": "Grid", "measures": ["V"], "dimensions": [)";
  const int sizes[] = {5, 7, 3};
  for (int d = 0; d < 3; ++d) {
    schema_text += (d ? "," : "") + fmt::format(R"({{"name": "D{}", "elements": [)", d);
    for (int e = 0; e < sizes[d]; ++e) schema_text += (e ? "," : "") + fmt::format(R"({{"name": "d{}e{}"}})", d, e);
    schema_text += "]}";
  }
  schema_text += "]}";
  const Schema s = parse_schema_json(schema_text, "grid.json");
  const AreaQuery q = parse_query_json(s, R"({"measure": "V", "area": {"D0": "*", "D1": "*", "D2": "*"}})", "q.json");
  std::mt19937_64 rng(11);
  for (int round = 0; round < 200; ++round) {
    AreaResult r;
    for (uint64_t t = 0; t < 105; ++t)
      if (rng() % (round % 4 == 0 ? 2 : 9) == 0) r.targets.push_back(t);
    r.values.assign(r.targets.size(), 1.0);
    std::string csv;
    append_area_answer(csv, s, q, r, 105, AnswerFormat::csv);
    std::string expected = "D0,D1,D2,sum(V)\n";
    for (uint64_t t : r.targets) {
      const std::vector<uint32_t> pos = target_positions(q, t);
      for (size_t d = 0; d < 3; ++d) expected += s.dimension(d).element(q.area[d][pos[d]]).name + ",";
      expected += "1\n";
    }
    ASSERT_EQ(csv, expected);
  }
}

}  // namespace
}  // namespace gpuolap
