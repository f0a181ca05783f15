// A parent set's key projected to a child's (coded_table.hpp): the 32-bit
// divisions by multiplication (division_magic) exact for every divisor and
// dividend class, and the narrow projection equal to the 64-bit one.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "cube/coded_table.hpp"
#include "cube/cube_cases.hpp"

namespace gpuolap::cube {
namespace {

TEST(Projection, DivisionByMagicIsExact) {
  std::mt19937_64 rng(11);
  std::vector<std::uint32_t> divisors{1, 2, 3, 5, 7, 10, 12, 31, 365, 641, 1000, 65535, 65536, 65537,
                                      (1u << 31) - 1, 1u << 31, (1u << 31) + 1, 0xfffffffeu, 0xffffffffu};
  for (int i = 0; i < 200; ++i) divisors.push_back(static_cast<std::uint32_t>(rng() >> (32 + rng() % 32)) | 1u);
  for (std::uint32_t d : divisors) {
    const std::uint64_t magic = division_magic(d);
    std::vector<std::uint32_t> dividends{0, 1, d - 1, d, d + 1, 0x7fffffffu, 0x80000000u, 0xfffffffeu, 0xffffffffu};
    for (std::uint32_t m : {2u, 3u, 1000u}) dividends.push_back(d * m - 1), dividends.push_back(d * m);
    for (int i = 0; i < 2000; ++i) dividends.push_back(static_cast<std::uint32_t>(rng()));
    for (std::uint32_t n : dividends) ASSERT_EQ(divide_by_magic(n, magic), n / d) << n << " / " << d;
  }
}

TEST(Projection, NarrowKeysProjectAsWideOnes) {
  const table::Table facts = test::random_table(5000, 9);
  for (const test::SpecCase& c : test::spec_cases()) {
    const CodedTable coded = code_table(facts, test::make_spec(c, facts));
    if (coded.finest.cells >= (std::uint64_t{1} << 32)) continue;
    for (SetMask mask = 0; mask <= coded.finest.mask; ++mask) {
      if ((mask & coded.finest.mask) != mask) continue;
      Projection narrow = projection(coded, coded.finest, layout_of(coded, mask));
      ASSERT_TRUE(narrow.narrow) << c.name;
      Projection wide = narrow;
      wide.narrow = false;
      for (std::uint64_t key : coded.keys) ASSERT_EQ(narrow(key), wide(key)) << c.name << ", set " << mask;
    }
  }
}

}  // namespace
}  // namespace gpuolap::cube
