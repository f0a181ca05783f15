// The GPU primitives on their own, on a GPU: target stores with copies
// under every warp pre-aggregation, the compaction, the prefilter, stage
// clocks, and two device contexts side by side. Each is checked against
// the same sums on the host, on random and on skewed targets.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "gpu/primitives/compaction.cuh"
#include "gpu/primitives/prefilter.cuh"
#include "gpu/primitives/target_store.cuh"
#include "gpu/primitives/target_store_buffers.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/resident_columns.cuh"

namespace gpuolap::gpu {
namespace {

// Every thread adds value[i] to target[i] for its rows i (a grid-stride
// loop whose bound is the same for a whole warp, as contribute() needs).
template <class Store, Preagg P, int F>
__global__ void add_rows(const uint64_t* targets, const double* values, uint64_t n, Store store) {
  extern __shared__ __align__(16) uint8_t smem[];
  store.template bind<F>(smem);
  const uint64_t threads = uint64_t{gridDim.x} * blockDim.x;
  const uint64_t id = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const unsigned copy = static_cast<unsigned>(id % (store.t.copies ? store.t.copies : 1));
  const uint64_t rounds = (n + threads - 1) / threads;
  for (uint64_t r = 0; r < rounds; ++r) {
    const uint64_t i = r * threads + id;
    const bool valid = i < n;
    const uint64_t target = valid ? targets[i] : 0;
    const Part part = valid ? Part::of(values[i]) : Part::identity();
    const unsigned first_lane_count = 1;  // stride: one target per lane
    contribute<P, F>(valid, target, part, first_lane_count, store, copy);
  }
  store.template flush<F>();
}

template <class Store, Preagg P, int F>
void launch_rows(const TargetTable& t, const uint64_t* targets, const double* values, uint64_t n, size_t shared,
                 cudaStream_t s) {
  Store store{};
  store.t = t;
  if (shared > 48 * 1024)
    GPUOLAP_CUDA_CHECK(cudaFuncSetAttribute(add_rows<Store, P, F>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared)));
  add_rows<Store, P, F><<<8, 256, shared, s>>>(targets, values, n, store);
  GPUOLAP_CHECK_LAUNCH("add_rows");
}

template <Preagg P, int F>
void launch_store(StoreKind kind, const TargetTable& t, const uint64_t* targets, const double* values, uint64_t n,
                  cudaStream_t s) {
  switch (kind) {
    case StoreKind::hash: launch_rows<HashStore, P, F>(t, targets, values, n, 0, s); break;
    case StoreKind::dense: launch_rows<DenseStore, P, F>(t, targets, values, n, 0, s); break;
    case StoreKind::shared:
      launch_rows<SharedStore, P, F>(t, targets, values, n, shared_store_bytes(F, t.targets * t.replicas), s);
      break;
  }
}

template <int F>
void launch_preagg(Preagg p, StoreKind kind, const TargetTable& t, const uint64_t* targets, const double* values,
                   uint64_t n, cudaStream_t s) {
  switch (p) {
    case Preagg::none: launch_store<Preagg::none, F>(kind, t, targets, values, n, s); break;
    case Preagg::lane0: launch_store<Preagg::lane0, F>(kind, t, targets, values, n, s); break;
    case Preagg::match: launch_store<Preagg::match, F>(kind, t, targets, values, n, s); break;
    default: launch_store<Preagg::stride, F>(kind, t, targets, values, n, s); break;
  }
}

struct Rows {
  std::vector<uint64_t> targets;
  std::vector<double> values;
};

// Rows over `targets` targets starting at `first`; skewed: most rows hit a
// few targets, so warps hold many equal targets.
Rows random_rows(uint64_t n, uint64_t first, uint64_t targets, bool skewed, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> any(0, targets - 1);
  std::uniform_int_distribution<int> few(0, 3);
  std::uniform_int_distribution<int> value(-1000, 1000);
  Rows r;
  for (uint64_t i = 0; i < n; ++i) {
    r.targets.push_back(first + (skewed && i % 8 != 0 ? static_cast<uint64_t>(few(rng)) : any(rng)));
    r.values.push_back(value(rng) / 8.0);  // exact in binary: sums do not depend on the order
  }
  return r;
}

// The expected values of an aggregate over the rows in [first, first + width).
std::map<uint64_t, double> expected(const Rows& rows, Aggregate a, uint64_t first, uint64_t width) {
  std::map<uint64_t, std::vector<double>> by_target;
  for (size_t i = 0; i < rows.targets.size(); ++i)
    if (rows.targets[i] - first < width) by_target[rows.targets[i]].push_back(rows.values[i]);
  std::map<uint64_t, double> out;
  for (const auto& [t, vs] : by_target) {
    double sum = 0;
    for (double v : vs) sum += v;
    switch (a) {
      case Aggregate::count: out[t] = static_cast<double>(vs.size()); break;
      case Aggregate::min: out[t] = *std::min_element(vs.begin(), vs.end()); break;
      case Aggregate::max: out[t] = *std::max_element(vs.begin(), vs.end()); break;
      case Aggregate::avg: out[t] = sum / static_cast<double>(vs.size()); break;
      default: out[t] = sum;
    }
  }
  return out;
}

int fields_for(Aggregate a) {
  return a == Aggregate::min ? kMinFields : a == Aggregate::max ? kMaxFields : a == Aggregate::sum ? kSumFields
                                                                                                     : kSumCountFields;
}

TEST(GpuPrimitives, TargetStoresWithCopiesAndPreaggregationCompactToTheHostSums) {
  DeviceContext ctx;
  TargetStoreBuffers buffers;
  Compactor compactor(ctx);
  DeviceBuffer<uint64_t> targets;
  DeviceBuffer<double> values;
  int cases = 0;
  for (bool skewed : {false, true})
    for (uint64_t area : {uint64_t{1}, uint64_t{300}, uint64_t{5000}}) {
      // A window of the area, as an operator aggregating in chunks uses it.
      const uint64_t first = area > 1 ? area / 3 : 0, width = area > 1 ? area / 2 : 1;
      const Rows rows = random_rows(20000, 0, area, skewed, 7 * area + skewed);
      targets.upload(rows.targets, ctx.stream());
      values.upload(rows.values, ctx.stream());
      for (StoreKind kind : {StoreKind::hash, StoreKind::dense, StoreKind::shared})
        for (unsigned copies : {1u, 4u})
          for (Preagg p : {Preagg::none, Preagg::lane0, Preagg::stride, Preagg::match})
            for (Aggregate a : {Aggregate::sum, Aggregate::count, Aggregate::min, Aggregate::max, Aggregate::avg}) {
              const int fields = fields_for(a);
              const TargetTable t =
                  buffers.prepare(kind, first, width, copies, next_pow2(std::max<uint64_t>(1024, 4 * width * copies)),
                                  fields, ctx.stream());
              with_fields(fields, [&](auto f) {
                launch_preagg<decltype(f)::value>(p, kind, t, targets.data(), values.data(), rows.targets.size(),
                                                  ctx.stream());
              });
              if (kind == StoreKind::hash) ASSERT_FALSE(buffers.overflowed(ctx.stream()));
              StageClock clock(ctx.stream(), ctx.events(), false);
              const AreaResult r = kind == StoreKind::hash ? compactor.compact_hash(t, fields, a, clock)
                                                           : compactor.compact_dense(t, fields, a, clock);
              const std::map<uint64_t, double> want = expected(rows, a, first, width);
              ASSERT_EQ(r.targets.size(), want.size()) << knob_name(kind) << " " << knob_name(p) << " copies " << copies;
              ASSERT_TRUE(std::is_sorted(r.targets.begin(), r.targets.end()));
              for (size_t i = 0; i < r.targets.size(); ++i) {
                ASSERT_TRUE(want.count(r.targets[i])) << r.targets[i];
                EXPECT_EQ(r.values[i], want.at(r.targets[i]))
                    << knob_name(kind) << " " << knob_name(p) << " copies " << copies << " aggregate "
                    << aggregate_name(a) << " target " << r.targets[i];
              }
              ++cases;
            }
    }
  EXPECT_EQ(cases, 2 * 3 * 3 * 2 * 4 * 5);
}

// A predicate of the row index, as an operator's prefilter brings one.
struct KeepEvenValues {
  const double* values;
  __device__ bool operator()(uint32_t i) const { return static_cast<long long>(values[i] * 8) % 2 == 0; }
};

TEST(GpuPrimitives, PrefilterSelectsTheRowsThePredicateKeepsInOrder) {
  DeviceContext ctx;
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{300000}}) {
    const Rows rows = random_rows(n, 0, 10, false, n);
    DeviceBuffer<double> values;
    values.upload(rows.values, ctx.stream());
    DeviceBuffer<uint32_t> kept(std::max<uint64_t>(n, 1));
    DeviceBuffer<uint64_t> count;
    const uint64_t m = select_rows(ctx, n, KeepEvenValues{values.data()}, kept.data(), count);
    std::vector<uint32_t> want;
    for (uint32_t i = 0; i < n; ++i)
      if (static_cast<long long>(rows.values[i] * 8) % 2 == 0) want.push_back(i);
    ASSERT_EQ(m, want.size());
    EXPECT_EQ(kept.download(m, ctx.stream()), want);
  }
}

