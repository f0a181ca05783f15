#pragma once
// The maps the gpu engine's kernels read, built on the host as byte images
// that go to the device in one copy: the query's own map (direct), phase
// 1's class map and phase 2's expansion map of two-phase aggregation
// (target_classes.hpp), each with the view (device_map.hpp) that says where
// its arrays sit. Plain C++: tested and timed without a GPU.
#include <cstdint>
#include <cstring>
#include <vector>

#include "device_map.hpp"
#include "gpuolap/aggregation_map.hpp"
#include "target_classes.hpp"

namespace gpuolap::gpu {

// Appends arrays to a byte image in 8-byte aligned sections.
struct ByteImage {
  std::vector<uint8_t> bytes;
  template <class T>
  uint32_t append(const std::vector<T>& v) {
    const size_t at = (bytes.size() + 7) & ~size_t{7};
    bytes.resize(at + v.size() * sizeof(T));
    if (!v.empty()) std::memcpy(bytes.data() + at, v.data(), v.size() * sizeof(T));
    return static_cast<uint32_t>(at);
  }
  // Room for n values of T, written later through at<T>() (which a later
  // allocate may move).
  template <class T>
  uint32_t allocate(size_t n) {
    const size_t at = (bytes.size() + 7) & ~size_t{7};
    bytes.resize(at + n * sizeof(T));
    return static_cast<uint32_t>(at);
  }
  template <class T>
  T* at(uint32_t offset) {
    return reinterpret_cast<T*>(bytes.data() + offset);
  }
  // Room for lists in CSR form: rows + 1 uint32 offsets, then `entries`
  // uint32 positions and double weights.
  struct Csr {
    uint32_t offsets_at, positions_at, weights_at;
  };
  Csr allocate_csr(size_t rows, size_t entries) {
    return {allocate<uint32_t>(rows + 1), allocate<uint32_t>(entries), allocate<double>(entries)};
  }
};

// The aggregation kernel's map: the query's (direct) or the class map (phase
// 1); for a lean map also packed for the thread-run kernel.
struct MapImage {
  ByteImage image;
  DeviceMap view{};
  ByteImage lean_image;
  LeanMap lean{};
  bool narrow = false;  // its targets fit the packed map's uint32 parts (the thread-run kernel)
  bool is_lean() const { return view.single && view.dims <= kFewDims; }
};

// Phase 2's map and its view.
struct ExpandImage {
  ByteImage image;
  ExpandMap view{};
};

// Whether the query's own map would be lean (MapImage::is_lean), without
// building its image: two-phase queries never use it.
bool direct_map_is_lean(const AggregationMap& map);

// The query's own map (dimensions that are totals left out).
MapImage direct_map_image(const AggregationMap& map);

// Phase 1 of two-phase aggregation: each relevant base has one target, its
// class, with weight 1, so a fact adds its raw value to its class tuple.
MapImage class_map_image(const AggregationMap& map, const TargetClasses& classes);

// Phase 2's map: class tuple -> the class lists' targets and weights.
ExpandImage expand_image(const AggregationMap& map, const TargetClasses& classes);

}  // namespace gpuolap::gpu
