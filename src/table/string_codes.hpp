#pragma once
// String columns coded in parts at once, as the CSV loader and the Arrow
// import code them: each part (a chunk of rows, on its own thread) gives its
// strings codes in the order it first sees them (StringCodes), then every
// part's distinct strings are sorted together into the column's dictionary
// in byte order and each part's codes are mapped to it (merge_dictionaries).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "table/dictionary.hpp"

namespace gpuolap::table {

// Codes strings in the order first seen: an open-addressing table of
// (hash tag, code, text) slots, so a lookup hashes once (XXH3) and compares
// bytes only where 32 bits of the hash agree. Each distinct string is copied into
// blocks of its own: the strings a lookup compares with then lie together,
// not scattered over the input (a comparison reaching into a 190 MB Arrow
// buffer was a cache and TLB miss, a third of the time of coding 10 M
// names).
class StringCodes {
 public:
  StringCodes();
  // Moved from, it is empty and usable again (its slots are made by the next code()).
  StringCodes(StringCodes&& other) noexcept;
  StringCodes& operator=(StringCodes&& other) noexcept;
  // The code of `s`, its index in strings(); a new string gets the next.
  std::int32_t code(std::string_view s);
  // codes[i] = code(strings[i]) for each, in order; faster than a call
  // each, as the lookups of a group of strings wait for memory together.
  void code_all(std::span<const std::string_view> strings, std::int32_t* codes);
  std::size_t size() const { return strings_.size(); }
  // The distinct strings, by code (views into this object's own copies).
  const std::vector<std::string_view>& strings() const { return strings_; }

 private:
  struct Slot {
    std::uint32_t tag = 0;       // the hash's high 32 bits
    std::int32_t code = -1;      // -1: empty
    const char* text = nullptr;  // the string's kept bytes, its size before them
  };
  static constexpr std::size_t kFirstSlots = 1024;
  static bool holds(const Slot& slot, std::uint32_t tag, std::string_view s);
  std::int32_t code(std::string_view s, std::uint64_t hash);
  void grow();
  std::string_view keep(std::string_view s);

  std::vector<Slot> slots_;  // a power of two, at most half full
  std::vector<std::string_view> strings_;
  std::vector<std::uint64_t> hashes_;  // by code, to grow without hashing again
  std::vector<std::unique_ptr<char[]>> blocks_;
  char* next_ = nullptr;        // the free bytes of the last block
  std::size_t block_left_ = 0;
};

// Sorts the distinct strings of every part (each coded by its own
// StringCodes) into one dictionary in byte order. Returns, for each part, the
// dictionary code of each of its codes. More than 2^31 − 1 distinct strings
// is an InputError: "<what> has more than 2^31 distinct strings".
struct MergedDictionary {
  Dictionary dictionary;
  std::vector<std::vector<std::int32_t>> codes;  // [part][its code] -> dictionary code
};
MergedDictionary merge_dictionaries(const std::vector<const StringCodes*>& parts, const std::string& what);

// Strings coded in byte order without being coded in parts first: `texts`
// sorted, equal ones given one code. Returns the dictionary and writes
// codes[i] for each text not NULL (nulls[i] != 0; `nulls` empty: none is),
// 0 for each NULL. For a column of mostly distinct strings (comments,
// names), where coding each part first finds almost nothing equal and only
// copies the strings. More than 2^31 distinct strings is an InputError, as
// for merge_dictionaries.
Dictionary code_in_byte_order(std::span<const std::string_view> texts, std::span<const std::uint8_t> nulls,
                              std::int32_t* codes, const std::string& what);

// a < b in byte order (std::string's), 8 bytes a step: the sort of a
// dictionary compares tens of millions of strings sharing long prefixes, and
// a call of memcmp for each was a fifth of a load.
bool bytes_less(std::string_view a, std::string_view b);

// a == b, in 8-byte words (the last one overlapping the word before), with
// no call: coded strings are mostly short (names, flags), and a call of
// memcmp for each compare was a sixth of coding 10 M names. Either may be
// empty with a null pointer.
bool bytes_equal(std::string_view a, std::string_view b);

}  // namespace gpuolap::table
