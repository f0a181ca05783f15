#!/usr/bin/env bash
# On the GPU machine: build with CUDA, run the thesis benchmark, every test
# (the gpu-labelled ones included) and a short self-check; logs go to $OUT.
# Usage: scripts/device/gpu_check.sh [SCALE] [REPEAT]   (SKIP_TESTS=1: bench only)
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
scale="${1:-0.05}"
repeat="${2:-3}"
nvidia-smi -L
SECONDS=0
if ! bash scripts/device/build.sh > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
echo "built in $SECONDS s"

SECONDS=0
build-gpu/src/gpuolap bench --kind all --scale "$scale" --engines cpu-parallel,gpu --sweep --repeat "$repeat" \
  > "$out/bench.md" 2> "$out/bench.err"
echo "bench exit $? in $SECONDS s"
grep -E "^## |^GPU|auto" "$out/bench.md" | head -40
tail -5 "$out/bench.err"
[ -n "${SKIP_TESTS:-}" ] && exit 0

SECONDS=0
ctest --test-dir build-gpu --output-on-failure --parallel 8 --timeout 300 > "$out/ctest.log" 2>&1
echo "ctest exit $? in $SECONDS s"
grep -E "tests passed|FAILED|Failed|slow configuration" "$out/ctest.log" | head -30
build-gpu/src/gpuolap selfcheck --engine gpu --cubes 3 --queries 4 > "$out/selfcheck.log" 2>&1
echo "selfcheck exit $?"; tail -3 "$out/selfcheck.log"
