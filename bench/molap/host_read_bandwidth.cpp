// The host's read bandwidth, the floor of a reduction over a cube's values
// (issue 23: B1 and M1 within 2x of it): THREADS threads each sum a part of
// a buffer of doubles; best of 20 reads, for each size given in doubles
// (default: machines 0.05's and biker 0.01's fact counts, then 1 GB, which
// no cache holds). Standalone, not built by CMake:
//   g++ -O3 -pthread bench/molap/host_read_bandwidth.cpp -o /tmp/read_bw && /tmp/read_bw [THREADS [N...]]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
  std::vector<size_t> sizes;
  for (int a = 2; a < argc; ++a) sizes.push_back(std::strtoull(argv[a], nullptr, 10));
  if (sizes.empty()) sizes = {2064720, 2810571, size_t{1} << 27};
  for (const size_t n : sizes) {
    std::vector<double> v(n, 1.25);
    double best = 1e30, sink = 0;
    for (int round = 0; round < 20; ++round) {
      std::vector<double> part(threads, 0.0);
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          const size_t lo = n / threads * t, hi = t + 1 == threads ? n : n / threads * (t + 1);
          double a = 0, b = 0, c = 0, d = 0;  // four chains, so that the adds overlap
          size_t i = lo;
          for (; i + 4 <= hi; i += 4) {
            a += v[i];
            b += v[i + 1];
            c += v[i + 2];
            d += v[i + 3];
          }
          for (; i < hi; ++i) a += v[i];
          part[t] = a + b + c + d;
        });
      for (std::thread& t : pool) t.join();
      const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (ms < best) best = ms;
      for (const double p : part) sink += p;
    }
    std::printf("%zu doubles (%.1f MB), %d threads: best %.3f ms, %.1f GB/s (checksum %g)\n", n, n * 8 / 1e6,
                threads, best, n * 8 / 1e6 / best, sink);
  }
}
