#!/usr/bin/env bash
# On the GPU machine: build, run the gpu tests, then time `auto` on every
# thesis query at scale 1 with its stages (issue 3's whole-query targets),
# and M2/M3 with phase 1 in each store and pre-aggregation. Prints a
# summary; full logs go to $OUT.
# Usage: scripts/device/auto_stages.sh [REPEAT]   (PHASE1=0: auto only)
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
repeat="${1:-7}"
bin=build-gpu/src/gpuolap
SECONDS=0
bash scripts/device/build.sh > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "built in $SECONDS s"
timeout 400 ctest --test-dir build-gpu -L gpu --output-on-failure > "$out/ctest.log" 2>&1
echo "gpu tests exit $?"; grep -E "tests passed|Failed|FAILED" "$out/ctest.log"

# The row's query, engine and median ms; the plan's stages.
summary() { grep -E '^\| [BM][0-9] ' "$1" | awk -F'|' '{print $2 "|" $8 "|" $9 "|" $10 "| updates" $13}'
            grep -E '^- [BM][0-9] ' "$1" | sed -E 's/^- ([BM][0-9]) [^:]*: (host us[^;]*; )?.*(store [a-z]+, copies [0-9]+)(.*)$/\1 \2\3\4/'; }
timeout 400 "$bin" bench --kind all --scale 1 --engines gpu --repeat "$repeat" > "$out/auto.md" 2> "$out/auto.err"
echo "## auto, exit $?"; summary "$out/auto.md"
[ "${PHASE1:-1}" = 1 ] || exit 0
# Phase 1 of M2/M3 under each store and pre-aggregation (run: the
# thread-run kernel; none, lane0, match: the source kernel's lean path).
for variant in dense shared; do
  for preagg in run lane0 match; do
    timeout 200 "$bin" bench --kind machines --scale 1 --engines gpu --queries M2,M3 --two-phase on \
      --variant "$variant" --preagg "$preagg" --repeat "$repeat" > "$out/m-$variant-$preagg.md" 2>&1
    echo "## M2, M3 --two-phase on --variant $variant --preagg $preagg, exit $?"; summary "$out/m-$variant-$preagg.md"
  done
done