// Two contexts on one GPU (the seam for several): each its own streams,
// scratch and events, working at once, with the answers of one alone.
TEST(GpuPrimitives, TwoDeviceContextsWorkSideBySide) {
  DeviceContext a(0), b(0);
  EXPECT_NE(a.stream(), b.stream());
  EXPECT_EQ(a.device(), 0);
  EXPECT_GT(a.multiprocessors(), 0);
  const Rows rows = random_rows(100000, 0, 64, true, 3);
  std::vector<std::vector<uint32_t>> kept(2);
  DeviceContext* contexts[] = {&a, &b};
  DeviceBuffer<double> values[2];
  DeviceBuffer<uint32_t> out[2];
  DeviceBuffer<uint64_t> counts[2];
  for (int c = 0; c < 2; ++c) {
    values[c].upload(rows.values, contexts[c]->stream());
    out[c].reserve(rows.values.size());
  }
  for (int c = 0; c < 2; ++c) {
    const uint64_t m = select_rows(*contexts[c], rows.values.size(), KeepEvenValues{values[c].data()},
                                   out[c].data(), counts[c]);
    kept[c] = out[c].download(m, contexts[c]->stream());
  }
  EXPECT_EQ(kept[0], kept[1]);
  EXPECT_FALSE(kept[0].empty());
}

