#!/usr/bin/env bash
# The SQL benchmarks on a GPU machine's host CPUs (issues 17 and 18), with
# DuckDB from the carried wheel (.whl, on PYTHONPATH): a CPU-only build of
# the command into build-host/, then
#   bench/sql/ordered_vs_duckdb.py   GROUP BY l_orderkey on lineitem SF $ORDERED_SF (default 10)
#   bench/sql/sql_vs_duckdb.py       ROLLUP x ROLLUP and CUBE on sales-flat, the contention queries on zipf
# each under a time limit, logs and tables to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
scripts/device/unpack_deps.sh
SECONDS=0
if ! { cmake -S . -B build-host -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUOLAP_CUDA=OFF -DGPUOLAP_TESTS=OFF \
         -DCMAKE_PREFIX_PATH="$PWD/.deps/root/usr" &&
       cmake --build build-host --parallel "$(nproc)" --target gpuolap; } > "$out/build-host.log" 2>&1; then
  tail -20 "$out/build-host.log"
  exit 1
fi
echo "built in $SECONDS s on $(nproc) hardware threads"
SECONDS=0
timeout "${ORDERED_LIMIT:-200}" python3 bench/sql/ordered_vs_duckdb.py --gpuolap build-host/src/gpuolap --work /tmp/ordered \
  --scale "${ORDERED_SF:-10}" --repeat 3 --no-serial > "$out/ordered.md" 2>&1
echo "ordered: exit $? in $SECONDS s"
cat "$out/ordered.md"
SECONDS=0
timeout "${SQL_LIMIT:-300}" python3 bench/sql/sql_vs_duckdb.py --gpuolap build-host/src/gpuolap --work /tmp/sqlwork \
  --workloads sales zipf --sales-scale "${SALES_SCALE:-1}" --zipf-scale 1 --thetas 0 1 2 --repeat 5 --serial-repeat 1 \
  --out "$out" > "$out/sql.log" 2>&1
echo "sql: exit $? in $SECONDS s"
cat "$out/sql.log"
