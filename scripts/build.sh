#!/usr/bin/env bash
# Installs the dependencies and builds gpuolap (Release).
#   bash scripts/build.sh [--dir DIR] [--target T] [--setup all|build] [CMake arguments]
# By default everything (the tests too) into build/, with the CUDA code
# where nvcc is found (-DGPUOLAP_CUDA=AUTO). --dir and --target build one
# target into another folder (scripts/demo.sh: only the gpuolap command, in
# build-demo/, so that its cache never changes the tests' one). Extra
# arguments go to CMake, e.g. -DGPUOLAP_CUDA=OFF. ccache is used where it is
# installed.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build
target=()
setup=all
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --target) target=(--target "$2"); shift 2 ;;
    --setup) setup="$2"; shift 2 ;;
    *) break ;;
  esac
done
bash scripts/setup.sh "$setup"
# nvcc is usually outside PATH on a fresh machine with the CUDA toolkit.
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
# A rebuild after a fresh clone or a branch switch recompiles only what
# changed; the launchers are set when the folder is first configured.
launchers=()
if command -v ccache >/dev/null 2>&1; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  command -v nvcc >/dev/null 2>&1 && launchers+=(-DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$dir/CMakeCache.txt" ]; then
  cmake -S . -B "$dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${launchers[@]}" "$@"
elif [ $# -gt 0 ]; then
  cmake -S . -B "$dir" "$@"
fi
cmake --build "$dir" --parallel "$(nproc)" "${target[@]}"
