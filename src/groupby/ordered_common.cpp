// The operator's names, input checks, the aggregate list parser, and the
// finishing of group states into result columns (ordered_internal.hpp).
#include <fmt/format.h>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <atomic>
#include <array>
#include <cctype>
#include <cstring>

#include "gpuolap/error.hpp"
#include "gpuolap/huge_pages.hpp"
#include "groupby/ordered_internal.hpp"

namespace gpuolap::groupby {
namespace {

constexpr std::array<std::pair<AggregateKind, std::string_view>, 6> kAggregateNames{{
    {AggregateKind::CountStar, "count"},
    {AggregateKind::Count, "count"},
    {AggregateKind::Sum, "sum"},
    {AggregateKind::Min, "min"},
    {AggregateKind::Max, "max"},
    {AggregateKind::Avg, "avg"},
}};

constexpr std::array<std::pair<Architecture, std::string_view>, 7> kArchitectureNames{{
    {Architecture::FiveKernel, "5-kernel"},
    {Architecture::ThreeKernel, "3-kernel"},
    {Architecture::TwoKernel, "2-kernel"},
    {Architecture::OneKernel, "1-kernel"},
    {Architecture::BlockCooperative, "block-cooperative"},
    {Architecture::CubReduceByKey, "cub-reduce-by-key"},
    {Architecture::CubRunLength, "cub-run-length"},
}};

constexpr std::array<std::pair<Variant, std::string_view>, 4> kVariantNames{{
    {Variant::DirectAtomics, "direct-atomics"},
    {Variant::ChunkedAtomics, "chunked-atomics"},
    {Variant::PrivateVariable, "private-variable"},
    {Variant::PrivateArray, "private-array"},
}};

template <class Table, class Value>
std::string_view name_in(const Table& table, Value v) {
  for (const auto& [value, name] : table)
    if (value == v) return name;
  return "?";
}

template <class Table>
auto parse_in(const Table& table, std::string_view name, const char* what) {
  std::string valid;
  for (const auto& [value, known] : table) {
    if (known == name) return value;
    valid += (valid.empty() ? "" : ", ") + std::string(known);
  }
  throw InputError(fmt::format("unknown {} '{}' (valid: {})", what, name, valid));
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

std::string_view aggregate_name(AggregateKind kind) { return name_in(kAggregateNames, kind); }
std::string_view architecture_name(Architecture a) { return name_in(kArchitectureNames, a); }
std::string_view variant_name(Variant v) { return name_in(kVariantNames, v); }
Architecture parse_architecture(std::string_view name) { return parse_in(kArchitectureNames, name, "architecture"); }
Variant parse_variant(std::string_view name) { return parse_in(kVariantNames, name, "variant"); }

const std::vector<Architecture>& all_architectures() {
  static const std::vector<Architecture> all = [] {
    std::vector<Architecture> v;
    for (const auto& [a, name] : kArchitectureNames) v.push_back(a);
    return v;
  }();
  return all;
}
const std::vector<Variant>& all_variants() {
  static const std::vector<Variant> all = [] {
    std::vector<Variant> v;
    for (const auto& [x, name] : kVariantNames) v.push_back(x);
    return v;
  }();
  return all;
}
bool takes_variant(Architecture a) {
  return a == Architecture::FiveKernel || a == Architecture::ThreeKernel || a == Architecture::TwoKernel ||
         a == Architecture::OneKernel;
}

std::size_t value_bytes(ValueType type) { return type == ValueType::Int32 ? 4 : 8; }

void check_input(const OrderedInput& input) {
  if (input.rows > kMaxRows) throw InputError(fmt::format("ordered aggregation takes fewer than 2^32 rows, not {}", input.rows));
  if (input.keys.empty()) throw InputError("ordered aggregation needs at least one grouping key");
  if (input.keys.size() > kMaxKeys)
    throw InputError(fmt::format("ordered aggregation takes at most {} grouping keys, not {}", kMaxKeys, input.keys.size()));
  if (input.aggregates.empty()) throw InputError("ordered aggregation needs at least one aggregate");
  if (input.aggregates.size() > kMaxAggregates)
    throw InputError(fmt::format("ordered aggregation takes at most {} aggregates, not {}", kMaxAggregates, input.aggregates.size()));
  if (input.values.size() > kMaxAggregates)
    throw InputError(fmt::format("ordered aggregation takes at most {} value columns, not {}", kMaxAggregates,
                                 input.values.size()));
  for (const ColumnView& k : input.keys)
    if (input.rows && !k.values) throw InputError(fmt::format("grouping key '{}' has no values", k.name));
  for (std::size_t i = 0; i < input.aggregates.size(); ++i) {
    const Aggregate& a = input.aggregates[i];
    if (a.kind == AggregateKind::CountStar) continue;
    if (a.value < 0 || static_cast<std::size_t>(a.value) >= input.values.size())
      throw InputError(fmt::format("aggregate {} ({}) names value column {}, which does not exist", i + 1,
                                   aggregate_name(a.kind), a.value));
    const ColumnView& v = input.values[a.value];
    if (input.rows && !v.values) throw InputError(fmt::format("value column '{}' has no values", v.name));
  }
}

ValueType aggregate_type(const OrderedInput& input, const Aggregate& a) {
  switch (a.kind) {
    case AggregateKind::CountStar:
    case AggregateKind::Count:
      return ValueType::Int64;
    case AggregateKind::Avg:
      return ValueType::Double;
    case AggregateKind::Sum:
      return input.values[a.value].type == ValueType::Double ? ValueType::Double : ValueType::Int64;
    default:
      return input.values[a.value].type;
  }
}

std::string aggregate_label(const OrderedInput& input, const Aggregate& a) {
  if (a.kind == AggregateKind::CountStar) return "count(*)";
  return fmt::format("{}({})", aggregate_name(a.kind), input.values[a.value].name);
}

std::vector<Aggregate> parse_aggregates(std::string_view text, const std::vector<std::string>& columns,
                                        std::vector<int>& values) {
  std::vector<Aggregate> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string item = trim(text.substr(start, end - start));
    start = end + 1;
    const std::size_t open = item.find('(');
    if (item.empty() || open == std::string::npos || item.back() != ')')
      throw InputError(fmt::format("aggregate '{}' is not of the form function(column) or count(*) "
                                   "(functions: count, sum, min, max, avg)", item));
    std::string function = trim(item.substr(0, open));
    std::transform(function.begin(), function.end(), function.begin(), [](unsigned char c) { return std::tolower(c); });
    const std::string argument = trim(item.substr(open + 1, item.size() - open - 2));
    Aggregate a;
    if (function == "count" && argument == "*") {
      a.kind = AggregateKind::CountStar;
      out.push_back(a);
      continue;
    }
    bool known = false;
    for (const auto& [kind, name] : kAggregateNames)
      if (kind != AggregateKind::CountStar && name == function) {
        a.kind = kind;
        known = true;
      }
    if (!known)
      throw InputError(fmt::format("aggregate '{}': unknown function '{}' (functions: count, sum, min, max, avg)", item,
                                   function));
    const auto column = std::find(columns.begin(), columns.end(), argument);
    if (column == columns.end()) throw InputError(fmt::format("aggregate '{}': no column '{}'", item, argument));
    const int index = static_cast<int>(column - columns.begin());
    auto seen = std::find(values.begin(), values.end(), index);
    if (seen == values.end()) seen = values.insert(values.end(), index);
    a.value = static_cast<int>(seen - values.begin());
    out.push_back(a);
    if (end == text.size()) break;
  }
  return out;
}

std::vector<AggregateSlot> aggregate_slots(const OrderedInput& input) {
  std::vector<AggregateSlot> slots;
  for (const Aggregate& a : input.aggregates) {
    AggregateSlot s;
    s.kind = a.kind;
    if (a.kind != AggregateKind::CountStar) {
      const ColumnView& v = input.values[a.value];
      s.type = v.type;
      s.values = v.values;
      s.nulls = v.nulls;
      s.keeps_count = a.kind == AggregateKind::Avg || (a.kind != AggregateKind::Count && v.nulls != nullptr);
    }
    slots.push_back(s);
  }
  return slots;
}

KeySlots key_slots(const OrderedInput& input) {
  KeySlots k;
  k.count = static_cast<int>(input.keys.size());
  for (std::size_t i = 0; i < input.keys.size(); ++i)
    k.key[i] = KeySlot{input.keys[i].type, input.keys[i].values, input.keys[i].nulls};
  return k;
}

std::size_t finish_aggregate_into(const AggregateSlot& slot, std::size_t groups, const std::uint64_t* bits,
                                  const std::uint64_t* high, const std::uint64_t* count, ResultColumn& out,
                                  std::size_t at) {
  const bool may_be_null = slot.keeps_count && count;
  // In parallel over blocks of groups (2^28 groups took seconds serially);
  // an overflow names the first group it is found in, as serially.
  std::atomic<std::size_t> overflow{groups};
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, groups, 1 << 16), [&](const tbb::blocked_range<std::size_t>& range) {
    for (std::size_t g = range.begin(); g < range.end(); ++g) {
      const std::size_t o = at + g;
      if (may_be_null && slot.kind != AggregateKind::Count && slot.kind != AggregateKind::CountStar && count[g] == 0) {
        out.nulls[o] = 1;
        continue;
      }
      switch (slot.kind) {
        case AggregateKind::CountStar:
        case AggregateKind::Count:
          out.ints[o] = static_cast<std::int64_t>(bits[g]);
          break;
        case AggregateKind::Min:
        case AggregateKind::Max:
          if (slot.type == ValueType::Double) out.doubles[o] = double_of_order_bits(bits[g]);
          else out.ints[o] = int_of_order_bits(bits[g]);
          break;
        case AggregateKind::Sum:
        case AggregateKind::Avg: {
          if (slot.type == ValueType::Double) {
            const double sum = bits_double(bits[g]);
            out.doubles[o] = slot.kind == AggregateKind::Sum ? sum : sum / static_cast<double>(count[g]);
            break;
          }
          const __int128 sum = static_cast<__int128>((static_cast<unsigned __int128>(high[g]) << 64) | bits[g]);
          if (slot.kind == AggregateKind::Avg) {
            // Divided in long double, as SQL's engines do, so the last bit agrees.
            out.doubles[o] = static_cast<double>(static_cast<long double>(sum) / static_cast<long double>(count[g]));
          } else if (sum > INT64_MAX || sum < INT64_MIN) {
            std::size_t seen = overflow.load();
            while (g < seen && !overflow.compare_exchange_weak(seen, g)) {
            }
          } else {
            out.ints[o] = static_cast<std::int64_t>(sum);
          }
          break;
        }
      }
    }
  });
  return overflow.load();
}

