#!/usr/bin/env bash
# Issue 5's M3 comparison on a GPU: M3 on the machines cube and its skewed
# twin under each one-phase kernel (the thesis' source kernel, the work
# list, the hybrid, CDP), without and with strided pre-aggregation, one
# hash function. Prints the bench rows and plans; usage: m3_kernels.sh [gpuolap binary].
set -uo pipefail
bin=${1:-build-gpu/src/gpuolap}
for kind in machines machines-skewed; do
  for preagg in none stride; do
    for kernel in source work-list hybrid cdp; do
      engine=gpu
      [[ $kernel == hybrid || $kernel == cdp ]] && engine=gpu-cdp
      echo "## $kind M3, --kernel $kernel --preagg $preagg"
      timeout 120 "$bin" bench --kind "$kind" --scale 1 --engines "$engine" --queries M3 --two-phase off \
        --preagg "$preagg" --phf 1 --kernel "$kernel" --repeat 2 | grep -E '^\| M3|^- M3'
    done
  done
done
