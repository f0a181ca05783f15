// Values as unsigned words whose order is the values' order, so that MIN and
// MAX are one unsigned atomicMin/atomicMax on the GPU (and the same compare
// on the CPU). Doubles order as PostgreSQL's: -0.0 below +0.0, NaN above
// everything. Host and device functions.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GPUOLAP_HD __host__ __device__ inline
#else
#define GPUOLAP_HD inline
#endif

namespace gpuolap::groupby {

GPUOLAP_HD std::uint64_t ordered_bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  if (x != x) return ~std::uint64_t{0};  // every NaN as the largest
  return (b >> 63) ? ~b : (b | (std::uint64_t{1} << 63));
}
GPUOLAP_HD double double_of_ordered(std::uint64_t k) {
  const std::uint64_t b = (k >> 63) ? (k & ~(std::uint64_t{1} << 63)) : ~k;
  double x;
  std::memcpy(&x, &b, 8);
  return x;
}
GPUOLAP_HD std::uint64_t ordered_bits(std::int32_t x) {
  return static_cast<std::uint64_t>(static_cast<std::int64_t>(x) + (std::int64_t{1} << 62));
}
GPUOLAP_HD std::int64_t int_of_ordered(std::uint64_t k) {
  return static_cast<std::int64_t>(k) - (std::int64_t{1} << 62);
}

}  // namespace gpuolap::groupby

#undef GPUOLAP_HD
