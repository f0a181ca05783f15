// Instantiates the aggregation kernel for every store, pre-aggregation method
// and field set, and dispatches to them at run time.
#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>
#include <stdexcept>

#include "aggregate_kernel.cuh"
#include "aggregate_kernels.hpp"
#include "gpu/runtime/cuda_check.cuh"
#include "lean_run_kernel.cuh"
#include "work_list_kernel.cuh"

namespace gpuolap::gpu {

namespace {

// What the runtime said about a kernel on a device, kept: every query plans
// its launch, and these calls took part of its planning time.
struct KernelFacts {
  std::mutex mutex;
  std::map<std::pair<const void*, int>, size_t> shared_allowed;               // (kernel, device) -> bytes
  std::map<std::tuple<const void*, int, int, size_t>, int> blocks_per_sm;  // (kernel, device, block, shared)
};
KernelFacts& kernel_facts() {
  static KernelFacts facts;
  return facts;
}

int current_device() {
  int device = 0;
  GPUOLAP_CUDA_CHECK(cudaGetDevice(&device));
  return device;
}

// Lets a kernel take more than the default 48 KB of dynamic shared memory.
template <class Kernel>
void allow_shared(Kernel kernel, size_t shared_bytes) {
  if (shared_bytes <= 48 * 1024) return;
  KernelFacts& facts = kernel_facts();
  const std::lock_guard lock(facts.mutex);
  size_t& allowed = facts.shared_allowed[{reinterpret_cast<const void*>(kernel), current_device()}];
  if (shared_bytes <= allowed) return;
  GPUOLAP_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared_bytes)));
  allowed = shared_bytes;
}

// Blocks of `block` threads of the kernel that fit on one multiprocessor.
template <class Kernel>
int blocks_per_sm(Kernel kernel, int block, size_t shared_bytes) {
  allow_shared(kernel, shared_bytes);
  KernelFacts& facts = kernel_facts();
  const std::lock_guard lock(facts.mutex);
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), current_device(), block, shared_bytes);
  if (const auto known = facts.blocks_per_sm.find(key); known != facts.blocks_per_sm.end()) return known->second;
  int blocks = 0;
  GPUOLAP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block, shared_bytes));
  facts.blocks_per_sm.emplace(key, blocks);
  return blocks;
}

template <class Store, Preagg P, int F, int D, bool Single>
void launch_shape(const LaunchShape& s, const KernelInput& in, const DeviceMap& map, const TargetTable& table) {
  auto kernel = aggregate_kernel<Store, P, F, D, Single>;
  allow_shared(kernel, s.shared_bytes);
  Store store{};
  store.t = table;
  kernel<<<s.grid, s.block, s.shared_bytes, s.stream>>>(in, map, store);
  GPUOLAP_CHECK_LAUNCH("aggregate_kernel");
}

// Maps of at most kFewDims dimensions get kernels whose loops over the
// dimensions are that short (M3's walk: 3 dimensions, not 16 predicated).
template <class Store, Preagg P, int F>
void launch(const LaunchShape& s, const KernelInput& in, const DeviceMap& map, const TargetTable& table) {
  if (s.lean) launch_shape<Store, P, F, kFewDims, true>(s, in, map, table);
  else if (map.dims <= kFewDims) launch_shape<Store, P, F, kFewDims, false>(s, in, map, table);
  else launch_shape<Store, P, F, kMaxDims, false>(s, in, map, table);
}

template <class Store, Preagg P, int F, int D, bool Single>
int occupancy_of(int block, size_t shared_bytes) {
  return blocks_per_sm(aggregate_kernel<Store, P, F, D, Single>, block, shared_bytes);
}

