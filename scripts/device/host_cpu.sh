#!/usr/bin/env bash
# The CPU-side benchmarks on a GPU machine's host cores (issues 17 and 25),
# with DuckDB from the carried wheel (.whl) and pyarrow as installed there:
# a CPU-only build of the command and the Python module into build-host/,
# then the stages named as arguments (default: all but sql), each under a
# time limit, logs to $OUT:
#   csv       bench/table/load_vs_duckdb.py      CSV load against DuckDB ($CSV_ROWS rows, default 6 M)
#   parquet   bench/python/parquet_load.py       Parquet load against pyarrow, in one process and --cold
#   scaling   the contention queries Q1 and Q2 (zipf, 10 M rows) on 2, 4, 8 and all cores (taskset)
#   methods   ROLLUP x ROLLUP and CUBE on sales-flat under each grouping-sets method of cpu-parallel
#   sql       bench/sql/sql_vs_duckdb.py         $SQL_WORKLOADS (default: ROLLUP x ROLLUP and CUBE on
#                                                sales-flat, Q1 and Q2 on zipf; star: TPC-H Q1 and SSB at $SQL_SCALES)
#   scripts/device/host_cpu.sh [csv] [parquet] [scaling] [sql]
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
stages=("$@")
[ ${#stages[@]} -eq 0 ] && stages=(csv parquet scaling)
scripts/device/unpack_deps.sh
root="$PWD/.deps/root"
export LD_LIBRARY_PATH="$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  > "$out/pip.log" 2>&1 || tail -5 "$out/pip.log"
export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
echo "host: $(nproc) hardware threads, $(python3 --version), duckdb $(python3 -c 'import duckdb; print(duckdb.__version__)'), pyarrow $(python3 -c 'import pyarrow; print(pyarrow.__version__)' 2>&1 | tail -1)"
SECONDS=0
if ! { cmake -S . -B build-host -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUOLAP_CUDA=OFF -DGPUOLAP_TESTS=OFF \
         -DGPUOLAP_PYTHON=ON -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" -DPython_EXECUTABLE="$(command -v python3)" \
         -DCMAKE_PREFIX_PATH="$root/usr" &&
       cmake --build build-host --parallel "$(nproc)"; } > "$out/build-host.log" 2>&1; then
  grep -E "error|Error|FAILED" -A3 "$out/build-host.log" | head -30
  exit 1
fi
echo "built in $SECONDS s at $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
site="$PWD/build-host/site"
rm -rf "$site" && mkdir -p "$site" && cp -r python/gpuolap "$site/" && cp build-host/python/_gpuolap*.so "$site/gpuolap/"
bin="$PWD/build-host/src/gpuolap"

for stage in "${stages[@]}"; do
  SECONDS=0
  case "$stage" in
    csv)
      timeout "${CSV_LIMIT:-240}" python3 bench/table/load_vs_duckdb.py --gpuolap "$bin" --rows "${CSV_ROWS:-6000000}" \
        --repeat 3 --dir /tmp/csvload > "$out/csv.log" 2>&1 ;;
    parquet)
      { PYTHONPATH="$site:$PYTHONPATH" timeout "${PARQUET_LIMIT:-150}" python3 bench/python/parquet_load.py --repeat 7 &&
        PYTHONPATH="$site:$PYTHONPATH" timeout "${PARQUET_LIMIT:-150}" python3 bench/python/parquet_load.py --repeat 5 --cold; } \
        > "$out/parquet.log" 2>&1 ;;
    scaling)
      {
        "$bin" generate zipf --db /tmp/zipf1 --scale 1 --seed 42 --theta 1 > /dev/null
        for cores in 2 4 8 "$(nproc)"; do
          for q in "SELECT SUM(d1.b) FROM f JOIN d1 ON f.fk = d1.id" "SELECT a, COUNT(*) FROM f GROUP BY a"; do
            echo "== $cores cores: $q"
            taskset -c "0-$((cores - 1))" "$bin" sql --db /tmp/zipf1 --engine cpu-parallel --repeat 20 --timing "$q" 2>&1 |
              grep -E "scan|merge|median"
          done
        done
      } > "$out/scaling.log" 2>&1 ;;
    sql)
      # (SQL_WORKLOADS: star, sales, zipf; SQL_SCALES: the star workload's scale factors)
      # shellcheck disable=SC2086
      timeout "${SQL_LIMIT:-420}" python3 bench/sql/sql_vs_duckdb.py --gpuolap "$bin" --work /tmp/sqlwork \
        --workloads ${SQL_WORKLOADS:-sales zipf} --scales ${SQL_SCALES:-1} --sales-scale 1 --zipf-scale 1 \
        --thetas 0 1 2 --repeat 5 --serial-repeat 1 --out "$out" > "$out/sql.log" 2>&1 ;;
    methods)
      # The grouping-set queries under each method cpu-parallel has (auto,
      # per-set, lattice, cube), beside the bench's auto (sql stage).
      {
        "$bin" generate sales-flat --db /tmp/sales1 --scale 1 --seed 42 > /dev/null
        for q in "SELECT year, month, day, product_group, product, SUM(amount) AS amount FROM sales GROUP BY ROLLUP(year, month, day), ROLLUP(product_group, product)" \
                 "SELECT year, month, product_group, product, SUM(amount) AS amount FROM sales GROUP BY CUBE(year, month, product_group, product)"; do
          for m in auto lattice cube per-set; do
            echo "== $m: $q"
            "$bin" sql --db /tmp/sales1 --engine cpu-parallel --grouping-sets "$m" --repeat 5 --timing --max-rows 100000000 \
              "$q" 2>&1 >/dev/null | grep -E "grouping sets by|cube operator|median"
          done
        done
      } > "$out/methods.log" 2>&1 ;;
    *) echo "unknown stage $stage"; exit 2 ;;
  esac
  echo "$stage: exit $? in $SECONDS s"
  cat "$out/$stage.log"
done
