#!/usr/bin/env bash
# On the GPU machine: builds the command, the tests and the Python module
# with CUDA in build-gpu/ (-DGPUOLAP_PYTHON=ON: the module from the same
# objects, not a second pip build), then runs the module's tests
# (tests/python, the gpu engines' included) and the ctest tests labelled
# gpu. Logs go to $OUT. The packages come from .deps (fetch_deps.sh).
#   scripts/device/python_gpu.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
nvidia-smi -L
scripts/device/unpack_deps.sh
root="$PWD/.deps/root"
export PATH="/usr/local/cuda/bin:$PATH"
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
python3 --version
if ! cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUOLAP_CUDA=ON -DGPUOLAP_PYTHON=ON \
    -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python3)" \
    -DCMAKE_PREFIX_PATH="$root/usr" > "$out/configure.log" 2>&1; then
  tail -30 "$out/configure.log"
  exit 1
fi
SECONDS=0
if ! cmake --build build-gpu --parallel "$(nproc)" > "$out/build.log" 2>&1; then
  grep -E "error|FAILED" -A3 "$out/build.log" | head -40
  exit 1
fi
echo "built in $SECONDS s"

# The package as pip would install it: python/gpuolap with the extension in it.
site="$PWD/build-gpu/site"
rm -rf "$site" && mkdir -p "$site" && cp -r python/gpuolap "$site/" && cp build-gpu/python/_gpuolap*.so "$site/gpuolap/"
SECONDS=0
PYTHONPATH="$site" GPUOLAP_BIN="$PWD/build-gpu/src/gpuolap" timeout 300 python3 -m pytest -q -rs -p no:cacheprovider \
  tests/python > "$out/pytest.log" 2>&1
echo "pytest exit $? in $SECONDS s"
tail -15 "$out/pytest.log"

SECONDS=0
timeout 240 ctest --test-dir build-gpu -L gpu --output-on-failure --parallel 8 --timeout 200 > "$out/ctest-gpu.log" 2>&1
echo "ctest -L gpu exit $? in $SECONDS s"
grep -E "tests passed|FAILED|Failed|\(Timeout\)" "$out/ctest-gpu.log" | head -30
