#!/usr/bin/env bash
# On the GPU machine (issue 20): why the lattice's small coarser sets cost
# what they do. Builds gpuolap, makes sales-flat at scale 1 and its sorted
# copy, then runs a 2-build gpu-lattice cube under Nsight Compute three
# ways, into $OUT: every kernel's duration with warm caches (warm.csv), and
# the full section set for the two waves of cells_into_dense_wave of the
# second, resident build: the small sets' (small-full.txt) and the two
# sets made from the finest cells (big-full.txt). Each build makes 2 waves.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/o}"; mkdir -p "$out"
SECONDS=0
scripts/device/build.sh gpuolap > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head; exit 1; }
echo "built in $SECONDS s"
bin=$PWD/build-gpu/src/gpuolap; db=/tmp/k/sales-1
$bin generate sales-flat --db $db --scale 1 > /dev/null && $bin table sort --db $db --name sales --by year,month,day,product_group,product --out sales_sorted > /dev/null
args=(cube build --db $db --table sales_sorted --dims 'year>month>day, product_group>product' --measure 'sum(amount),count(*)' --algorithm gpu-lattice --repeat 2 --out cube_out)
cd /tmp
ncu --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --print-units base $bin "${args[@]}" > "$out/warm.csv" 2>/dev/null
echo "warm: $?"
ncu --clock-control none -k regex:cells_into_dense_wave --launch-skip 3 --launch-count 1 --set full $bin "${args[@]}" > "$out/small-full.txt" 2>&1
echo "full: $?"
ncu --clock-control none -k regex:cells_into_dense_wave --launch-skip 2 --launch-count 1 --set full $bin "${args[@]}" > "$out/big-full.txt" 2>&1
echo "big: $?"
