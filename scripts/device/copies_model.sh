#!/usr/bin/env bash
# On the GPU machine: the copies model (the thesis' parallel hash functions).
#   scripts/device/copies_model.sh calibrate   build, gpu tests, `gpuolap calibrate`
#   scripts/device/copies_model.sh KIND        bench --copies-sweep on KIND at scale 1
#                                              with the budgets calibrated before
# Logs go to $OUT; the calibration is kept in build-gpu/ for the next call.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
bin=build-gpu/src/gpuolap
export GPUOLAP_CALIBRATION="$PWD/build-gpu/calibration.json"
SECONDS=0
if [ "${1:-calibrate}" = calibrate ]; then
  bash scripts/device/build.sh > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  echo "built in $SECONDS s"
  timeout 300 ctest --test-dir build-gpu -L gpu --output-on-failure > "$out/ctest.log" 2>&1
  echo "gpu tests exit $? at $SECONDS s"; grep -E "tests passed|Failed|FAILED" "$out/ctest.log"
  timeout 200 "$bin" calibrate --out "$GPUOLAP_CALIBRATION" > "$out/calibrate.md" 2>&1
  echo "calibrate exit $? at $SECONDS s"; cat "$out/calibrate.md"; cp "$GPUOLAP_CALIBRATION" "$out/"
else
  # Carrying .deps replaces the unpacked libraries the binary links to: unpack again (no rebuild).
  bash scripts/device/build.sh > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
  timeout 500 "$bin" bench --kind "$1" --scale 1 --engines gpu --copies-sweep --repeat 1 > "$out/copies-$1.md" 2>&1
  echo "bench exit $? at $SECONDS s"
  sed -n '/^## Copies per target/,$p' "$out/copies-$1.md"
fi
