#!/usr/bin/env bash
# On a GPU machine without package registries: unpacks the carried Debian
# packages (.deps/debs, from fetch_deps.sh) into .deps/root and builds
# gpuolap with CUDA into build-gpu/.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD/.deps/root"
mkdir -p "$root"
for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root"; done
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUOLAP_CUDA=ON \
  -DCMAKE_PREFIX_PATH="$root/usr" >/dev/null
cmake --build build-gpu --parallel "$(nproc)"
