#pragma once
// Compaction: a target store's copies merged into one cell per target, the
// filled targets kept with their finished values (the aggregate asked
// for), in ascending target order, brought to the host.
//   dense store  a reduction over copies (none for one copy: the selection
//                reads the store itself), then CUB select; areas up to
//                kStraightToHostBytes of results are selected straight into
//                pinned host memory (mapped: no copy after it, and no wait
//                for the count before one)
//   hash store   CUB select of the occupied slots, radix sort by target,
//                reduce-by-key of the cells
// Stages on the clock: "compact", then "copy back".
#include <cstdint>

#include "gpu/primitives/target_store.cuh"
#include "gpu/runtime/device_buffer.cuh"
#include "gpu/runtime/device_context.cuh"
#include "gpu/runtime/pinned_buffer.cuh"
#include "gpuolap/area_query.hpp"

namespace gpuolap::gpu {

// Results of areas up to this many bytes (16 per target) go straight to
// pinned host memory; larger areas keep theirs on the device, wait for the
// count, then copy only the filled targets.
constexpr uint64_t kStraightToHostBytes = uint64_t{64} << 20;

class Compactor {
 public:
  explicit Compactor(DeviceContext& context) : ctx_(context) {}

  // The filled targets of a store and their values of `aggregate`
  // (`fields` are the store's). With `exact_word` 0, 1 or 2, that word of
  // each target's exact sum instead, its bits in the double (kExact: a
  // part of a query split over GPUs, merged exactly on the host).
  AreaResult compact_dense(const TargetTable& t, int fields, Aggregate aggregate, StageClock& clock,
                           int exact_word = -1);
  AreaResult compact_hash(const TargetTable& t, int fields, Aggregate aggregate, StageClock& clock,
                          int exact_word = -1);

  // Frees the buffers kept between uses.
  void release();

 private:
  // Where results go in the pinned staging: a count, then room for `most`
  // targets, then `most` values, from the staging's first byte as the
  // device or the host addresses it.
  struct ResultStaging {
    uint64_t* count;
    uint64_t* targets;
    double* values;
    static ResultStaging at(void* first, uint64_t most) {
      auto* count = static_cast<uint64_t*>(first);
      return {count, count + 1, reinterpret_cast<double*>(count + 1 + most)};
    }
  };
  // The staging, grown to hold `most` results, as the device addresses it.
  ResultStaging stage_results(uint64_t most);
  // n targets and values on the device to the staging, then collected.
  AreaResult download(uint64_t n, const uint64_t* targets, const double* values, StageClock& clock);
  // Waits for the stream and reads the staged results: the first `count`
  // of them when counted, else all `most`.
  AreaResult collect(uint64_t most, bool counted, StageClock& clock);

  DeviceContext& ctx_;
  PinnedBuffer staging_;
  DeviceBuffer<uint8_t> nonempty_;
  DeviceBuffer<uint32_t> slots_, slots_sorted_;
  DeviceBuffer<uint64_t> counts_, keys_sorted_, out_targets_;
  DeviceBuffer<Cell> cells_a_, cells_b_;
  DeviceBuffer<double> values_, out_values_;
};

}  // namespace gpuolap::gpu
