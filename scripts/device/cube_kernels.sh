#!/usr/bin/env bash
# On the GPU machine (issue 20): where one resident gpu-lattice build of the
# sales-flat cube spends its GPU time, kernel by kernel. Builds gpuolap,
# generates sales-flat at SCALE (default 1: 25 M rows) and its sorted copy,
# runs `cube build --timing` on both tables (REPEAT builds, the stages of
# the last printed), then Nsight Compute's duration of every kernel of a
# 2-build run (the second build is the resident one), printed in order.
#   cube_kernels.sh [ALGORITHM]   (default gpu-lattice)
# CUBE_ARGS: more `cube build` options (e.g. --sorted-runs cub); TABLES:
# which of sales_sorted and sales (default both).
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
algorithm="${1:-gpu-lattice}"
scale="${SCALE:-1}"
nvidia-smi -L
if [ ! -x build-gpu/src/gpuolap ] || [ "${BUILD:-1}" = 1 ]; then
  SECONDS=0
  scripts/device/build.sh gpuolap >> "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
  echo "built in $SECONDS s"
fi
bin=build-gpu/src/gpuolap
db=/tmp/cube-kernels/sales-$scale
if [ ! -f "$db/sales_sorted.table" ]; then
  $bin generate sales-flat --db "$db" --scale "$scale" > /dev/null &&
    $bin table sort --db "$db" --name sales --by year,month,day,product_group,product --out sales_sorted > /dev/null
fi
dims="year>month>day, product_group>product"
measure="sum(amount),count(*)"
tables="${TABLES:-sales_sorted sales}"
for table in $tables; do
  echo "== $table: $algorithm ${CUBE_ARGS:-}, resident, ${REPEAT:-10} builds"
  (cd /tmp && "$OLDPWD/$bin" cube build --db "$db" --table "$table" --dims "$dims" --measure "$measure" \
    --algorithm "$algorithm" ${CUBE_ARGS:-} --repeat "${REPEAT:-10}" --timing --out cube_out 2>&1 | tail -25)
done
if command -v ncu >/dev/null && [ "${NCU:-1}" = 1 ]; then
  for table in $tables; do
    (cd /tmp && ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base \
      "$OLDPWD/$bin" cube build --db "$db" --table "$table" --dims "$dims" --measure "$measure" \
      --algorithm "$algorithm" ${CUBE_ARGS:-} --repeat 2 --out cube_out) > "$out/ncu-$table.csv" 2> "$out/ncu-$table.err"
    echo "ncu $table: exit $?"
    python3 - "$out/ncu-$table.csv" > "$out/kernels-$table.txt" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, body = rows[0], rows[1:]
name, value, ident = head.index("Kernel Name"), head.index("Metric Value"), head.index("ID")
kernels = [(int(r[ident]), r[name], float(r[value].replace(",", ""))) for r in body if r[value].replace(",", "").replace(".", "").isdigit()]
print(f"{len(kernels)} kernels, {sum(k[2] for k in kernels) / 1000:.1f} us in all (both builds)")
for i, n, v in kernels:
    print(f"{i:4d} {v / 1000:9.1f} us  {n[:100]}")
PY
    head -1 "$out/kernels-$table.txt"
  done
fi
