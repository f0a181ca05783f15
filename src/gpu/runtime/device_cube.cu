#include "device_cube.cuh"

#include <algorithm>

#include "cuda_check.cuh"

namespace gpuolap::gpu {
namespace {

// The position of each wanted key in the sorted resident keys, or
// kNotResident.
constexpr uint32_t kNotResident = UINT32_MAX;
__global__ void find_positions(const uint64_t* keys, uint64_t n, const uint64_t* wanted, uint32_t* positions,
                               uint64_t count) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x) {
    const uint64_t key = wanted[i];
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
      const uint64_t mid = (lo + hi) / 2;
      if (keys[mid] < key) lo = mid + 1;
      else hi = mid;
    }
    positions[i] = lo < n && keys[lo] == key ? static_cast<uint32_t>(lo) : kNotResident;
  }
}

__global__ void scatter_values(const uint32_t* positions, const double* values, uint64_t count, double* column) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x)
    column[positions[i]] = values[i];
}

__global__ void scatter_keys(const uint32_t* positions, const uint64_t* keys, uint64_t count, uint64_t* column) {
  for (uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; i < count; i += uint64_t{gridDim.x} * blockDim.x)
    column[positions[i]] = keys[i];
}

int grid_for(uint64_t n) { return static_cast<int>(std::clamp<uint64_t>((n + 255) / 256, 1, 4096)); }

// Grows a device array to hold n elements, keeping the first `keep`.
template <class T>
void grow_keeping(DeviceBuffer<T>& buffer, size_t n, size_t keep, cudaStream_t stream) {
  if (n <= buffer.size()) return;
  DeviceBuffer<T> bigger(std::max(n, 2 * buffer.size()));
  if (keep)
    GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(bigger.data(), buffer.data(), keep * sizeof(T), cudaMemcpyDeviceToDevice, stream));
  buffer = std::move(bigger);
}

}  // namespace

bool DeviceCube::can_keep(const FactTable& facts, size_t measure, const FactSlice& slice) const {
  if (current_id_ == 0 || !(slice == slice_)) return false;
  const bool measure_resident = values_.find(measure) != values_.end();
  if (facts.id() == current_id_) return measure_resident || current_id_ == uploaded_id_;
  const auto& changes = facts.changes();
  return measure_resident && changes && changes->base_id == base_id_ && changes->generation >= generation_;
}

CubeUpdate DeviceCube::ensure(const FactTable& facts, size_t measure, cudaStream_t stream, const FactSlice& slice) {
  const auto& changes = facts.changes();
  const bool same = facts.id() == current_id_ && slice == slice_;
  const bool patchable =
      !same && current_id_ != 0 && slice == slice_ && changes && changes->base_id == base_id_ && changes->generation >= generation_;
  if (!same && !patchable) {
    upload_all(facts, measure, stream, slice);
    return {CubeUpdate::full, size_};
  }
  if (values_.find(measure) == values_.end()) {
    // A measure not yet resident joins the others only while they hold the
    // uploaded table's cells; once patched, they no longer match its layout.
    if (same && current_id_ == uploaded_id_) values_[measure].upload(facts.values(measure).data() + begin_, size_, stream);
    else upload_all(facts, measure, stream, slice);
    return {CubeUpdate::full, size_};
  }
  if (same) return {};
  const CubeUpdate update = patch(*changes, stream);
  current_id_ = facts.id();
  generation_ = changes->generation;
  return update;
}

void DeviceCube::upload_all(const FactTable& facts, size_t measure, cudaStream_t stream, const FactSlice& slice) {
  // Other measures are dropped: they may belong to an older table.
  values_.clear();
  added_values_.clear();
  added_slot_.clear();
  slice_ = slice;
  const size_t end = std::min(slice.end, facts.size());
  begin_ = std::min(slice.begin, end);
  size_ = end - begin_;
  keys_.upload(facts.keys().data() + begin_, size_, stream);
  values_[measure].upload(facts.values(measure).data() + begin_, size_, stream);
  current_id_ = uploaded_id_ = facts.id();
  // Later tables of the same store record their changes against the store's
  // base; those since this table's generation are what they add to it.
  base_id_ = facts.changes() ? facts.changes()->base_id : facts.id();
  generation_ = facts.changes() ? facts.changes()->generation : 0;
  page_size_ = facts.page_size();
  dims_ = facts.dimension_count();
  // The slice starts on a page boundary: its pages are the table's.
  const size_t first_page = begin_ / page_size_;
  const size_t pages = (size_ + page_size_ - 1) / page_size_;
  page_min_.resize(pages * dims_);
  page_max_.resize(pages * dims_);
  for (size_t p = 0; p < pages; ++p)
    for (size_t d = 0; d < dims_; ++d) {
      page_min_[p * dims_ + d] = facts.page_min(first_page + p, d);
      page_max_[p * dims_ + d] = facts.page_max(first_page + p, d);
    }
}

