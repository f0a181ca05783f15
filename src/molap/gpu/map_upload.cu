// The map and prefilter stages: the kernel's maps go up in one copy, and
// the resident cells the kernel visits are chosen.
#include <cstring>

#include "gpu/primitives/prefilter.cuh"
#include "molap/gpu/gpu_engine.cuh"
#include "molap/planning/relevant_pages.hpp"

namespace gpuolap::gpu {

namespace {

// Whether cell i is relevant: on a relevant page, with a value, and with a
// target in every dimension.
struct IsRelevant {
  const uint64_t* keys;
  const double* values;
  const uint8_t* page_relevant;
  uint64_t page_size;
  DeviceMap map;
  __device__ bool operator()(uint32_t i) const {
    if (!page_relevant[i / page_size]) return false;
    const double v = values[i];
    if (v != v) return false;
    const uint64_t key = keys[i];
    for (int d = 0; d < map.dims; ++d) {
      const uint32_t b = static_cast<uint32_t>((key >> map.shift[d]) & map.mask[d]);
      const uint32_t* offsets = reinterpret_cast<const uint32_t*>(map.global + map.offsets_at[d]);
      if (offsets[b] == offsets[b + 1]) return false;
    }
    return true;
  }
};

}  // namespace

void GpuEngine::upload_maps(QueryPlan& plan) {
  const cudaStream_t stream = ctx_.stream();
  MapImage& image = plan.image;
  const bool runs = plan.stage.preagg == Preagg::run;
  // The kernel's map and the thread-run kernel's packed map go up in one
  // copy from pinned memory (phase 2's map follows while phase 1 runs). A
  // query that failed may have left its copy of the staging bytes in
  // flight: wait for it (the stream is idle otherwise).
  GPUOLAP_CUDA_CHECK(cudaStreamSynchronize(stream));
  // The images' places in the staging bytes (8-byte aligned), then the
  // images copied straight there.
  const auto align8 = [](size_t at) { return (at + 7) & ~size_t{7}; };
  const std::vector<uint8_t> none;
  const std::vector<uint8_t>& lean_bytes = runs ? image.lean_image.bytes : none;
  const size_t lean_at = align8(image.image.bytes.size());
  const size_t upload_bytes = lean_at + lean_bytes.size();
  upload_staging_.reserve(upload_bytes);
  auto* staged = static_cast<uint8_t*>(upload_staging_.data());
  const auto put = [&](size_t at, const std::vector<uint8_t>& bytes) {
    if (!bytes.empty()) std::memcpy(staged + at, bytes.data(), bytes.size());
  };
  put(0, image.image.bytes);
  put(lean_at, lean_bytes);
  map_global_.reserve(upload_bytes);
  GPUOLAP_CUDA_CHECK(cudaMemcpyAsync(map_global_.data(), staged, upload_bytes, cudaMemcpyHostToDevice, stream));
  image.view.global = map_global_.data();
  if (runs) {
    image.lean.global = map_global_.data() + lean_at;
    image.lean.positions_in_shared = plan.stage.map_in_shared;
    image.lean.shared_at =
        static_cast<uint32_t>(plan.stage.shared_bytes - size_t{image.lean.entries} * sizeof(uint32_t));
  }
  image.view.in_constant = plan.constant_map;
  const size_t map_bytes = image.image.bytes.size();
  if (plan.constant_map && uses_cdp(plan.stage.kernel))
    upload_cdp_constant_map(image.image.bytes.data(), map_bytes, stream);
  else if (plan.constant_map)
    upload_constant_map(image.image.bytes.data(), map_bytes, stream);
}

GpuEngine::Inputs GpuEngine::prefilter(const QueryPlan& plan, const AggregationMap& map, size_t measure) {
  // The resident table is prefiltered; the few cells added since it was
  // uploaded are read in full.
  Inputs in{KernelInput{cube_.keys(), cube_.values(measure), nullptr, cube_.size()},
            KernelInput{cube_.added_keys(), cube_.added_values(measure), nullptr, cube_.added_size()}};
  if (plan.page_list_at) {
    in.resident.pages = reinterpret_cast<const uint32_t*>(plan.image.lean.global + *plan.page_list_at);
    in.resident.page_count = plan.page_list.size();
    in.resident.page_size = cube_.page_size();
  }
  if (!plan.compact || cube_.size() == 0) return in;
  // Page summaries are on the host: a page is skipped when some dimension
  // has no relevant base id in the page's range.
  std::vector<uint8_t> pages = relevant_pages(map, cube_);
  if (pages.empty()) pages.assign(cube_.page_count(), 1);
  page_relevant_.upload(pages, ctx_.stream());
  cells_.reserve(cube_.size());
  const IsRelevant relevant{cube_.keys(), cube_.values(measure), page_relevant_.data(), cube_.page_size(),
                            plan.image.view};
  in.resident.cells = cells_.data();
  in.resident.n = select_rows(ctx_, cube_.size(), relevant, cells_.data(), selected_count_);
  return in;
}

}  // namespace gpuolap::gpu
