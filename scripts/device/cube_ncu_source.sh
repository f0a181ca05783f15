#!/usr/bin/env bash
# On the GPU machine (issue 20): Nsight Compute's full set, with the source
# counters per SASS instruction, for the kernels of one resident gpu-lattice
# build of the sorted sales-flat cube whose names match KERNELS (a regex;
# default: the one-pass reduction of runs and CUB's reduce-by-key). Each
# way in WAYS (`--sorted-runs` values, default "one-pass cub") is one
# profile. Writes to $OUT: the .ncu-rep files, each kernel's details page,
# and its per-instruction source page as CSV (sass-<way>.csv).
#   cube_ncu_source.sh   (BUILD=0 skips the build; SCALE as cube_kernels.sh)
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
if [ "${BUILD:-1}" = 1 ]; then
  S=$SECONDS
  scripts/device/build.sh gpuolap >> "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
  echo "built in $((SECONDS - S)) s"
fi
bin="$PWD/build-gpu/src/gpuolap"
scale="${SCALE:-1}"
db=/tmp/cube-kernels/sales-$scale
if [ ! -f "$db/sales_sorted.table" ]; then
  $bin generate sales-flat --db "$db" --scale "$scale" > /dev/null &&
    $bin table sort --db "$db" --name sales --by year,month,day,product_group,product --out sales_sorted > /dev/null
fi
kernels="${KERNELS:-mark_sorted_runs|reduce_runs_of_slot|ReduceByKeyKernel}"
for way in ${WAYS:-one-pass cub}; do
  # Every launch of both builds (the first uploads the table, the second is
  # resident: the same kernels over the same rows).
  (cd /tmp && timeout 240 ncu --clock-control none --set full --import-source yes -k "regex:$kernels" \
    -f -o "$out/$way" \
    "$bin" cube build --db "$db" --table sales_sorted --dims "year>month>day, product_group>product" \
    --measure "sum(amount),count(*)" --algorithm gpu-lattice --sorted-runs "$way" --repeat 2 --out cube_out) \
    > "$out/ncu-$way.log" 2>&1
  echo "ncu $way: exit $?"
  ncu -i "$out/$way.ncu-rep" --page details > "$out/details-$way.txt" 2>&1
  ncu -i "$out/$way.ncu-rep" --page source --csv --print-source sass > "$out/sass-$way.csv" 2>&1 ||
    echo "source page: exit $? ($(head -c 300 "$out/sass-$way.csv"))"
  grep -E "^  [a-zA-Z_].*\(|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Theoretical Occupancy|Executed Ipc A|Warp Cycles Per Issued|No Eligible|L2 Hit" \
    "$out/details-$way.txt" | head -40
done
