#pragma once
// Page-locked host memory that kernels address directly, as a std::pmr
// resource. Host containers made with it (a query batch, its answers) are
// read and written by kernels across the bus where they lie: no staging copy
// on the host, no transfer before the kernel starts. The memory is mapped
// into every device's address space, at the same address under unified
// addressing (every 64-bit CUDA platform).
//
// Freed blocks are kept for the next allocation of their size class (powers
// of two from 64 KiB), up to 256 MiB idle: cudaHostAlloc costs about a
// millisecond a megabyte and synchronizes, and a server's batches come and
// go with every request. Plain C++: a build without CUDA, or a machine
// without a GPU, gets the default new/delete resource.
#include <memory_resource>

namespace gpuolap::gpu {

std::pmr::memory_resource* pinned_memory();
// Whether memory from `r` is pinned memory that kernels may read in place.
bool is_pinned_memory(const std::pmr::memory_resource* r);

}  // namespace gpuolap::gpu
