#pragma once
// The facts in GPU memory: the key column and the value columns that queries
// asked for, one allocation each, uploaded once per fact table (by its id)
// and reused by every later query.
#include <cstdint>
#include <map>

#include "device_buffer.cuh"
#include "gpuolap/fact_table.hpp"

namespace gpuolap::gpu {

class DeviceCube {
 public:
  // Makes the table's keys and the measure's values resident; returns
  // whether anything was uploaded.
  bool ensure(const FactTable& facts, size_t measure, cudaStream_t stream) {
    bool uploaded = false;
    if (table_id_ != facts.id()) {
      keys_.upload(facts.keys().data(), facts.size(), stream);
      values_.clear();
      table_id_ = facts.id();
      size_ = facts.size();
      uploaded = true;
    }
    auto it = values_.find(measure);
    if (it == values_.end()) {
      DeviceBuffer<double> column;
      column.upload(facts.values(measure).data(), facts.size(), stream);
      values_.emplace(measure, std::move(column));
      uploaded = true;
    }
    return uploaded;
  }
  const uint64_t* keys() const { return keys_.data(); }
  const double* values(size_t measure) const { return values_.at(measure).data(); }
  size_t size() const { return size_; }

 private:
  uint64_t table_id_ = 0;
  size_t size_ = 0;
  DeviceBuffer<uint64_t> keys_;
  std::map<size_t, DeviceBuffer<double>> values_;
};

}  // namespace gpuolap::gpu
