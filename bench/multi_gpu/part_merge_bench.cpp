// The host merge of a query split over several GPUs (merge_parts), on parts
// shaped like the thesis queries' on 4 GPUs: B3 (each part fills all of its
// 17,460 dense targets) and M3 (the 13,971 filled of its 874,437, each part
// holding 90 % of them), and on 2 and 8 parts. Prints the best of 50 runs per shape, in microseconds.
//   build-cpu/bench/gpuolap_part_merge_bench
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "molap/planning/part_merge.hpp"

namespace {

using gpuolap::Aggregate;
using gpuolap::QueryPart;

// `parts` parts over an area of `area` targets of which `filled` are
// filled: a part holds each of those with probability `share` (all of them
// at 1), ascending, with counts for avg.
std::vector<QueryPart> make_parts(size_t parts, uint64_t area, size_t filled, double share, bool avg, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> all(area);
  for (uint64_t t = 0; t < area; ++t) all[t] = t;
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(filled);
  std::sort(all.begin(), all.end());
  std::bernoulli_distribution holds(share);
  std::vector<QueryPart> out(parts);
  for (QueryPart& p : out) {
    for (const uint64_t t : all)
      if (holds(rng)) {
        p.result.targets.push_back(t);
        p.result.values.push_back(static_cast<double>(rng() % 1000) * 0.25);
      }
    if (avg) p.counts.assign(p.result.targets.size(), 3.0);
  }
  return out;
}

}  // namespace

int main() {
  struct Shape {
    const char* name;
    size_t parts;
    uint64_t area;
    size_t filled;
    double share;
    Aggregate aggregate;
  };
  const Shape shapes[] = {
      {"B3-like, 4 parts, sum", 4, 17460, 17460, 1.0, Aggregate::sum},
      {"M3-like, 4 parts, sum", 4, 874437, 13971, 0.9, Aggregate::sum},
      {"M3-like, 4 parts, avg", 4, 874437, 13971, 0.9, Aggregate::avg},
      {"B3-like, 2 parts, sum", 2, 17460, 17460, 1.0, Aggregate::sum},
      {"B3-like, 8 parts, sum", 8, 17460, 17460, 1.0, Aggregate::sum},
  };
  for (const Shape& s : shapes) {
    const std::vector<QueryPart> parts = make_parts(s.parts, s.area, s.filled, s.share, s.aggregate == Aggregate::avg, 7);
    double best = 1e30;
    size_t size = 0;
    for (int run = 0; run < 50; ++run) {
      std::vector<QueryPart> copy = parts;  // merge_parts consumes its parts
      const auto start = std::chrono::steady_clock::now();
      const gpuolap::AreaResult r = gpuolap::merge_parts(copy, s.aggregate);
      best = std::min(best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
      size = r.targets.size();
    }
    std::printf("%-24s %8zu targets out  %8.1f us\n", s.name, size, best);
  }
}
