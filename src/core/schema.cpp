#include "gpuolap/schema.hpp"

#include <fmt/format.h>
#include <unordered_set>

#include "gpuolap/error.hpp"

namespace gpuolap {

namespace {
KeyCodec make_codec(const std::vector<Dimension>& dimensions, const std::string& where) {
  std::vector<int> bits;
  std::vector<std::string> names;
  for (const Dimension& d : dimensions) {
    bits.push_back(d.key_bits());
    names.push_back(d.name());
  }
  return KeyCodec(bits, names, where);
}
}  // namespace

Schema::Schema(std::string name, std::vector<Dimension> dimensions,
               std::vector<std::string> measures, const std::string& where)
    : name_(std::move(name)), dimensions_(std::move(dimensions)), measures_(std::move(measures)) {
  if (dimensions_.empty()) throw InputError(fmt::format("{}: the cube has no dimensions", where));
  if (dimensions_.size() > kMaxDimensions)
    throw InputError(fmt::format("{}: the cube has {} dimensions; at most {} are supported", where,
                                 dimensions_.size(), kMaxDimensions));
  if (measures_.empty()) throw InputError(fmt::format("{}: the cube has no measures", where));
  std::unordered_set<std::string> columns;
  for (const Dimension& d : dimensions_) {
    if (d.name().empty()) throw InputError(fmt::format("{}: a dimension has an empty name", where));
    if (!columns.insert(d.name()).second)
      throw InputError(fmt::format("{}: dimension '{}' is declared twice", where, d.name()));
  }
  for (const std::string& m : measures_) {
    if (m.empty()) throw InputError(fmt::format("{}: a measure has an empty name", where));
    if (!columns.insert(m).second)
      throw InputError(fmt::format(
          "{}: measure '{}' has the name of a dimension or another measure", where, m));
  }
  codec_ = make_codec(dimensions_, where);
}

std::optional<size_t> Schema::find_dimension(std::string_view name) const {
  for (size_t d = 0; d < dimensions_.size(); ++d)
    if (dimensions_[d].name() == name) return d;
  return std::nullopt;
}

std::optional<size_t> Schema::find_measure(std::string_view name) const {
  for (size_t m = 0; m < measures_.size(); ++m)
    if (measures_[m] == name) return m;
  return std::nullopt;
}

double Schema::base_cell_count() const {
  double n = 1;
  for (const Dimension& d : dimensions_) n *= d.base_count();
  return n;
}

}  // namespace gpuolap
