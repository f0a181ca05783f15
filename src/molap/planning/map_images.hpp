#pragma once
// The maps the gpu engine's kernels read, built on the host as byte images
// that go to the device in one copy: the query's own map (direct), phase
// 1's class map and phase 2's expansion map of two-phase aggregation
// (target_classes.hpp), each with the view (device_map.hpp) that says where
// its arrays sit. Plain C++: tested and timed without a GPU.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
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
  // Fills lists allocated by allocate_csr, row after row: add() each entry
  // of a row, then end_row(); or a whole row at once with add_row().
  // Valid until the image grows again.
  class CsrFill {
   public:
    CsrFill(ByteImage& image, const Csr& at)
        : offsets_(image.at<uint32_t>(at.offsets_at)),
          positions_(image.at<uint32_t>(at.positions_at)),
          weights_(image.at<double>(at.weights_at)) {
      offsets_[0] = 0;
    }
    void add(uint32_t position, double weight) {
      positions_[n_] = position;
      weights_[n_] = weight;
      ++n_;
    }
    void end_row() { offsets_[++rows_] = n_; }
    void add_row(std::span<const uint32_t> positions, std::span<const double> weights) {
      std::copy(positions.begin(), positions.end(), positions_ + n_);
      std::copy(weights.begin(), weights.end(), weights_ + n_);
      n_ += static_cast<uint32_t>(positions.size());
      end_row();
    }

   private:
    uint32_t* offsets_;
    uint32_t* positions_;
    double* weights_;
    uint32_t n_ = 0, rows_ = 0;
  };
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
