// A placement stored beside its table: DIR/<table>.<column>.<goal>.placement,
// versioned, checksummed (XXH3-64 of everything before it), written
// atomically (a temporary file, fsync, rename, fsync of the directory). It
// records the launch shape it was made for and the table file's own
// checksum, so that a changed table is noticed rather than misread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "groupby/shared_memory/placement.hpp"

namespace gpuolap::groupby {

struct StoredPlacement {
  std::string table;
  std::string column;
  std::uint64_t table_stamp = 0;  // the table file's checksum when the placement was made
  Placement placement;
};

std::filesystem::path placement_path(const std::filesystem::path& dir, const std::string& table,
                                     const std::string& column, PlacementGoal goal);
// The last 8 bytes of a table file: its checksum, which changes with it.
std::uint64_t table_file_stamp(const std::filesystem::path& table_file);

void store_placement(const std::filesystem::path& dir, const StoredPlacement& stored);
// nullopt when there is no such file; an InputError naming the file when it
// is not a whole, current-version placement.
std::optional<StoredPlacement> load_placement(const std::filesystem::path& dir, const std::string& table,
                                              const std::string& column, PlacementGoal goal);

}  // namespace gpuolap::groupby
