// The placement file (placement_file.hpp). Layout, little-endian:
//   "GPUOLAPPLACE\0\0\0\1" (16 bytes, the last the version)
//   Header (fixed, below), table name, column name (their lengths in it)
//   slot_value (u32 each), column (u32 each)
//   u64 XXH3-64 of all the bytes before it
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <vector>

#include "gpuolap/error.hpp"
#include "groupby/shared_memory/placement_file.hpp"
#include "storage/atomic_file.hpp"

namespace gpuolap::groupby {
namespace {

constexpr char kMagic[16] = {'G', 'P', 'U', 'O', 'L', 'A', 'P', 'P', 'L', 'A', 'C', 'E', 0, 0, 0, 1};

struct Header {
  std::uint32_t goal, block_threads, word_bytes, cardinality;
  std::uint64_t rows_per_block;
  double budget;
  std::int32_t window, threads;
  std::uint64_t table_stamp, rows, slots, table_name_bytes, column_name_bytes;
  // The statistics the optimizer printed, kept for `optimize --info`.
  double before_banks, before_read, before_write, after_banks, after_read, after_write, copies_per_value, seconds;
  std::uint64_t before_read_conflicted, before_write_conflicted, after_read_conflicted, after_write_conflicted,
      before_window, after_window, replicated_values, max_copies, budget_refusals, chunks;
};

void append(std::vector<char>& out, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  out.insert(out.end(), c, c + n);
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}", path.string(), what));
}

}  // namespace

std::filesystem::path placement_path(const std::filesystem::path& dir, const std::string& table,
                                     const std::string& column, PlacementGoal goal) {
  return dir / fmt::format("{}.{}.{}.placement", table, column, placement_goal_name(goal));
}

std::uint64_t table_file_stamp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::uint64_t stamp = 0;
  in.seekg(-8, std::ios::end);
  if (!in || !in.read(reinterpret_cast<char*>(&stamp), 8)) fail(file, "cannot read the table file's checksum");
  return stamp;
}

void store_placement(const std::filesystem::path& dir, const StoredPlacement& s) {
  const Placement& p = s.placement;
  Header h{};
  h.goal = static_cast<std::uint32_t>(p.goal);
  h.block_threads = static_cast<std::uint32_t>(p.shape.block_threads);
  h.word_bytes = static_cast<std::uint32_t>(p.shape.word_bytes);
  h.cardinality = p.cardinality;
  h.rows_per_block = p.shape.rows_per_block;
  h.budget = p.budget;
  h.window = p.window;
  h.threads = p.stats.threads;
  h.table_stamp = s.table_stamp;
  h.rows = p.column.size();
  h.slots = p.slot_value.size();
  h.table_name_bytes = s.table.size();
  h.column_name_bytes = s.column.size();
  const PlacementStats& st = p.stats;
  h.before_banks = st.before.distinct_banks, h.before_read = st.before.read_rounds, h.before_write = st.before.write_rounds;
  h.after_banks = st.after.distinct_banks, h.after_read = st.after.read_rounds, h.after_write = st.after.write_rounds;
  h.copies_per_value = st.copies_per_value, h.seconds = st.seconds;
  h.before_read_conflicted = st.before.read_conflicted_chunks, h.before_write_conflicted = st.before.write_conflicted_chunks;
  h.after_read_conflicted = st.after.read_conflicted_chunks, h.after_write_conflicted = st.after.write_conflicted_chunks;
  h.before_window = st.before.window_conflicts, h.after_window = st.after.window_conflicts;
  h.replicated_values = st.replicated_values, h.max_copies = st.max_copies, h.budget_refusals = st.budget_refusals;
  h.chunks = st.chunks;

  std::vector<char> bytes;
  bytes.reserve(sizeof kMagic + sizeof h + s.table.size() + s.column.size() + 4 * (h.rows + h.slots) + 8);
  append(bytes, kMagic, sizeof kMagic);
  append(bytes, &h, sizeof h);
  append(bytes, s.table.data(), s.table.size());
  append(bytes, s.column.data(), s.column.size());
  append(bytes, p.slot_value.data(), 4 * p.slot_value.size());
  append(bytes, p.column.data(), 4 * p.column.size());
  const std::uint64_t checksum = XXH3_64bits(bytes.data(), bytes.size());
  append(bytes, &checksum, 8);

  const std::filesystem::path final_path = placement_path(dir, s.table, s.column, p.goal);
  write_file_atomically(final_path, bytes.data(), bytes.size());
}

