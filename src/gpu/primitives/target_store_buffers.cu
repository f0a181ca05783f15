#include "gpu/primitives/target_store_buffers.cuh"

#include <algorithm>

#include "gpu/runtime/cuda_check.cuh"

namespace gpuolap::gpu {

namespace {

static_assert(kMaxIdentity == 0, "the maxima start as zero bytes, with the other zeroed fields");

__global__ void fill_u64(uint64_t* p, uint64_t n, uint64_t value) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < n; i += uint64_t{gridDim.x} * blockDim.x)
    p[i] = value;
}

}  // namespace

void fill_words(uint64_t* p, uint64_t n, uint64_t value, cudaStream_t s) {
  fill_u64<<<256, 256, 0, s>>>(p, n, value);
  GPUOLAP_CHECK_LAUNCH("fill_u64");
}

TargetTable TargetStoreBuffers::prepare(StoreKind store, uint64_t first, uint64_t targets, unsigned copies,
                                        uint64_t hash_slots, int fields, cudaStream_t s) {
  TargetTable t{};
  t.first = first;
  t.copies = store == StoreKind::shared ? 1 : copies;
  t.replicas = store == StoreKind::shared ? copies : 1;
  t.targets = targets;
  t.slots = store == StoreKind::hash ? hash_slots : targets * t.copies;
  if (store == StoreKind::hash) {
    keys_.reserve(t.slots);
    t.keys = keys_.data();
    fill_words(t.keys, t.slots, kEmptyKey, s);
  }
  // Each field's array 8-byte aligned: they take 8 bytes a slot, the
  // touched flags (dense stores) one and come last.
  const bool dense = store != StoreKind::hash;
  const uint64_t exact_at = (fields & kSum) ? 8 * t.slots : 0;
  const uint64_t count_at = exact_at + ((fields & kExact) ? 24 * t.slots : 0);
  const uint64_t max_at = count_at + ((fields & kCount) ? 8 * t.slots : 0);
  const uint64_t touched_at = max_at + ((fields & kMax) ? 8 * t.slots : 0);
  const uint64_t zero_bytes = touched_at + (dense ? t.slots : 0);
  if (zero_bytes > 0) {
    zeroed_.reserve(zero_bytes);
    uint8_t* z = zeroed_.data();
    if (fields & kSum) t.sum = reinterpret_cast<double*>(z);
    if (fields & kExact) t.exact = reinterpret_cast<unsigned long long*>(z + exact_at);
    if (fields & kCount) t.count = reinterpret_cast<unsigned long long*>(z + count_at);
    if (fields & kMax) t.max = reinterpret_cast<unsigned long long*>(z + max_at);  // kMaxIdentity is 0
    if (dense) t.touched = z + touched_at;
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(z, 0, zero_bytes, s));
  }
  if (fields & kMin) {
    min_.reserve(t.slots);
    t.min = min_.data();
    fill_words(reinterpret_cast<uint64_t*>(t.min), t.slots, kMinIdentity, s);
  }
  // Only a hash store can overflow (and only its flag is read back).
  if (store == StoreKind::hash) {
    overflow_.reserve(1);
    t.overflow = overflow_.data();
    GPUOLAP_CUDA_CHECK(cudaMemsetAsync(t.overflow, 0, sizeof(unsigned), s));
  }
  return t;
}

uint64_t field_bytes(int fields) {
  return ((fields & kSum) ? 8 : 0) + ((fields & kExact) ? 24 : 0) + ((fields & kCount) ? 8 : 0) + ((fields & kMin) ? 8 : 0) + ((fields & kMax) ? 8 : 0);
}

uint64_t store_bytes(StoreKind kind, uint64_t window, unsigned copies, int fields, uint64_t entries) {
  // Compaction per filled target: two cell arrays, a flag, target and value.
  const uint64_t per_target = 2 * sizeof(Cell) + 1 + 8 + 8;
  if (kind == StoreKind::hash) {
    const uint64_t occupied = std::min(window, std::max<uint64_t>(entries, 1)) * copies;
    uint64_t slots = 1024;
    while (slots < 2 * occupied) slots <<= 1;
    // Per slot: key, fields, and the compaction's flag, sorted key and two slot indices.
    return slots * (8 + field_bytes(fields) + 1 + 8 + 4 + 4) + occupied * per_target;
  }
  return window * copies * (field_bytes(fields) + 1) + window * per_target;
}

uint64_t next_pow2(uint64_t x) {
  uint64_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

}  // namespace gpuolap::gpu
