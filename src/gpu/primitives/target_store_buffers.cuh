#pragma once
// The device arrays of a target store (target_store.cuh): allocated once,
// grown when a larger store is asked for, cleared for each use, and sized
// beforehand so an operator can split an area that would not fit.
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/primitives/target_store.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpuolap/gpu_options.hpp"

namespace gpuolap::gpu {

class TargetStoreBuffers {
 public:
  // Allocates and clears a store of the targets [first, first + targets),
  // `copies` each (a shared store's copies are its replicas per block; it
  // flushes into one dense copy). A hash store has `hash_slots` slots, a
  // power of two.
  TargetTable prepare(StoreKind store, uint64_t first, uint64_t targets, unsigned copies, uint64_t hash_slots,
                      int fields, cudaStream_t s);
  // Whether a hash store's probe went round the table (waits for the stream).
  bool overflowed(cudaStream_t s) const { return overflow_.download(1, s)[0] != 0; }
  void release() { *this = TargetStoreBuffers(); }

 private:
  DeviceBuffer<uint64_t> keys_;
  // The fields that start as zero bytes (sums, counts, the maxima's
  // identity, touched flags), one after another, cleared by one memset: a
  // memset per field cost each of M3's two stores an operation on the stream.
  DeviceBuffer<uint8_t> zeroed_;
  DeviceBuffer<unsigned long long> min_;
  DeviceBuffer<unsigned> overflow_;
};

// Bytes of the stored fields of one slot.
uint64_t field_bytes(int fields);

// Device bytes a store of `window` targets and its compaction take: `entries`
// bounds the targets a hash store holds (at most one per update).
uint64_t store_bytes(StoreKind kind, uint64_t window, unsigned copies, int fields, uint64_t entries);

// The smallest power of two at least x.
uint64_t next_pow2(uint64_t x);

// Fills n words with `value` on the stream.
void fill_words(uint64_t* p, uint64_t n, uint64_t value, cudaStream_t s);

}  // namespace gpuolap::gpu
