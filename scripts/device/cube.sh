#!/usr/bin/env bash
# On the GPU machine (issues 20 and 22), logs to $OUT: builds the command
# and the cube's gpu tests, runs them and the GPU algorithms against DuckDB
# (the wheel carried in .whl), then bench/cube/cube_bench.py (SCALES,
# default 0.04,0.2,0.4,1; DUCKDB=1 adds DuckDB's GROUP BY ROLLUP as the
# peer; GPUS=1,2,4 builds the gpu algorithms over GPUs 0..n-1 too;
# BENCH_ARGS passes more options, e.g. "--lineitem 1 --unsorted-only").
# The bench's tables are generated while the tests run.
#   cube.sh test | bench | all
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-all}"
nvidia-smi -L
build() {
  SECONDS=0
  if ! scripts/device/build.sh "$@" >> "$out/build.log" 2>&1; then
    grep -E "error|Error" "$out/build.log" | head -30
    exit 1
  fi
  echo "built $* in $SECONDS s"
}
[ -x build-gpu/src/gpuolap ] && [ "$mode" = bench ] || build gpuolap
work=/tmp/cube-bench
scales="${SCALES:-0.04,0.2,0.4,1}"
if [ "$mode" != test ]; then
  # cube_bench.py's tables (sales-<scale as a float>), made here meanwhile.
  for scale in ${scales//,/ }; do
    db="$work/sales-$(python3 -c "print(float('$scale'))")"
    [ -f "$db/sales_sorted.table" ] && continue
    build-gpu/src/gpuolap generate sales-flat --db "$db" --scale "$scale" &&
      build-gpu/src/gpuolap table sort --db "$db" --name sales --by year,month,day,product_group,product --out sales_sorted
  done > "$out/generate.log" 2>&1 &
fi
[ "$mode" = bench ] || build gpuolap_cube_gpu_tests
scripts/device/unpack_deps.sh
if ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site
fi
if [ "$mode" != bench ]; then
  SECONDS=0
  ctest --test-dir build-gpu -R 'CubeGpu' --output-on-failure --timeout 900 > "$out/ctest-cube-gpu.log" 2>&1
  echo "cube gpu tests: exit $? in $SECONDS s"
  grep -E "tests passed|\(Failed\)|Failure|Expected|Which is" "$out/ctest-cube-gpu.log" | head -30
  SECONDS=0
  python3 tests/cube/cube_vs_duckdb.py --gpuolap build-gpu/src/gpuolap --work /tmp/cube-vs-duckdb --seed 7 --tables 2 --cubes 8 \
    --algorithms gpu-naive,gpu-sorted,gpu-lattice,gpu-expand > "$out/cube-vs-duckdb.log" 2>&1
  echo "GPU cubes against DuckDB: exit $? in $SECONDS s"
  tail -5 "$out/cube-vs-duckdb.log"
fi
if [ "$mode" != test ]; then
  [ "${DUCKDB:-0}" = 1 ] && python3 -c 'import duckdb' 2>/dev/null && duck=--duckdb
  build-gpu/src/gpuolap bench --kind biker --scale 0.01 --engines gpu --repeat 1 2>/dev/null | grep -E "^GPU:" > "$out/bandwidth.txt"
  cat "$out/bandwidth.txt"
  bandwidth=$(grep -oE "[0-9.]+ TB/s" "$out/bandwidth.txt" | cut -d" " -f1)
  SECONDS=0
  wait
  echo "tables ready after $SECONDS s more"
  SECONDS=0
  python3 bench/cube/cube_bench.py --gpuolap build-gpu/src/gpuolap --work "$work" --scales "$scales" \
    --bandwidth "${bandwidth:-3.0}" --algorithms "${ALGORITHMS:-cpu-partitioned,gpu-naive,gpu-sorted,gpu-lattice,gpu-expand}" \
    --gpus "${GPUS:-1}" --repeat "${REPEAT:-5}" ${duck:-} ${BENCH_ARGS:-} --json "$out/cube-bench.json" \
    > "$out/cube-bench.md" 2> "$out/cube-bench.err"
  echo "cube bench: exit $? in $SECONDS s"
  cat "$out/cube-bench.md"
  tail -3 "$out/cube-bench.err"
fi
