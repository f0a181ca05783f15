#pragma once
// Columns kept on one GPU between operations: each is uploaded once and
// reused while its source is unchanged, so an operator over a table pays
// the bus only for columns it has not read before (the cube-creation
// paper's lesson: the transfer, not the kernel, is the cost). A column is
// named by its table's identity and its name; a new version of the table
// (another `version`) replaces it. The MOLAP facts have a form of their own
// that also patches written cells in place (device_cube.cuh).
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "gpu/runtime/cuda_check.cuh"
#include "gpu/runtime/device_buffer.cuh"

namespace gpuolap::gpu {

class ResidentColumns {
 public:
  // The device copy of `n` values of column (table, name) at `version`,
  // uploaded on `stream` when the resident copy is missing or of another
  // version. `uploaded` says whether it was.
  template <class T>
  const T* ensure(uint64_t table, const std::string& name, uint64_t version, const T* host, size_t n,
                  cudaStream_t stream, bool* uploaded = nullptr) {
    Column& c = columns_[{table, name}];
    const bool fresh = !c.present || c.version != version || c.elements != n;
    if (fresh) {
      c.bytes.reserve(n * sizeof(T));
      if (n) GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(c.bytes.data(), host, n * sizeof(T), cudaMemcpyHostToDevice, stream));
      c.version = version;
      c.elements = n;
      c.present = true;
    }
    if (uploaded) *uploaded = fresh;
    return reinterpret_cast<const T*>(c.bytes.data());
  }
  // Drops every column of a table (it is gone, or memory is needed).
  void drop(uint64_t table) {
    for (auto it = columns_.begin(); it != columns_.end();)
      it = it->first.first == table ? columns_.erase(it) : std::next(it);
  }
  // Device bytes held.
  uint64_t bytes() const {
    uint64_t b = 0;
    for (const auto& [key, c] : columns_) b += c.bytes.size();
    return b;
  }
  size_t count() const { return columns_.size(); }

 private:
  struct Column {
    DeviceBuffer<uint8_t> bytes;
    uint64_t version = 0;
    size_t elements = 0;
    bool present = false;
  };
  std::map<std::pair<uint64_t, std::string>, Column> columns_;
};

}  // namespace gpuolap::gpu
