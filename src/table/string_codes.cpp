#include "table/string_codes.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
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

namespace {

// A string to be sorted: its 8 bytes from the sort's depth, big-endian and
// zero padded (ordered as those bytes of the strings are), its bytes, and
// its place among every part's strings. The bytes are kept here, not
// looked up through the place: each level of the sort reads every string,
// and that look-up was a cache miss of its own.
struct Keyed {
  std::uint64_t word;
  const char* data;
  std::uint32_t size;  // (StringCodes keeps a string's size in 32 bits)
  std::uint32_t entry;
  std::string_view text() const { return {data, size}; }
};

std::uint64_t word_at(std::string_view s, std::size_t depth) {
  unsigned char bytes[8] = {};
  if (depth < s.size()) std::memcpy(bytes, s.data() + depth, std::min<std::size_t>(8, s.size() - depth));
  std::uint64_t w;
  std::memcpy(&w, bytes, 8);
  return __builtin_bswap64(w);
}

bool word_less(const Keyed& a, const Keyed& b) { return a.word < b.word; }

// Runs of more keys than this are sorted by parallel tasks, smaller ones by
// one; runs of at most kSmallRun by comparing the strings' rest directly.
constexpr std::size_t kParallelRun = 1 << 16;
constexpr std::size_t kSmallRun = 16;
constexpr std::size_t kParallelDepth = 64;

// Sorts keys[first, last), whose strings agree on their first `depth`
// bytes, into the strings' byte order: on the word at `depth` as an integer
// (most strings differ there, and an integer compare needs no string
// reads), then each run of equal words again on the next word, and so on —
// a most-significant-word radix sort. Its strings are read once a level
// instead of at each of a comparison sort's log n compares, which chased a
// pointer each (a third of a CSV load's CPU with 2 M distinct comments).
// Within a run of equal words, the strings that end in that word are equal
// but for trailing zero bytes, so shorter first; each is a prefix of the
// strings that go on, which follow them.
class WordSort {
 public:
  explicit WordSort(std::size_t parallel_above) : parallel_above_(parallel_above) {}

  void sort(Keyed* first, Keyed* last, std::size_t depth) const {
    const auto n = static_cast<std::size_t>(last - first);
    // (Deep levels serially too: parallel levels recurse, and strings that
    // share a long prefix would take one for every 8 bytes of it.)
    if (n <= parallel_above_ || depth >= kParallelDepth) return sort_serial(first, last, depth);
    tbb::parallel_for(tbb::blocked_range<Keyed*>(first, last, 4096), [&](const tbb::blocked_range<Keyed*>& r) {
      for (Keyed* k = r.begin(); k != r.end(); ++k) k->word = word_at(text(*k), depth);
    });
    tbb::parallel_sort(first, last, word_less);
    std::vector<std::pair<Keyed*, Keyed*>> runs;
    for (Keyed* a = first; a != last;) {
      Keyed* b = a + 1;
      while (b != last && b->word == a->word) ++b;
      if (b - a > 1) runs.emplace_back(a, b);
      a = b;
    }
    tbb::parallel_for(std::size_t{0}, runs.size(), [&](std::size_t i) { sort_run(runs[i].first, runs[i].second, depth); });
  }

 private:
  static std::string_view text(const Keyed& k) { return k.text(); }

  // A run of equal words at `depth`: the strings ending there put first,
  // by size; returns where the rest begin, to be sorted from depth + 8.
  static Keyed* order_ended(Keyed* first, Keyed* last, std::size_t depth) {
    Keyed* rest = std::partition(first, last, [&](const Keyed& k) { return k.size <= depth + 8; });
    std::sort(first, rest, [](const Keyed& a, const Keyed& b) { return a.size < b.size; });
    return rest;
  }

  void sort_run(Keyed* first, Keyed* last, std::size_t depth) const {
    Keyed* rest = order_ended(first, last, depth);
    if (last - rest > 1) sort(rest, last, depth + 8);
  }

  // Without recursion: a run of equal strings (one copy a part) may be as
  // many levels deep as the strings are long.
  void sort_serial(Keyed* first, Keyed* last, std::size_t depth) const {
    struct Range {
      Keyed *first, *last;
      std::size_t depth;
    };
    std::vector<Range> todo{{first, last, depth}};
    while (!todo.empty()) {
      const Range r = todo.back();
      todo.pop_back();
      if (r.last - r.first <= static_cast<std::ptrdiff_t>(kSmallRun)) {
        std::sort(r.first, r.last, [&](const Keyed& a, const Keyed& b) {
          return bytes_less(text(a).substr(r.depth), text(b).substr(r.depth));
        });
        continue;
      }
      for (Keyed* k = r.first; k != r.last; ++k) k->word = word_at(text(*k), r.depth);
      std::sort(r.first, r.last, word_less);
      for (Keyed* a = r.first; a != r.last;) {
        Keyed* b = a + 1;
        while (b != r.last && b->word == a->word) ++b;
        if (b - a > 1) {
          Keyed* rest = order_ended(a, b, r.depth);
          if (b - rest > 1) todo.push_back({rest, b, r.depth + 8});
        }
        a = b;
      }
    }
  }

