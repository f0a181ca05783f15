#!/usr/bin/env bash
# Where the exact sums' stores cost time (issue 23, item 4): the thesis
# queries whose phase 1 writes a store per fact or per run (B3, M2, M3)
# under other copies per target, stores and one phase, at scale 1, engine
# gpu. Prints each query's row (median ms in the 7th column) and plan.
#   scripts/device/exact_stores.sh [gpuolap binary]
set -uo pipefail
bin=${1:-build-gpu/src/gpuolap}
run() {  # kind queries label options...
  local kind=$1 queries=$2 label=$3
  shift 3
  echo "## $queries $label"
  timeout 120 "$bin" bench --kind "$kind" --scale 1 --engines gpu --queries "$queries" --repeat 9 "$@" |
    grep -E '^\| [BM][0-9] |^- [BM][0-9] ' | sed -E 's/stages \(ms.*//'
}
run machines M2,M3 "auto"
for phf in 1 4 8 16 32; do run machines M2,M3 "--phf $phf" --phf "$phf"; done
run machines M3 "--variant hash" --variant hash
run machines M2,M3 "--two-phase off" --two-phase off
run biker B3 "auto"
run biker B3 "--variant dense" --variant dense
run biker B3 "--variant dense --phf 8" --variant dense --phf 8
run biker B3 "--two-phase off" --two-phase off
run biker B3 "--preagg lane0" --preagg lane0
