#!/usr/bin/env bash
# On a GPU machine without package registries: unpacks the carried Debian
# packages (.deps/debs, from fetch_deps.sh) into .deps/root and builds
# gpuolap with CUDA into build-gpu/: every target, or those named.
#   scripts/device/build.sh [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/device/unpack_deps.sh
root="$PWD/.deps/root"
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUOLAP_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build build-gpu --parallel "$(nproc)" ${1:+--target "$@"}
