// htree: the H-tree paper's synthetic tables, named as it names them
// (after the stream-cube paper): DxCyTz has x dimensions d1..dx, each of
// cardinality y (values 0..y-1), and z tuples (K: thousands, M: millions),
// with one measure m (integers 1..100, uniform). Dimension values are
// uniform (theta 0, the default) or Zipf(theta): value k with probability
// proportional to 1 / (k + 1)^theta, each dimension drawn independently.
// The table is named by its shape in lower case (d15c40t600k).
#include <fmt/format.h>
#include <tbb/parallel_for.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "fact_sampler.hpp"
#include "gpuolap/error.hpp"
#include "table_generators.hpp"

namespace gpuolap {

using namespace generate_detail;
using table::ColumnType;

HTreeShape parse_htree_shape(const std::string& shape) {
  HTreeShape s;
  const char* p = shape.data();
  const char* end = p + shape.size();
  auto number = [&](char letter, std::uint64_t& out) {
    if (p == end || std::toupper(static_cast<unsigned char>(*p)) != letter) return false;
    ++p;
    auto [next, ec] = std::from_chars(p, end, out);
    if (ec != std::errc() || next == p) return false;
    p = next;
    return true;
  };
  std::uint64_t d = 0, c = 0, t = 0;
  bool ok = number('D', d) && number('C', c) && number('T', t);
  if (ok && p != end) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(*p++)));
    if (unit == 'K') t *= 1000;
    else if (unit == 'M') t *= 1000000;
    else ok = false;
  }
  if (!ok || p != end || d < 1 || d > 64 || c < 1 || c > (std::uint64_t{1} << 24) || t > (std::uint64_t{1} << 31))
    throw InputError(fmt::format("--shape '{}' is not DxCyTz (x 1-64 dimensions, y 1-2^24 values each, z tuples up to "
                                 "2^31, K or M allowed: D15C40T600K)",
                                 shape));
  s.dimensions = static_cast<int>(d);
  s.cardinality = c;
  s.tuples = t;
  return s;
}

std::vector<table::Table> generate_htree(const TableGeneratorOptions& o) {
  const HTreeShape shape = parse_htree_shape(o.shape);
  if (!(o.theta >= 0) || !std::isfinite(o.theta) || o.theta > 10)
    throw InputError(fmt::format("--theta must be a number from 0 to 10, not {}", o.theta));
  const std::size_t c = shape.cardinality, n = shape.tuples;
  std::vector<double> cdf(c);
  double sum = 0;
  for (std::size_t k = 0; k < c; ++k) cdf[k] = sum += std::pow(static_cast<double>(k + 1), -o.theta);
  for (double& p : cdf) p /= sum;
  cdf.back() = 1.0;
  table::Table t;
  std::string name = o.shape;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return std::tolower(ch); });
  t.name = name;
  for (int d = 0; d < shape.dimensions; ++d) t.columns.push_back(make_column(fmt::format("d{}", d + 1), ColumnType::Int64, n));
  t.columns.push_back(make_column("m", ColumnType::Int64, n));
  constexpr std::size_t kBlock = 1 << 16;
  tbb::parallel_for(std::size_t{0}, (n + kBlock - 1) / kBlock, [&](std::size_t block) {
    Rng rng(o.seed, (std::uint64_t{5} << 40) + block);
    for (std::size_t r = block * kBlock; r < std::min(n, (block + 1) * kBlock); ++r) {
      for (int d = 0; d < shape.dimensions; ++d) {
        const std::uint64_t word = rng.next();
        t.columns[d].int64s[r] =
            o.theta == 0 ? below(word, static_cast<std::uint32_t>(c))
                         : std::upper_bound(cdf.begin(), cdf.end(), unit_interval(word)) - cdf.begin();
      }
      t.columns.back().int64s[r] = 1 + static_cast<std::int64_t>(rng.below(100));
    }
  });
  std::vector<table::Table> out;
  out.push_back(std::move(t));
  return out;
}

}  // namespace gpuolap