ResultColumn finish_aggregate(const OrderedInput& input, std::size_t a, const AggregateSlot& slot, std::size_t groups,
                              const std::uint64_t* bits, const std::uint64_t* high, const std::uint64_t* count) {
  ResultColumn out;
  out.type = aggregate_type(input, input.aggregates[a]);
  // Fresh result columns on huge pages: at 15 M groups the faults of 4 KiB
  // pages were most of the time the groups took to come back.
  if (slot.keeps_count && count) resize_on_huge_pages(out.nulls, groups);
  if (out.type == ValueType::Double) resize_on_huge_pages(out.doubles, groups);
  else resize_on_huge_pages(out.ints, groups);
  const std::size_t overflow = finish_aggregate_into(slot, groups, bits, high, count, out, 0);
  if (overflow < groups)
    throw InputError(fmt::format("{} of group {} leaves the int64 range", aggregate_label(input, input.aggregates[a]),
                                 overflow + 1));
  return out;
}

ResultColumn key_result(ValueType type, std::size_t groups, const void* values, const std::uint8_t* nulls) {
  ResultColumn out;
  out.type = type;
  if (type == ValueType::Double) resize_on_huge_pages(out.doubles, groups);
  else resize_on_huge_pages(out.ints, groups);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, groups, 1 << 16), [&](const tbb::blocked_range<std::size_t>& r) {
    for (std::size_t g = r.begin(); g < r.end(); ++g) {
      if (type == ValueType::Double) out.doubles[g] = static_cast<const double*>(values)[g];
      else if (type == ValueType::Int64) out.ints[g] = static_cast<const std::int64_t*>(values)[g];
      else out.ints[g] = static_cast<const std::int32_t*>(values)[g];
    }
  });
  if (nulls && std::any_of(nulls, nulls + groups, [](std::uint8_t b) { return b != 0; })) out.nulls.assign(nulls, nulls + groups);
  return out;
}

}  // namespace gpuolap::groupby
