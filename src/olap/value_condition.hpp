#pragma once
// A condition on cell values, as Palo's cell/export takes it:
// comparisons joined by `and` and `or` (`and` binds tighter), e.g.
// ">= 1000 and < 5000" or "< 0 or > 100". Operators: < <= > >= = == != <>.
#include <string>
#include <vector>

namespace gpuolap::olap {

class ValueCondition {
 public:
  ValueCondition() = default;  // holds for every value
  // Throws InputError naming the condition and what is wrong.
  explicit ValueCondition(const std::string& text);
  bool operator()(double v) const;

 private:
  enum class Op { lt, le, gt, ge, eq, ne };
  struct Comparison {
    Op op;
    double operand;
  };
  std::vector<std::vector<Comparison>> any_of_;  // or of ands
};

}  // namespace gpuolap::olap
