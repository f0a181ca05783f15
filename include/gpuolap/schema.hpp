#pragma once
// A cube's structure: ordered dimensions and named measures (doubles).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuolap/dimension.hpp"
#include "gpuolap/key_codec.hpp"

namespace gpuolap {

// Dimensions of one base element take no key bits, so the key does not bound
// their number; engines keep per-dimension state in fixed arrays of this size.
inline constexpr size_t kMaxDimensions = 64;

class Schema {
 public:
  // Checks that dimension and measure names are unique and do not collide
  // (they share the facts file header) and that the cell key fits 64 bits.
  Schema(std::string name, std::vector<Dimension> dimensions, std::vector<std::string> measures,
         const std::string& where);

  const std::string& name() const { return name_; }
  const std::vector<Dimension>& dimensions() const { return dimensions_; }
  const Dimension& dimension(size_t d) const { return dimensions_[d]; }
  size_t dimension_count() const { return dimensions_.size(); }
  const std::vector<std::string>& measures() const { return measures_; }
  std::optional<size_t> find_dimension(std::string_view name) const;
  std::optional<size_t> find_measure(std::string_view name) const;
  const KeyCodec& codec() const { return codec_; }
  // Number of base cells (product of base counts), as a double: it may exceed 2^64.
  double base_cell_count() const;

 private:
  std::string name_;
  std::vector<Dimension> dimensions_;
  std::vector<std::string> measures_;
  KeyCodec codec_;
};

}  // namespace gpuolap