TEST(GpuPrimitives, StageClocksTimeOnlyWhenOnAndSumRepeatedStages) {
  DeviceContext ctx;
  DeviceBuffer<uint64_t> words(1 << 20);
  for (bool on : {false, true}) {
    StageClock clock(ctx.stream(), ctx.events(), on);
    for (int i = 0; i < 2; ++i) {
      clock.start("fill");
      fill_words(words.data(), 1 << 20, i, ctx.stream());
      clock.stop();
    }
    clock.start("fill again");
    fill_words(words.data(), 1 << 20, 7, ctx.stream());
    clock.stop();
    GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
    const StageTimeList times = clock.read();
    if (!on) {
      EXPECT_TRUE(times.empty());
      continue;
    }
    ASSERT_EQ(times.size(), 2u);
    EXPECT_EQ(times[0].first, "fill");
    EXPECT_EQ(times[1].first, "fill again");
    EXPECT_GT(times[0].second, 0.0);
  }
  EXPECT_EQ(words.download(1, ctx.stream())[0], 7u);
}

}  // namespace
}  // namespace gpuolap::gpu

namespace gpuolap::gpu {
namespace {

// Columns stay on the device until their table's version changes.
TEST(GpuRuntime, ResidentColumnsUploadOncePerVersion) {
  DeviceContext ctx;
  ResidentColumns columns;
  std::vector<int64_t> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) a[i] = i, b[i] = -i;
  bool uploaded = false;
  const int64_t* first = columns.ensure(1, "a", 7, a.data(), a.size(), ctx.stream(), &uploaded);
  EXPECT_TRUE(uploaded);
  EXPECT_EQ(columns.ensure(1, "a", 7, a.data(), a.size(), ctx.stream(), &uploaded), first);
  EXPECT_FALSE(uploaded);
  const int64_t* other = columns.ensure(1, "b", 7, b.data(), b.size(), ctx.stream(), &uploaded);
  EXPECT_TRUE(uploaded);
  std::vector<int64_t> back(1000);
  GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(back.data(), other, 1000 * sizeof(int64_t), cudaMemcpyDeviceToHost, ctx.stream()));
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  EXPECT_EQ(back, b);
  // A new version of the table replaces the column's values.
  columns.ensure(1, "b", 8, a.data(), a.size(), ctx.stream(), &uploaded);
  EXPECT_TRUE(uploaded);
  GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(back.data(), other, 1000 * sizeof(int64_t), cudaMemcpyDeviceToHost, ctx.stream()));
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(ctx.stream()));
  EXPECT_EQ(back, a);
  EXPECT_EQ(columns.bytes(), 2 * 1000 * sizeof(int64_t));
  columns.drop(1);
  EXPECT_EQ(columns.count(), 0u);
}

}  // namespace
}  // namespace gpuolap::gpu
