#pragma once
// The facts in GPU memory: the key column and the value columns that queries
// asked for, one allocation each, uploaded once and reused by later queries.
//
// Writes do not upload the cube again. A table made by FactStore records its
// changes since the store's base table (TableChanges); when the device holds
// a table of the same base, the cells changed since are patched in place
// (found by a binary search over the resident keys) and cells it lacks go to
// a small device table of added cells, which the kernels read after the
// resident table. Only a table of another base, a snapshot older than the
// one resident, or a measure not yet resident costs a full upload.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "device_buffer.cuh"
#include "gpuolap/fact_table.hpp"

namespace gpuolap::gpu {

// What ensure() moved to the device.
struct CubeUpdate {
  enum Kind { resident, full, patched } kind = resident;
  uint64_t cells = 0;  // cells uploaded (all of them for a full upload)
};

class DeviceCube {
 public:
  // Makes the device copy equal the slice of `facts` (with `measure`).
  CubeUpdate ensure(const FactTable& facts, size_t measure, cudaStream_t stream, const FactSlice& slice = {});
  // Whether ensure() would keep or patch the copy rather than upload the
  // slice in full (a later table of the same base, the same slice, the
  // measure resident). A full upload must take a slice cut from the table
  // it uploads; the several-GPU engine cuts new slices when one would.
  bool can_keep(const FactTable& facts, size_t measure, const FactSlice& slice) const;
  // Forgets the copy: the next ensure() uploads in full (after a failure
  // that may have left it half-patched).
  void forget() { current_id_ = uploaded_id_ = base_id_ = 0; }

  // The resident table (as uploaded, with patched values).
  const uint64_t* keys() const { return keys_.data(); }
  const double* values(size_t measure) const { return values_.at(measure).data(); }
  size_t size() const { return size_; }
  // Its page summaries (patches change values, never keys).
  size_t page_size() const { return page_size_; }
  size_t page_count() const { return page_min_.size() / std::max<size_t>(dims_, 1); }
  uint32_t page_min(size_t page, size_t d) const { return page_min_[page * dims_ + d]; }
  uint32_t page_max(size_t page, size_t d) const { return page_max_[page * dims_ + d]; }

  // Cells the resident table lacks, added since (deleted ones hold NaN).
  const uint64_t* added_keys() const { return added_keys_.data(); }
  const double* added_values(size_t measure) const {
    const auto it = added_values_.find(measure);
    return it == added_values_.end() ? nullptr : it->second.data();
  }
  size_t added_size() const { return added_slot_.size(); }

  // Device bytes held for the facts.
  uint64_t bytes() const;

 private:
  void upload_all(const FactTable& facts, size_t measure, cudaStream_t stream, const FactSlice& slice);
  CubeUpdate patch(const TableChanges& changes, cudaStream_t stream);

  uint64_t base_id_ = 0;     // the store base of the resident table
  uint64_t uploaded_id_ = 0; // the table uploaded in full
  uint64_t current_id_ = 0;  // the table the copy now equals
  uint64_t generation_ = 0;  // changes since base_id_ applied, as TableChanges::generation
  FactSlice slice_;          // as asked for when the table was uploaded
  size_t begin_ = 0;         // its first cell in the uploaded table
  size_t size_ = 0;
  DeviceBuffer<uint64_t> keys_;
  std::map<size_t, DeviceBuffer<double>> values_;
  size_t page_size_ = 0, dims_ = 0;
  std::vector<uint32_t> page_min_, page_max_;

  std::unordered_map<uint64_t, uint32_t> added_slot_;  // key -> slot in the added table
  DeviceBuffer<uint64_t> added_keys_;
  std::map<size_t, DeviceBuffer<double>> added_values_;
  DeviceBuffer<uint64_t> patch_keys_;
  DeviceBuffer<uint32_t> patch_slots_;
  DeviceBuffer<double> patch_values_;
};

}  // namespace gpuolap::gpu
