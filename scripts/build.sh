#!/usr/bin/env bash
# Installs the dependencies and builds gpuolap (Release) into build/.
# Extra arguments go to CMake, e.g. -DGPUOLAP_CUDA=OFF.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# nvcc is usually outside PATH on a fresh machine with the CUDA toolkit.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B build "$@"
fi
cmake --build build --parallel "$(nproc)"
