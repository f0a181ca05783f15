// The one table of names of each gpu knob: what the CLI parses, the plan
// text prints and the errors list.
#include "gpuolap/gpu_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <utility>

#include "gpuolap/error.hpp"

namespace gpuolap {

namespace {

template <class Knob>
using Names = std::span<const std::pair<Knob, const char*>>;

template <class Knob>
Names<Knob> names_of();

template <>
Names<StoreKind> names_of() {
  static constexpr std::pair<StoreKind, const char*> kNames[] = {
      {StoreKind::hash, "hash"}, {StoreKind::dense, "dense"}, {StoreKind::shared, "shared"}};
  return kNames;
}
template <>
Names<Preagg> names_of() {
  static constexpr std::pair<Preagg, const char*> kNames[] = {{Preagg::none, "none"},
                                                              {Preagg::lane0, "lane0"},
                                                              {Preagg::stride, "stride"},
                                                              {Preagg::match, "match"},
                                                              {Preagg::run, "run"}};
  return kNames;
}
template <>
Names<Prefilter> names_of() {
  static constexpr std::pair<Prefilter, const char*> kNames[] = {{Prefilter::compact, "compact"},
                                                                 {Prefilter::fused, "fused"}};
  return kNames;
}
template <>
Names<MapMemory> names_of() {
  static constexpr std::pair<MapMemory, const char*> kNames[] = {{MapMemory::constant, "constant"},
                                                                 {MapMemory::global, "global"}};
  return kNames;
}
template <>
Names<KernelKind> names_of() {
  static constexpr std::pair<KernelKind, const char*> kNames[] = {{KernelKind::source, "source"},
                                                                  {KernelKind::work_list, "work-list"},
                                                                  {KernelKind::cdp, "cdp"},
                                                                  {KernelKind::hybrid, "hybrid"}};
  return kNames;
}
template <>
Names<ChildGrid> names_of() {
  static constexpr std::pair<ChildGrid, const char*> kNames[] = {{ChildGrid::dynamic, "dynamic"},
                                                                 {ChildGrid::fixed, "fixed"}};
  return kNames;
}
template <>
Names<TwoPhase> names_of() {
  static constexpr std::pair<TwoPhase, const char*> kNames[] = {{TwoPhase::on, "on"}, {TwoPhase::off, "off"}};
  return kNames;
}

}  // namespace

template <class Knob>
const char* knob_name(Knob value) {
  for (const auto& [v, name] : names_of<Knob>())
    if (v == value) return name;
  return "?";
}

template <class Knob>
std::string knob_names(bool with_auto) {
  std::string list = with_auto ? "auto" : "";
  for (const auto& [v, name] : names_of<Knob>()) list += (list.empty() ? "" : ", ") + std::string(name);
  return list;
}

template <class Knob>
Knob parse_knob(std::string_view name, std::string_view flag) {
  for (const auto& [v, n] : names_of<Knob>())
    if (name == n) return v;
  throw InputError(fmt::format("{} {}: expected one of {}", flag, name, knob_names<Knob>(false)));
}

template <class Knob>
std::optional<Knob> parse_auto_knob(std::string_view name, std::string_view flag) {
  if (name == "auto") return std::nullopt;
  for (const auto& [v, n] : names_of<Knob>())
    if (name == n) return v;
  throw InputError(fmt::format("{} {}: expected one of {}", flag, name, knob_names<Knob>(true)));
}

GpuSet parse_gpu_set(std::string_view text, std::string_view flag) {
  GpuSet set;
  if (text == "all") {
    set.all = true;
    return set;
  }
  const auto bad = [&](std::string_view why) {
    return InputError(fmt::format("{} {}: {} (expected all, or device numbers such as 0,1)", flag, text, why));
  };
  size_t at = 0;
  for (;;) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    if (item.empty()) throw bad("an empty device number");
    int device = 0;
    for (const char c : item) {
      if (c < '0' || c > '9') throw bad(fmt::format("'{}' is not a device number", item));
      device = device * 10 + (c - '0');
      if (device > 1023) throw bad(fmt::format("device {} is out of range", item));
    }
    set.devices.push_back(device);
    if (comma == text.size()) break;
    at = comma + 1;
  }
  return set;
}

std::string gpu_set_name(const GpuSet& set) {
  if (set.all) return "all";
  if (set.devices.empty()) return "auto";
  std::string s;
  for (const int d : set.devices) s += (s.empty() ? "" : ",") + std::to_string(d);
  return s;
}

#define GPUOLAP_KNOB(Knob)                                                                  \
  template const char* knob_name<Knob>(Knob);                                               \
  template std::string knob_names<Knob>(bool);                                              \
  template Knob parse_knob<Knob>(std::string_view, std::string_view);                       \
  template std::optional<Knob> parse_auto_knob<Knob>(std::string_view, std::string_view);
GPUOLAP_KNOB(StoreKind)
GPUOLAP_KNOB(Preagg)
GPUOLAP_KNOB(Prefilter)
GPUOLAP_KNOB(MapMemory)
GPUOLAP_KNOB(KernelKind)
GPUOLAP_KNOB(ChildGrid)
GPUOLAP_KNOB(TwoPhase)
#undef GPUOLAP_KNOB

}  // namespace gpuolap
