// Random columns for the shared-memory operators' tests: Zipf(theta) codes
// over 0..C-1 (value k with probability proportional to 1/(k+1)^theta, as
// the zipf table generator draws them), and value columns.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace gpuolap::test {

inline std::vector<std::uint32_t> zipf_codes(std::size_t rows, std::uint32_t cardinality, double theta,
                                             std::uint64_t seed) {
  std::vector<double> cdf(cardinality);
  double sum = 0;
  for (std::uint32_t k = 0; k < cardinality; ++k) cdf[k] = sum += std::pow(k + 1.0, -theta);
  for (double& p : cdf) p /= sum;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<std::uint32_t> codes(rows);
  for (auto& c : codes)
    c = static_cast<std::uint32_t>(
        std::min<std::size_t>(cardinality - 1, std::upper_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin()));
  return codes;
}

// Doubles that are whole numbers below 2^20, so that every order of
// addition gives the same sum (exact comparison), or any doubles.
inline std::vector<double> test_doubles(std::size_t rows, bool whole, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(rows);
  for (auto& x : v) {
    const double r = static_cast<double>(rng() % (1u << 20));
    x = whole ? r - (1 << 19) : (r - (1 << 19)) / 977.0;
  }
  return v;
}

inline std::vector<std::int32_t> test_ints(std::size_t rows, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> v(rows);
  for (auto& x : v) x = static_cast<std::int32_t>(rng());
  return v;
}

}  // namespace gpuolap::test
