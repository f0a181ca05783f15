#!/usr/bin/env bash
# On the GPU machine: build with CUDA, run every test (the gpu-labelled ones
# included), the self-check, and the thesis benchmark; logs go to $OUT.
# Usage: scripts/device/gpu_check.sh [SCALE] [REPEAT]
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
scale="${1:-0.05}"
repeat="${2:-3}"
nvidia-smi -L
if ! bash scripts/device/build.sh > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"
  exit 1
fi
ctest --test-dir build-gpu --output-on-failure --parallel 8 > "$out/ctest.log" 2>&1
echo "ctest exit $?"
grep -E "tests passed|FAILED|Failed" "$out/ctest.log" | head -20
build-gpu/src/gpuolap selfcheck --engine gpu --cubes 10 --queries 6 > "$out/selfcheck.log" 2>&1
echo "selfcheck exit $?"; tail -3 "$out/selfcheck.log"
build-gpu/src/gpuolap bench --kind all --scale "$scale" --engines cpu-parallel,gpu --sweep --repeat "$repeat" \
  > "$out/bench.md" 2> "$out/bench.err"
echo "bench exit $?"
grep -E "^## |^GPU|auto" "$out/bench.md" | head -40
tail -5 "$out/bench.err"
