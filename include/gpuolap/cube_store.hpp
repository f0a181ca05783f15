#pragma once
// The binary cube store: a directory holding one versioned, checksummed file
// with the schema and the sorted fact columns. It loads far faster than CSV.
// Saving writes a temporary file, fsyncs it and renames it over the old one,
// so a store is never left half-written.
#include <filesystem>

#include "gpuolap/cube.hpp"
#include "gpuolap/progress.hpp"

namespace gpuolap {

inline constexpr uint32_t kStoreVersion = 1;

std::filesystem::path store_file(const std::filesystem::path& dir);
bool store_exists(const std::filesystem::path& dir);
void save_store(const std::filesystem::path& dir, const Schema& schema, const FactTable& facts,
                const ProgressFn& progress = {});
// The checksum that ends a store file (it identifies the snapshot a
// write-ahead log follows); throws InputError when there is no store.
uint64_t store_checksum(const std::filesystem::path& dir);
// Throws InputError for a missing, truncated, corrupt or other-version store.
Cube load_store(const std::filesystem::path& dir, const ProgressFn& progress = {});

}  // namespace gpuolap
