#include "gpuolap/key_codec.hpp"

#include <fmt/format.h>

#include "gpuolap/error.hpp"

namespace gpuolap {

KeyCodec::KeyCodec(const std::vector<int>& bits, const std::vector<std::string>& dimension_names,
                   const std::string& where) {
  for (int b : bits) total_bits_ += b;
  if (total_bits_ > 64) {
    std::string detail;
    for (size_t d = 0; d < bits.size(); ++d)
      detail += fmt::format("{}{} {}", d ? ", " : "", dimension_names[d], bits[d]);
    throw InputError(fmt::format(
        "{}: the cell key needs {} bits ({}), more than the 64 this version supports", where,
        total_bits_, detail));
  }
  int shift = total_bits_;
  for (int b : bits) {
    shift -= b;
    shifts_.push_back(shift);
    masks_.push_back(b == 0 ? 0 : (b == 64 ? ~uint64_t{0} : (uint64_t{1} << b) - 1));
  }
}

}  // namespace gpuolap