CubeUpdate DeviceCube::patch(const TableChanges& changes, cudaStream_t stream) {
  // The cells changed since the last query. Those the resident keys hold
  // are overwritten where they are (a deleted cell keeps its key, with NaN
  // values, which no kernel counts); the others get a slot in the added table.
  std::vector<uint64_t> keys;
  std::vector<size_t> entries;
  for (size_t e = 0; e < changes.size(); ++e)
    if (changes.generations[e] > generation_ && slice_.owns(changes.keys[e])) {
      keys.push_back(changes.keys[e]);
      entries.push_back(e);
    }
  if (keys.empty()) return {CubeUpdate::patched, 0};
  patch_keys_.upload(keys, stream);
  patch_slots_.reserve(keys.size());
  find_positions<<<grid_for(keys.size()), 256, 0, stream>>>(keys_.data(), size_, patch_keys_.data(),
                                                            patch_slots_.data(), keys.size());
  GPUOLAP_CHECK_LAUNCH("find_positions");
  const std::vector<uint32_t> positions = patch_slots_.download(keys.size(), stream);

  std::vector<uint32_t> base_positions, added_slots;
  std::vector<uint64_t> added_keys;
  std::vector<size_t> base_entries, added_entries;
  const size_t added_before = added_slot_.size();
  for (size_t i = 0; i < keys.size(); ++i) {
    if (positions[i] != kNotResident) {
      base_positions.push_back(positions[i]);
      base_entries.push_back(entries[i]);
      continue;
    }
    const auto [it, fresh] = added_slot_.try_emplace(keys[i], static_cast<uint32_t>(added_slot_.size()));
    added_slots.push_back(it->second);
    added_keys.push_back(keys[i]);
    added_entries.push_back(entries[i]);
  }
  grow_keeping(added_keys_, added_slot_.size(), added_before, stream);
  for (const auto& [m, column] : values_) grow_keeping(added_values_[m], added_slot_.size(), added_before, stream);

  std::vector<double> column(keys.size());
  // Writes `entries`' values of every resident measure at `slots`.
  auto scatter = [&](const std::vector<uint32_t>& slots, const std::vector<size_t>& entries_of,
                     std::map<size_t, DeviceBuffer<double>>& columns) {
    patch_slots_.upload(slots, stream);
    for (auto& [m, device_column] : columns) {
      for (size_t i = 0; i < entries_of.size(); ++i) column[i] = changes.values[m][entries_of[i]];
      patch_values_.upload(column.data(), entries_of.size(), stream);
      scatter_values<<<grid_for(slots.size()), 256, 0, stream>>>(patch_slots_.data(), patch_values_.data(),
                                                                 slots.size(), device_column.data());
      GPUOLAP_CHECK_LAUNCH("scatter_values");
    }
  };
  if (!base_positions.empty()) scatter(base_positions, base_entries, values_);
  if (!added_keys.empty()) {
    scatter(added_slots, added_entries, added_values_);
    patch_keys_.upload(added_keys, stream);  // patch_slots_ holds added_slots
    scatter_keys<<<grid_for(added_keys.size()), 256, 0, stream>>>(patch_slots_.data(), patch_keys_.data(),
                                                                  added_keys.size(), added_keys_.data());
    GPUOLAP_CHECK_LAUNCH("scatter_keys");
  }
  return {CubeUpdate::patched, keys.size()};
}

uint64_t DeviceCube::bytes() const {
  uint64_t b = keys_.size() * sizeof(uint64_t) + added_keys_.size() * sizeof(uint64_t);
  for (const auto& [m, c] : values_) b += c.size() * sizeof(double);
  for (const auto& [m, c] : added_values_) b += c.size() * sizeof(double);
  return b;
}

}  // namespace gpuolap::gpu
