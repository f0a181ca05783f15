// The GPU forms in a build without CUDA: they say so.
#include <fmt/format.h>

#include "cube/cube_algorithms.hpp"
#include "gpuolap/error.hpp"

namespace gpuolap::cube {

bool gpu_available() { return false; }
int gpu_count() { return 0; }

std::vector<SetCells> build_gpu(const CodedTable&, const CubeSpec&, Algorithm algorithm, const BuildOptions&, StageTimes&) {
  // (Worded as the CUDA build's refusal, with gpu_status()'s problem.)
  throw InputError(fmt::format("{} needs an NVIDIA GPU: this gpuolap was built without CUDA (cpu-partitioned and "
                               "cpu-sequential run on the CPU)",
                               algorithm_name(algorithm)));
}

}  // namespace gpuolap::cube