  std::size_t parallel_above_;
};

// The dictionary of keys sorted in their strings' byte order, equal strings
// one value; assign(entry, code) is called for every key, in parallel.
// The work is done in parallel blocks (on one thread it took as long as the
// sort): a code a sorted position, counting the strings that differ from
// the one before; then the dictionary's ends and bytes, each distinct
// string copied to its place.
template <class Assign>
Dictionary dictionary_of_sorted(const std::vector<Keyed>& keys, Assign&& assign, const std::string& what) {
  const std::size_t n = keys.size();
  auto each_block = [&](auto&& fn) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, 16384), [&](const tbb::blocked_range<std::size_t>& r) {
      for (std::size_t k = r.begin(); k != r.end(); ++k) fn(k);
    });
  };
  std::vector<std::uint32_t> code_at(n);
  each_block([&](std::size_t k) { code_at[k] = k == 0 || keys[k].text() != keys[k - 1].text(); });
  std::size_t distinct = 0;
  for (std::uint32_t& c : code_at) {
    distinct += c;
    c = static_cast<std::uint32_t>(distinct - 1);
  }
  if (distinct > std::size_t{INT32_MAX}) throw InputError(fmt::format("{} has more than 2^31 distinct strings", what));
  auto first_of_its_code = [&](std::size_t k) { return k == 0 || code_at[k] != code_at[k - 1]; };
  std::vector<std::uint64_t> ends(distinct);
  each_block([&](std::size_t k) {
    if (first_of_its_code(k)) ends[code_at[k]] = keys[k].size;
  });
  std::uint64_t bytes_so_far = 0;
  for (std::uint64_t& end : ends) end = bytes_so_far += end;
  std::string bytes(bytes_so_far, '\0');
  each_block([&](std::size_t k) {
    const Keyed& key = keys[k];
    if (first_of_its_code(k) && key.size > 0) std::memcpy(bytes.data() + ends[code_at[k]] - key.size, key.data, key.size);
    assign(key.entry, static_cast<std::int32_t>(code_at[k]));
  });
  return Dictionary(std::move(bytes), std::move(ends));
}

}  // namespace

MergedDictionary merge_dictionaries(const std::vector<const StringCodes*>& codes, const std::string& what) {
  std::vector<const std::vector<std::string_view>*> parts;
  for (const StringCodes* c : codes) parts.push_back(&c->strings());
  std::vector<std::size_t> offsets(parts.size() + 1, 0);
  for (std::size_t i = 0; i < parts.size(); ++i) offsets[i + 1] = offsets[i] + parts[i]->size();
  const std::size_t n = offsets.back();
  if (n > std::size_t{UINT32_MAX})
    throw InputError(fmt::format("{} has more than 2^32 strings over its parts (the distinct ones of each)", what));
  std::vector<Keyed> keys(n);
  tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t i) {
    for (std::size_t l = 0; l < parts[i]->size(); ++l) {
      const std::string_view text = (*parts[i])[l];
      keys[offsets[i] + l] = Keyed{0, text.data(), static_cast<std::uint32_t>(text.size()),
                                   static_cast<std::uint32_t>(offsets[i] + l)};
    }
  });
  // Every part's strings sorted together. (Equal strings, one a part at
  // most, stay in runs no longer than the parts: the parallel levels end
  // before them.)
  WordSort(std::max(kParallelRun, parts.size())).sort(keys.data(), keys.data() + n, 0);
  // Each string's code by its place among the parts, then cut into the
  // parts' codes.
  std::vector<std::int32_t> code_of_entry(n);
  MergedDictionary merged;
  merged.dictionary = dictionary_of_sorted(
      keys, [&](std::uint32_t entry, std::int32_t code) { code_of_entry[entry] = code; }, what);
  merged.codes.resize(parts.size());
  tbb::parallel_for(std::size_t{0}, parts.size(), [&](std::size_t i) {
    merged.codes[i].assign(code_of_entry.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                           code_of_entry.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]));
  });
  return merged;
}

Dictionary code_in_byte_order(std::span<const std::string_view> texts, std::span<const std::uint8_t> nulls,
                              std::int32_t* codes, const std::string& what) {
  const std::size_t n = texts.size();
  if (n > std::size_t{UINT32_MAX}) throw InputError(fmt::format("{} has more than 2^32 strings", what));
  auto is_null = [&](std::size_t i) { return !nulls.empty() && nulls[i] != 0; };
  // The keys of the texts that are not NULL, in parallel blocks: counted,
  // then each block's written from its offset.
  constexpr std::size_t kBlock = 1 << 16;
  const std::size_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::size_t> offsets(blocks + 1, 0);
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::size_t count = 0;
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) count += !is_null(i);
    offsets[b + 1] = count;
  });
  for (std::size_t b = 0; b < blocks; ++b) offsets[b + 1] += offsets[b];
  std::vector<Keyed> keys(offsets.back());
  tbb::parallel_for(std::size_t{0}, blocks, [&](std::size_t b) {
    std::size_t at = offsets[b];
    for (std::size_t i = b * kBlock; i < std::min(n, (b + 1) * kBlock); ++i) {
      if (is_null(i)) {
        codes[i] = 0;
        continue;
      }
      if (texts[i].size() > UINT32_MAX) throw InputError(fmt::format("{}: a string of more than 2^32 bytes", what));
      keys[at++] = Keyed{0, texts[i].data(), static_cast<std::uint32_t>(texts[i].size()), static_cast<std::uint32_t>(i)};
    }
  });
  // (Equal strings may be many here, one a row: the parallel levels end at a
  // fixed depth, past which a run is sorted by one task.)
  WordSort(kParallelRun).sort(keys.data(), keys.data() + keys.size(), 0);
  return dictionary_of_sorted(keys, [&](std::uint32_t entry, std::int32_t code) { codes[entry] = code; }, what);
}

}  // namespace gpuolap::table