std::optional<StoredPlacement> load_placement(const std::filesystem::path& dir, const std::string& table,
                                              const std::string& column, PlacementGoal goal) {
  const std::filesystem::path path = placement_path(dir, table, column, goal);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && in.fail()) fail(path, "cannot read");
  if (bytes.size() < sizeof kMagic + sizeof(Header) + 8) fail(path, "truncated: not a whole placement file");
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic - 1) != 0) fail(path, "not a placement file");
  if (bytes[sizeof kMagic - 1] != kMagic[sizeof kMagic - 1])
    fail(path, fmt::format("placement file version {}, this gpuolap reads version 1; run gpuolap optimize again",
                           static_cast<int>(bytes[sizeof kMagic - 1])));
  std::uint64_t checksum;
  std::memcpy(&checksum, bytes.data() + bytes.size() - 8, 8);
  if (checksum != XXH3_64bits(bytes.data(), bytes.size() - 8)) fail(path, "corrupt: checksum mismatch");
  Header h;
  std::memcpy(&h, bytes.data() + sizeof kMagic, sizeof h);
  const std::uint64_t body = sizeof kMagic + sizeof h;
  if (h.table_name_bytes > 256 || h.column_name_bytes > 256 || h.rows >= (std::uint64_t{1} << 32) ||
      h.slots >= (std::uint64_t{1} << 32) ||
      body + h.table_name_bytes + h.column_name_bytes + 4 * (h.rows + h.slots) + 8 != bytes.size())
    fail(path, "corrupt: its sizes do not add up to the file's");
  StoredPlacement s;
  std::size_t at = body;
  s.table.assign(bytes.data() + at, h.table_name_bytes);
  at += h.table_name_bytes;
  s.column.assign(bytes.data() + at, h.column_name_bytes);
  at += h.column_name_bytes;
  s.table_stamp = h.table_stamp;
  Placement& p = s.placement;
  if (h.goal > 1) fail(path, "corrupt: unknown goal");
  p.goal = static_cast<PlacementGoal>(h.goal);
  p.shape = LaunchShape{static_cast<int>(h.block_threads), h.rows_per_block, static_cast<int>(h.word_bytes)};
  try {
    check_shape(p.shape);
  } catch (const InputError& e) {
    fail(path, std::string("corrupt: ") + e.what());
  }
  if (!(h.budget == 0 || (h.budget >= 1 && h.budget < 1e9)) || h.window < 0 || h.window > 4096 ||
      h.cardinality < 1 || h.cardinality > (1u << 24))
    fail(path, "corrupt: its budget, window or cardinality is out of range");
  p.budget = h.budget;
  p.window = h.window;
  p.cardinality = h.cardinality;
  p.slot_value.resize(h.slots);
  if (h.slots) std::memcpy(p.slot_value.data(), bytes.data() + at, 4 * h.slots);
  at += 4 * h.slots;
  p.column.resize(h.rows);
  if (h.rows) std::memcpy(p.column.data(), bytes.data() + at, 4 * h.rows);
  // The slot array's shape: whole rows of banks, copy 0 of v at slot v.
  if (h.slots % static_cast<std::uint64_t>(p.banks()) != 0 || h.slots < h.cardinality)
    fail(path, "corrupt: its slots are not whole rows of banks over its values");
  for (std::uint64_t slot = 0; slot < h.slots; ++slot) {
    const std::uint32_t v = p.slot_value[slot];
    if (slot < h.cardinality ? v != slot : (v != kNoValue && v >= h.cardinality))
      fail(path, fmt::format("corrupt: slot {} holds value {}", slot, v));
  }
  PlacementStats& st = p.stats;
  st.before = ChunkStats{h.before_banks, h.before_read, h.before_write, h.before_read_conflicted,
                         h.before_write_conflicted, h.before_window};
  st.after = ChunkStats{h.after_banks, h.after_read, h.after_write, h.after_read_conflicted,
                        h.after_write_conflicted, h.after_window};
  st.copies_per_value = h.copies_per_value, st.seconds = h.seconds, st.threads = h.threads;
  st.replicated_values = h.replicated_values, st.max_copies = static_cast<std::uint32_t>(h.max_copies);
  st.budget_refusals = h.budget_refusals, st.chunks = h.chunks, st.slots = h.slots;
  if (s.table != table || s.column != column || p.goal != goal)
    fail(path, fmt::format("holds the placement of {}.{} for {}s, not of {}.{}", s.table, s.column,
                           placement_goal_name(p.goal), table, column));
  // Every slot must be in range before a kernel indexes with it.
  for (std::size_t r = 0; r < p.column.size(); ++r)
    if (p.column[r] >= p.slot_value.size() || p.slot_value[p.column[r]] >= p.cardinality)
      fail(path, fmt::format("corrupt: row {} names slot {}, not a copy of a value", r + 1, p.column[r]));
  return s;
}

}  // namespace gpuolap::groupby
