// Dates as table columns hold them: days since 1970-01-01, proleptic
// Gregorian, written YYYY-MM-DD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpuolap::table {

// Days since 1970-01-01 of a day (month 1-12, day 1-31, not checked here).
std::int32_t days_from_civil(int year, unsigned month, unsigned day);
// The YYYY-MM-DD text of a day count (years 0000-9999 print with 4 digits).
std::string format_date(std::int32_t days);
// Days of a YYYY-MM-DD text; false unless it is exactly that form and a
// real day.
bool parse_date(std::string_view text, std::int32_t& days);

}  // namespace gpuolap::table
