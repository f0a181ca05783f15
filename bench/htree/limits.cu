// The GPU's limits the H-tree bench compares with: streaming-read bandwidth
// and the rate of dependent random 4-byte reads.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "limits.hpp"

namespace {
using gpuolap::DeviceBuffer;
__global__ void stream_read(const ulonglong2* a, std::size_t n, unsigned long long* sink) {
  unsigned long long acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    acc ^= a[i].x + a[i].y;
  if (acc == 0x5eed) *sink = acc;
}

// Dependent random reads: each thread follows a chain of 4-byte indices, as
// a side-link node's walk up its parents does.
__global__ void chase(const std::uint32_t* next, std::size_t threads, int steps, unsigned long long* sink) {
  const std::size_t t = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  if (t >= threads) return;
  std::uint32_t at = static_cast<std::uint32_t>(t * 2654435761u) & ((1u << 28) - 1);  // the table holds 2^28
  for (int s = 0; s < steps; ++s) at = next[at];
  if (at == 0xffffffffu) *sink = at;
}

// A block's 32 queries: codes in, answers out, through shared memory in
// 16-byte words, as the lookup kernel moves them (the answers made from
// the codes read, so that the reads are not dropped).
__global__ void move_batch(const uint4* codes, std::size_t code_words, uint4* answers, std::size_t answer_words) {
  extern __shared__ uint4 staged[];
  const std::size_t first_code = blockIdx.x * code_words, first_answer = blockIdx.x * answer_words;
  for (std::size_t v = threadIdx.x; v < code_words; v += blockDim.x) staged[v] = codes[first_code + v];
  __syncthreads();
  for (std::size_t v = threadIdx.x; v < answer_words; v += blockDim.x) {
    const uint4 c = staged[v % code_words];
    answers[first_answer + v] = make_uint4(c.x ^ c.w, c.y, c.z, c.w ^ v);
  }
}

__global__ void empty_kernel() {}

__global__ void raise_flag(volatile int* flag) { *flag = 1; }

double host_median_ms(int runs, const std::function<void()>& launch_and_wait) {
  std::vector<double> t;
  for (int i = 0; i < runs; ++i) {
    const auto s = std::chrono::steady_clock::now();
    launch_and_wait();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

double in_place_floor_ms(std::size_t n, std::size_t code_bytes, std::size_t answer_bytes) {
  constexpr std::size_t kQueries = 32;
  const std::size_t blocks = (n + kQueries - 1) / kQueries;
  const std::size_t code_words = (kQueries * code_bytes + 15) / 16, answer_words = (kQueries * answer_bytes + 15) / 16;
  void *codes = nullptr, *answers = nullptr;
  GPUOLAP_CUDA_CHECK(cudaHostAlloc(&codes, blocks * code_words * 16, cudaHostAllocMapped | cudaHostAllocPortable));
  GPUOLAP_CUDA_CHECK(cudaHostAlloc(&answers, blocks * answer_words * 16, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(codes, 1, blocks * code_words * 16);
  const double ms = host_median_ms(101, [&] {
    move_batch<<<blocks, kQueries, code_words * 16>>>(static_cast<const uint4*>(codes), code_words,
                                                       static_cast<uint4*>(answers), answer_words);
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(0));
  });
  GPUOLAP_CUDA_CHECK(cudaFreeHost(codes));
  GPUOLAP_CUDA_CHECK(cudaFreeHost(answers));
  return ms;
}

double empty_launch_ms() {
  return host_median_ms(101, [] {
    empty_kernel<<<1, 32>>>();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(0));
  });
}

double flagged_launch_ms() {
  int* flag = nullptr;
  GPUOLAP_CUDA_CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  volatile int* seen = flag;
  const double ms = host_median_ms(101, [&] {
    *seen = 0;
    raise_flag<<<1, 1>>>(flag);
    while (!*seen) {
    }
  });
  GPUOLAP_CUDA_CHECK(cudaDeviceSynchronize());
  GPUOLAP_CUDA_CHECK(cudaFreeHost(flag));
  return ms;
}

Limits measure_limits() {
  Limits l;
  const std::size_t n = std::size_t{1} << 28;  // 4 GiB of 16-byte words
  DeviceBuffer<ulonglong2> a(n);
  DeviceBuffer<unsigned long long> sink(1);
  GPUOLAP_CUDA_CHECK(cudaMemset(a.data(), 1, n * 16));
  // The median of `runs` launches, timed with events.
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  auto median_ms = [&](int runs, auto&& launch) {
    std::vector<float> t;
    for (int i = 0; i < runs; ++i) {
      cudaEventRecord(e0);
      launch();
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return static_cast<double>(t[t.size() / 2]);
  };
  l.bandwidth_gbs = n * 16.0 / (median_ms(5, [&] { stream_read<<<132 * 8, 512>>>(a.data(), n, sink.data()); }) * 1e6);
  // Random next indices over 2^28 4-byte slots (1 GiB: past the L2).
  const std::size_t slots = std::size_t{1} << 28;
  std::vector<std::uint32_t> next(slots);
  std::mt19937_64 rng(1);
  for (std::size_t i = 0; i < slots; ++i) next[i] = static_cast<std::uint32_t>(rng() & (slots - 1));
  DeviceBuffer<std::uint32_t> d(slots);
  d.upload(next);
  const std::size_t threads = std::size_t{1} << 22;
  const int steps = 64;
  const double chase_ms =
      median_ms(3, [&] { chase<<<(threads + 255) / 256, 256>>>(d.data(), threads, steps, sink.data()); });
  l.random_reads_gs = threads * double(steps) / (chase_ms * 1e6);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return l;
}