// Calls fn.template call<Store, P, F>() for the run-time choice.
template <class Store, Preagg P, class Fn>
auto dispatch_fields(int fields, Fn& fn) {
  switch (fields) {
    case kExactFields: return fn.template call<Store, P, kExactFields>();
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
    case Preagg::match: return dispatch_fields<Store, Preagg::match>(fields, fn);
    default: throw std::logic_error("Preagg::run has its own kernel: launch_lean_run");
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
  bool few_dims;
  int block;
  size_t shared_bytes;
  template <class S, Preagg P, int F>
  int call() {
    if (lean) return occupancy_of<S, P, F, kFewDims, true>(block, shared_bytes);
    if (few_dims) return occupancy_of<S, P, F, kFewDims, false>(block, shared_bytes);
    return occupancy_of<S, P, F, kMaxDims, false>(block, shared_bytes);
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
struct WorkListLauncher {
  const LaunchShape& shape;
  const KernelInput& input;
  uint64_t offset, n;
  const uint64_t* ends;
  const DeviceMap& map;
  const TargetTable& table;
  template <class S, Preagg P, int F, int D>
  void launch_dims() {
    auto kernel = work_list_kernel<S, P, F, D>;
    allow_shared(kernel, shape.shared_bytes);
    S store{};
    store.t = table;
    kernel<<<shape.grid, shape.block, shape.shared_bytes, shape.stream>>>(input, offset, n, ends, map, store);
    GPUOLAP_CHECK_LAUNCH("work_list_kernel");
  }
  template <class S, Preagg P, int F>
  int call() {
    if (map.dims <= kFewDims) launch_dims<S, P, F, kFewDims>();
    else launch_dims<S, P, F, kMaxDims>();
    return 0;
  }
};

struct WorkListOccupancy {
  bool few_dims;
  int block;
  size_t shared_bytes;
  template <class S, Preagg P, int F>
  int call() {
    return few_dims ? blocks_per_sm(work_list_kernel<S, P, F, kFewDims>, block, shared_bytes)
                    : blocks_per_sm(work_list_kernel<S, P, F, kMaxDims>, block, shared_bytes);
  }
};
}  // namespace

void launch_count_fan_out(const KernelInput& input, uint64_t offset, uint64_t n, const DeviceMap& map,
                          uint64_t* counts, cudaStream_t stream) {
  const int grid = static_cast<int>(std::min<uint64_t>(4096, (n + 255) / 256));
  count_fan_out_kernel<<<std::max(grid, 1), 256, 0, stream>>>(input, offset, n, map, counts);
  GPUOLAP_CHECK_LAUNCH("count_fan_out_kernel");
}

void launch_work_list(StoreKind store, Preagg preagg, int fields, const LaunchShape& shape, const KernelInput& input,
                      uint64_t offset, uint64_t n, const uint64_t* ends, const DeviceMap& map,
                      const TargetTable& table) {
  WorkListLauncher launcher{shape, input, offset, n, ends, map, table};
  dispatch(store, preagg, fields, launcher);
}

int work_list_blocks_per_sm(StoreKind store, Preagg preagg, int fields, bool few_dims, int block,
                            size_t shared_bytes) {
  WorkListOccupancy query{few_dims, block, shared_bytes};
  return dispatch(store, preagg, fields, query);
}

namespace {
// Each class tuple's cell (its copies merged) and its count of targets,
// the product of its lists' lengths (0 when empty). One pass: a merge and
// a count apart were two launches. Cells of empty tuples are not written:
// the expansion reads none of them.
template <int F>
__global__ void count_expansions(TargetTable tuples, ExpandMap em, Cell* cells, uint64_t* counts) {
  for (uint64_t x = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; x < tuples.targets;
       x += uint64_t{gridDim.x} * blockDim.x) {
    Cell cell{0.0, 0ull, kMinIdentity, kMaxIdentity};
    uint64_t c = merge_dense_copies<F>(tuples, x, cell) ? 1 : 0;
    if (c) cells[x] = cell;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d < em.dims && c) {
        uint32_t begin, end;
        class_list(em, d, x, begin, end);
        c *= end - begin;
      }
    }
    counts[x] = c;
  }
}

template <class Store, int F>
void expand(const LaunchShape& s, const Cell* cells, const uint64_t* ends, uint64_t n, const ExpandMap& map,
            const TargetTable& table, uint64_t* pairs) {
  Store store{};
  store.t = table;
  expand_kernel<Store, F><<<s.grid, s.block, 0, s.stream>>>(cells, ends, n, map, store, pairs);
  GPUOLAP_CHECK_LAUNCH("expand_kernel");
}

template <class Store>
void expand_fields(int fields, const LaunchShape& s, const Cell* cells, const uint64_t* ends, uint64_t n,
                   const ExpandMap& map, const TargetTable& table, uint64_t* pairs) {
  switch (fields) {
    case kExactFields: return expand<Store, kExactFields>(s, cells, ends, n, map, table, pairs);
    case kMinFields: return expand<Store, kMinFields>(s, cells, ends, n, map, table, pairs);
    default: return expand<Store, kMaxFields>(s, cells, ends, n, map, table, pairs);
  }
}
}  // namespace

