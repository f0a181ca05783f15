#include "table/string_codes.hpp"

#include <fmt/format.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_sort.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <utility>

#include "gpuolap/error.hpp"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace gpuolap::table {

StringCodes::StringCodes() = default;

StringCodes::StringCodes(StringCodes&& other) noexcept { *this = std::move(other); }

StringCodes& StringCodes::operator=(StringCodes&& other) noexcept {
  if (this != &other) {
    slots_ = std::exchange(other.slots_, {});
    strings_ = std::exchange(other.strings_, {});
    hashes_ = std::exchange(other.hashes_, {});
    blocks_ = std::exchange(other.blocks_, {});
    next_ = std::exchange(other.next_, nullptr);
    block_left_ = std::exchange(other.block_left_, 0);
  }
  return *this;
}

namespace {
std::uint64_t hash_of(std::string_view s) { return XXH3_64bits(s.data(), s.size()); }
std::uint32_t tag_of(std::uint64_t hash) { return static_cast<std::uint32_t>(hash >> 32); }

}  // namespace

bool StringCodes::holds(const Slot& slot, std::uint32_t tag, std::string_view s) {
  if (slot.tag != tag) return false;
  std::uint32_t size;
  std::memcpy(&size, slot.text - sizeof size, sizeof size);
  return size == s.size() && bytes_equal({slot.text, size}, s);
}

std::int32_t StringCodes::code(std::string_view s) { return code(s, hash_of(s)); }

std::int32_t StringCodes::code(std::string_view s, std::uint64_t hash) {
  if (slots_.empty()) slots_.resize(kFirstSlots);
  const std::uint32_t tag = tag_of(hash);
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  for (; slots_[i].code >= 0; i = (i + 1) & mask)
    if (holds(slots_[i], tag, s)) return slots_[i].code;
  // New: the caller bounds the codes (merge_dictionaries names the column).
  const auto code = static_cast<std::int32_t>(strings_.size());
  const std::string_view kept = keep(s);
  strings_.push_back(kept);
  hashes_.push_back(hash);
  slots_[i] = Slot{tag, code, kept.data()};
  if (2 * strings_.size() > slots_.size()) grow();
  return code;
}

void StringCodes::code_all(std::span<const std::string_view> strings, std::int32_t* codes) {
  // A group's lookups overlap their misses: the slots of all its strings
  // are fetched first, then the text of each slot whose tag matches, and
  // only then are the strings compared.
  constexpr std::size_t kGroup = 16;
  std::uint64_t hashes[kGroup];
  if (slots_.empty()) slots_.resize(kFirstSlots);
  for (std::size_t begin = 0; begin < strings.size(); begin += kGroup) {
    const std::size_t n = std::min(kGroup, strings.size() - begin);
    const std::string_view* s = strings.data() + begin;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = 0; i < n; ++i) {
      hashes[i] = hash_of(s[i]);
      __builtin_prefetch(&slots_[hashes[i] & mask]);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const Slot& slot = slots_[hashes[i] & mask];
      if (slot.code >= 0 && slot.tag == tag_of(hashes[i])) __builtin_prefetch(slot.text - sizeof(std::uint32_t));
    }
    for (std::size_t i = 0; i < n; ++i) codes[begin + i] = code(s[i], hashes[i]);
  }
}

void StringCodes::grow() {
  std::vector<Slot>(slots_.size() * 2).swap(slots_);
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t code = 0; code < strings_.size(); ++code) {
    const std::uint64_t hash = hashes_[code];
    std::size_t i = hash & mask;
    while (slots_[i].code >= 0) i = (i + 1) & mask;
    slots_[i] = Slot{tag_of(hash), static_cast<std::int32_t>(code), strings_[code].data()};
  }
}

std::string_view StringCodes::keep(std::string_view s) {
  // Each string's size (4 bytes) just before its bytes, so that a slot
  // compares with one pointer.
  constexpr std::size_t kBlock = 64 << 10;
  const std::size_t bytes = sizeof(std::uint32_t) + s.size();
  if (bytes > block_left_) {
    const std::size_t size = std::max(kBlock, bytes);
    blocks_.emplace_back(new char[size]);
    next_ = blocks_.back().get();
    block_left_ = size;
  }
  const auto size = static_cast<std::uint32_t>(s.size());
  std::memcpy(next_, &size, sizeof size);
  char* text = next_ + sizeof size;
  if (!s.empty()) std::memcpy(text, s.data(), s.size());
  next_ += bytes;
  block_left_ -= bytes;
  return {text, s.size()};
}

namespace {
template <class Word>
Word load(const char* p) {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
}  // namespace

bool bytes_equal(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 < n; i += 8)
      if (load<std::uint64_t>(x + i) != load<std::uint64_t>(y + i)) return false;
    return load<std::uint64_t>(x + n - 8) == load<std::uint64_t>(y + n - 8);
  }
  if (n >= 4)
    return load<std::uint32_t>(x) == load<std::uint32_t>(y) && load<std::uint32_t>(x + n - 4) == load<std::uint32_t>(y + n - 4);
  for (std::size_t i = 0; i < n; ++i)
    if (x[i] != y[i]) return false;
  return true;
}

bool bytes_less(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a.data() + i, 8);
    std::memcpy(&y, b.data() + i, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y);
  }
  for (; i < n; ++i)
    if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
  return a.size() < b.size();
}

MergedDictionary merge_dictionaries(const std::vector<const StringCodes*>& codes, const std::string& what) {
  std::vector<const std::vector<std::string_view>*> parts;
  for (const StringCodes* c : codes) parts.push_back(&c->strings());
  // Every part's strings sorted together (one sort; the first 8 bytes
  // compared as an integer first), a code given to each distinct one.
  struct Entry {
    std::uint64_t prefix;  // the first 8 bytes, big-endian, zero padded: ordered as the strings
    std::string_view text;
    std::uint32_t part, local;
  };
  std::vector<std::size_t> offsets(parts.size() + 1, 0);
  for (std::size_t i = 0; i < parts.size(); ++i) offsets[i + 1] = offsets[i] + parts[i]->size();
  std::vector<Entry> entries(offsets.back());
  tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t i) {
    for (std::size_t l = 0; l < parts[i]->size(); ++l) {
      const std::string_view text = (*parts[i])[l];
      unsigned char bytes[8] = {};
      std::memcpy(bytes, text.data(), std::min<std::size_t>(8, text.size()));
      std::uint64_t prefix = 0;
      for (unsigned char byte : bytes) prefix = prefix << 8 | byte;
      entries[offsets[i] + l] = Entry{prefix, text, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(l)};
    }
  });
  tbb::parallel_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.prefix != b.prefix ? a.prefix < b.prefix : bytes_less(a.text, b.text);
  });
  MergedDictionary merged;
  merged.codes.resize(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) merged.codes[i].resize(parts[i]->size());
  for (std::size_t e = 0; e < entries.size(); ++e) {
    if (e == 0 || entries[e].text != entries[e - 1].text) {
      if (merged.dictionary.size() == std::size_t{INT32_MAX})
        throw InputError(fmt::format("{} has more than 2^31 distinct strings", what));
      merged.dictionary.push_back(entries[e].text);
    }
    merged.codes[entries[e].part][entries[e].local] = static_cast<std::int32_t>(merged.dictionary.size() - 1);
  }
  return merged;
}

}  // namespace gpuolap::table
