// Value conditions of cell/export (olap/value_condition.cpp): any text is
// read or refused with an InputError; a condition read is evaluated on a
// few values, NaN and infinities among them (under the sanitizers).
#include <limits>

#include "fuzz_input.hpp"
#include "olap/value_condition.hpp"

// Kept, so that the evaluation is not optimised away.
volatile bool last_answer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuolap;
  static constexpr double kValues[] = {0.0, -0.0, 1.0, -1.0, 1e300, -1e300, 5e-324,
                                       std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
  try {
    const olap::ValueCondition condition(fuzz::as_text(data, size));
    for (double v : kValues) last_answer = condition(v);
  } catch (const InputError&) {
  }
  return 0;
}