void launch_count_expansions(const TargetTable& tuples, int fields, const ExpandMap& map, Cell* cells,
                             uint64_t* counts, cudaStream_t stream) {
  const int grid = static_cast<int>(std::clamp<uint64_t>((tuples.targets + 255) / 256, 1, 4096));
  switch (fields) {
    case kExactFields: count_expansions<kExactFields><<<grid, 256, 0, stream>>>(tuples, map, cells, counts); break;
    case kMinFields: count_expansions<kMinFields><<<grid, 256, 0, stream>>>(tuples, map, cells, counts); break;
    case kMinMaxFields: count_expansions<kMinMaxFields><<<grid, 256, 0, stream>>>(tuples, map, cells, counts); break;
    default: count_expansions<kMaxFields><<<grid, 256, 0, stream>>>(tuples, map, cells, counts); break;
  }
  GPUOLAP_CHECK_LAUNCH("count_expansions");
}

void launch_expand(StoreKind store, int fields, const LaunchShape& shape, const Cell* cells, const uint64_t* ends,
                   uint64_t n, const ExpandMap& map, const TargetTable& table, uint64_t* pairs) {
  if (store == StoreKind::hash) expand_fields<HashStore>(fields, shape, cells, ends, n, map, table, pairs);
  else expand_fields<DenseStore>(fields, shape, cells, ends, n, map, table, pairs);
}

namespace {
template <class Store, int F, int D>
void run_with(const LaunchShape& s, const KernelInput& in, const LeanMap& map, const TargetTable& table, int* blocks) {
  auto kernel = lean_run_kernel<Store, F, D>;
  if (blocks) {
    *blocks = blocks_per_sm(kernel, s.block, s.shared_bytes);
    return;
  }
  allow_shared(kernel, s.shared_bytes);
  Store store{};
  store.t = table;
  kernel<<<s.grid, s.block, s.shared_bytes, s.stream>>>(in, map, store);
  GPUOLAP_CHECK_LAUNCH("lean_run_kernel");
}

template <class Store, int F>
void run_dims(const LaunchShape& s, const KernelInput& in, const LeanMap& map, const TargetTable& t, int* blocks) {
  switch (map.dims) {
    case 0: return run_with<Store, F, 0>(s, in, map, t, blocks);
    case 1: return run_with<Store, F, 1>(s, in, map, t, blocks);
    case 2: return run_with<Store, F, 2>(s, in, map, t, blocks);
    case 3: return run_with<Store, F, 3>(s, in, map, t, blocks);
    default: return run_with<Store, F, 4>(s, in, map, t, blocks);
  }
}

// Launches the kernel, or with `blocks` only tells how many fit on an SM.
template <class Store>
void run_fields(int fields, const LaunchShape& s, const KernelInput& in, const LeanMap& map, const TargetTable& t,
                int* blocks) {
  switch (fields) {
    case kExactFields: return run_dims<Store, kExactFields>(s, in, map, t, blocks);
    case kMinFields: return run_dims<Store, kMinFields>(s, in, map, t, blocks);
    case kMinMaxFields: return run_dims<Store, kMinMaxFields>(s, in, map, t, blocks);
    default: return run_dims<Store, kMaxFields>(s, in, map, t, blocks);
  }
}

void run_store(StoreKind store, int fields, const LaunchShape& s, const KernelInput& in, const LeanMap& map,
               const TargetTable& t, int* blocks) {
  switch (store) {
    case StoreKind::hash: return run_fields<HashStore>(fields, s, in, map, t, blocks);
    case StoreKind::dense: return run_fields<DenseStore>(fields, s, in, map, t, blocks);
    default: return run_fields<SharedStore>(fields, s, in, map, t, blocks);
  }
}
}  // namespace

void launch_lean_run(StoreKind store, int fields, const LaunchShape& shape, const KernelInput& input,
                     const LeanMap& map, const TargetTable& table) {
  run_store(store, fields, shape, input, map, table, nullptr);
}

int lean_run_blocks_per_sm(StoreKind store, int fields, int dims, int block, size_t shared_bytes) {
  int blocks = 0;
  LeanMap map{};
  map.dims = dims;
  run_store(store, fields, LaunchShape{1, block, shared_bytes, nullptr, true}, KernelInput{}, map, TargetTable{},
            &blocks);
  return blocks;
}


int resident_blocks_per_sm(StoreKind store, Preagg preagg, int fields, bool lean, bool few_dims, int block,
                           size_t shared_bytes) {
  OccupancyQuery query{lean, few_dims, block, shared_bytes};
  return dispatch(store, preagg, fields, query);
}

}  // namespace gpuolap::gpu
