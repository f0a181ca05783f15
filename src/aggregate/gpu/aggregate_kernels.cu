// Instantiates the aggregation kernel for every store, pre-aggregation method
// and field set, and dispatches to them at run time.
#include "aggregate_kernel.cuh"
#include "aggregate_kernels.hpp"
#include "cuda_check.cuh"

namespace gpuolap::gpu {

namespace {

template <class Store, Preagg P, int F, int D, bool Single>
void launch_shape(const LaunchShape& s, const KernelInput& in, const DeviceMap& map, const TargetTable& table) {
  auto kernel = aggregate_kernel<Store, P, F, D, Single>;
  if (s.shared_bytes > 48 * 1024)
    GPUOLAP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(s.shared_bytes)));
  Store store{};
  store.t = table;
  kernel<<<s.grid, s.block, s.shared_bytes, s.stream>>>(in, map, store);
  GPUOLAP_CHECK_LAUNCH("aggregate_kernel");
}

template <class Store, Preagg P, int F>
void launch(const LaunchShape& s, const KernelInput& in, const DeviceMap& map, const TargetTable& table) {
  if (s.lean) launch_shape<Store, P, F, kFewDims, true>(s, in, map, table);
  else launch_shape<Store, P, F, kMaxDims, false>(s, in, map, table);
}

template <class Store, Preagg P, int F, int D, bool Single>
int occupancy_of(int block, size_t shared_bytes) {
  auto kernel = aggregate_kernel<Store, P, F, D, Single>;
  if (shared_bytes > 48 * 1024)
    GPUOLAP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_bytes)));
  int blocks = 0;
  GPUOLAP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, shared_bytes));
  return blocks;
}

// Calls fn.template call<Store, P, F>() for the run-time choice.
template <class Store, Preagg P, class Fn>
auto dispatch_fields(int fields, Fn& fn) {
  switch (fields) {
    case kSumFields: return fn.template call<Store, P, kSumFields>();
    case kSumCountFields: return fn.template call<Store, P, kSumCountFields>();
    case kMinFields: return fn.template call<Store, P, kMinFields>();
    case kMinMaxFields: return fn.template call<Store, P, kMinMaxFields>();
    default: return fn.template call<Store, P, kMaxFields>();
  }
}

template <class Store, class Fn>
auto dispatch_preagg(Preagg preagg, int fields, Fn& fn) {
  switch (preagg) {
    case Preagg::none: return dispatch_fields<Store, Preagg::none>(fields, fn);
    case Preagg::lane0: return dispatch_fields<Store, Preagg::lane0>(fields, fn);
    case Preagg::stride: return dispatch_fields<Store, Preagg::stride>(fields, fn);
    default: return dispatch_fields<Store, Preagg::match>(fields, fn);
  }
}

template <class Fn>
auto dispatch(StoreKind store, Preagg preagg, int fields, Fn& fn) {
  switch (store) {
    case StoreKind::hash: return dispatch_preagg<HashStore>(preagg, fields, fn);
    case StoreKind::dense: return dispatch_preagg<DenseStore>(preagg, fields, fn);
    default: return dispatch_preagg<SharedStore>(preagg, fields, fn);
  }
}

struct Launcher {
  const LaunchShape& shape;
  const KernelInput& input;
  const DeviceMap& map;
  const TargetTable& table;
  template <class S, Preagg P, int F>
  int call() {
    launch<S, P, F>(shape, input, map, table);
    return 0;
  }
};

struct OccupancyQuery {
  bool lean;
  int block;
  size_t shared_bytes;
  template <class S, Preagg P, int F>
  int call() {
    return lean ? occupancy_of<S, P, F, kFewDims, true>(block, shared_bytes)
                : occupancy_of<S, P, F, kMaxDims, false>(block, shared_bytes);
  }
};

}  // namespace

void upload_constant_map(const void* bytes, size_t n, cudaStream_t stream) {
  GPUOLAP_CUDA_CHECK(cudaMemcpyToSymbolAsync(c_map, bytes, n, 0, cudaMemcpyHostToDevice, stream));
}

void launch_aggregate(StoreKind store, Preagg preagg, int fields, const LaunchShape& shape,
                      const KernelInput& input, const DeviceMap& map, const TargetTable& table) {
  Launcher launcher{shape, input, map, table};
  dispatch(store, preagg, fields, launcher);
}

namespace {
template <class Store, int F>
void expand(const LaunchShape& s, const Cell* cells, const uint8_t* nonempty, uint64_t n, const ExpandMap& map,
            const TargetTable& table) {
  Store store{};
  store.t = table;
  expand_kernel<Store, F><<<s.grid, s.block, 0, s.stream>>>(cells, nonempty, n, map, store);
  GPUOLAP_CHECK_LAUNCH("expand_kernel");
}

template <class Store>
void expand_fields(int fields, const LaunchShape& s, const Cell* cells, const uint8_t* nonempty, uint64_t n,
                   const ExpandMap& map, const TargetTable& table) {
  switch (fields) {
    case kSumFields: return expand<Store, kSumFields>(s, cells, nonempty, n, map, table);
    case kSumCountFields: return expand<Store, kSumCountFields>(s, cells, nonempty, n, map, table);
    case kMinFields: return expand<Store, kMinFields>(s, cells, nonempty, n, map, table);
    default: return expand<Store, kMaxFields>(s, cells, nonempty, n, map, table);
  }
}
}  // namespace

void launch_expand(StoreKind store, int fields, const LaunchShape& shape, const Cell* cells, const uint8_t* nonempty,
                   uint64_t n, const ExpandMap& map, const TargetTable& table) {
  if (store == StoreKind::hash) expand_fields<HashStore>(fields, shape, cells, nonempty, n, map, table);
  else expand_fields<DenseStore>(fields, shape, cells, nonempty, n, map, table);
}

size_t shared_bytes_per_target(int fields) {
  size_t bytes = 1;  // touched flag
  if (fields & kSum) bytes += 8;
  if (fields & kMin) bytes += 8;
  if (fields & kMax) bytes += 8;
  if (fields & kCount) bytes += 4;
  return bytes;
}

int resident_blocks_per_sm(StoreKind store, Preagg preagg, int fields, bool lean, int block, size_t shared_bytes) {
  OccupancyQuery query{lean, block, shared_bytes};
  return dispatch(store, preagg, fields, query);
}

}  // namespace gpuolap::gpu
