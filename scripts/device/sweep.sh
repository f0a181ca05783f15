#!/usr/bin/env bash
# On the GPU machine: build (incremental), then time auto against every
# variant of the gpu engine on one cube at scale 1: the one-phase kernel
# under every store x pre-aggregation x {1, 8, 64} copies, two-phase, and
# the pair kernels (thesis tables 5.5-5.8). Prints each query's regret.
# Usage: scripts/device/sweep.sh KIND [REPEAT]     (KIND: biker, machines, machines-skewed)
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
kind="$1"
repeat="${2:-3}"
SECONDS=0
bash scripts/device/build.sh > "$out/build.log" 2>&1 || { tail -40 "$out/build.log"; exit 1; }
echo "built in $SECONDS s"
timeout 540 build-gpu/src/gpuolap bench --kind "$kind" --scale 1 --engines gpu --sweep --pair-kernels \
  --repeat "$repeat" > "$out/sweep-$kind.md" 2> "$out/sweep-$kind.err"
echo "bench exit $? at $SECONDS s"
sed -n '/^| query | as asked/,/^$/p' "$out/sweep-$kind.md"
grep -E '^- [BM][0-9] gpu --variant auto' "$out/sweep-$kind.md" | cut -c1-400
