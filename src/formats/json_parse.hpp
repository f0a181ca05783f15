#pragma once
// JSON as the formats read it: a syntax error, a number beyond a double or
// a key given twice in one object or nesting deeper than kMaxJsonDepth is
// an InputError naming `where`
// (nlohmann would silently keep the last of two equal keys).
#include <nlohmann/json.hpp>
#include <string>

namespace gpuolap {

inline constexpr int kMaxJsonDepth = 256;

nlohmann::json parse_json(const std::string& text, const std::string& where);

}  // namespace gpuolap
