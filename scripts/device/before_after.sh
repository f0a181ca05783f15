#!/usr/bin/env bash
# On the GPU machine: one tree against another on the thesis suite, in one
# run (a change that must not change speed, such as a restructure). Builds
# this tree into build-gpu/ and the baseline (a copy of the older tree in
# BASE, e.g. `git archive <commit> | tar -x -C .baseline`, carried) into
# BASE/build-gpu/, runs this tree's gpu tests, then times both with
# `bench --kind all --scale 1 --engines gpu`, the trees taking turns.
# Usage: scripts/device/before_after.sh BASE STEP [SUITES] [REPEAT]
#   STEP: build (both trees and the gpu tests) | bench (both trees, SUITES turns)
# Logs go to $OUT; the last lines are a table of each query's medians.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
base="$1"
step="$2"
suites="${3:-2}"
repeat="${4:-9}"
SECONDS=0
if [ "$step" = build ]; then
  [ -d "$base/.deps" ] || cp -r .deps "$base/"
  bash scripts/device/build.sh > "$out/build-after.log" 2>&1 &
  after=$!
  bash "$base/scripts/device/build.sh" > "$out/build-before.log" 2>&1 &
  before=$!
  wait $after || { tail -30 "$out/build-after.log"; exit 1; }
  wait $before || { tail -30 "$out/build-before.log"; exit 1; }
  echo "both built in $SECONDS s"
  timeout 420 ctest --test-dir build-gpu -L gpu --output-on-failure > "$out/ctest-gpu.log" 2>&1
  echo "gpu tests exit $? at $SECONDS s"
  grep -E "tests passed|Failed|FAILED|Not Run" "$out/ctest-gpu.log" | head -20
  exit 0
fi
for i in $(seq 1 "$suites"); do
  for tree in before after; do
    bin=build-gpu/src/gpuolap
    [ "$tree" = before ] && bin="$base/build-gpu/src/gpuolap"
    timeout 280 "$bin" bench --kind all --scale 1 --engines gpu --repeat "$repeat" > "$out/bench-$tree-$i.md" \
      2> "$out/bench-$tree-$i.err"
    echo "$tree suite $i: exit $? at $SECONDS s"
  done
done
# Each query's median ms per suite and tree.
for tree in before after; do
  for i in $(seq 1 "$suites"); do
    printf '%s %s:' "$tree" "$i"
    grep -E '^\| [BM][0-9] ' "$out/bench-$tree-$i.md" | awk -F'|' '{gsub(/ /, "", $2); gsub(/ /, "", $8); printf " %s %s", $2, $8}'
    echo
  done
done
