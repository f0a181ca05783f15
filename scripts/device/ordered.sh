#!/usr/bin/env bash
# Ordered aggregation on the GPU machine (issue 18), logs to $OUT:
#   ordered.sh test     build the command, the ordered-aggregation gpu tests
#                       and the benchmark; run those tests, then the CLI's
#                       --selfcheck on a lineitem table
#   ordered.sh all-gpu  the same build, then every `gpu` test
#   ordered.sh bench [ARGS...]
#                       gpuolap_ordered_bench ARGS (default: every figure)
#                       into $OUT/ordered-bench.csv
#   ordered.sh peers    the command built; DuckDB (the carried .whl) and
#                       PyTorch where installed, beside groupby-ordered
#                       (bench/groupby/peers.py) into $OUT/peers.md
#   ordered.sh sql      the command and the cube/SQL gpu tests built; SQL's
#                       gpu-engine tests (its ordered, shared-memory and
#                       cube routes), then GROUP BY l_orderkey on lineitem
#                       SF $ORDERED_SF (default 10) on the gpu engine,
#                       cpu-parallel and DuckDB (the carried .whl):
#                       bench/sql/ordered_vs_duckdb.py --gpu into $OUT/sql.md
#   ordered.sh figures  only the benchmark built; the paper's figures at
#                       2^15..2^28 rows ($OUT/paper.csv), then the contenders
#                       at 2^20..2^30 and on lineitem SF 10 ($OUT/best.csv),
#                       each under a time limit (the device's calls are 10
#                       minutes); plot with bench/groupby/plot_ordered.py
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-test}"
shift || true
nvidia-smi -L
SECONDS=0
targets=(gpuolap gpuolap_groupby_gpu_tests gpuolap_ordered_bench)
[ "$mode" = all-gpu ] && targets+=(gpuolap_gpu_tests gpuolap_gpu_primitives_tests)
[ "$mode" = figures ] && targets=(gpuolap_ordered_bench)
[ "$mode" = peers ] && targets=(gpuolap)
[ "$mode" = sql ] && targets=(gpuolap gpuolap_cube_gpu_tests)
# build.sh unpacks the carried .deps (replaced at every call) and builds.
if ! scripts/device/build.sh "${targets[@]}" > "$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -30
  exit 1
fi
echo "built in $SECONDS s"
case "$mode" in
  test)
    SECONDS=0
    build-gpu/tests/gpuolap_groupby_gpu_tests > "$out/ordered-gpu-tests.log" 2>&1
    echo "ordered gpu tests: exit $? in $SECONDS s"
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure|error" "$out/ordered-gpu-tests.log" | head -30
    db=/tmp/ordered-db
    rm -rf "$db"
    build-gpu/src/gpuolap generate --kind lineitem --db "$db" --scale 1 > /dev/null 2>&1
    build-gpu/src/gpuolap groupby-ordered --db "$db" --table lineitem --by l_orderkey \
      --agg 'sum(l_extendedprice),count(*),min(l_shipdate),max(l_quantity),avg(l_discount)' --selfcheck \
      > "$out/selfcheck.csv" 2> "$out/selfcheck.err"
    echo "selfcheck: exit $?"
    cat "$out/selfcheck.csv" "$out/selfcheck.err"
    build-gpu/src/gpuolap groupby-ordered --db "$db" --table lineitem --by l_orderkey --agg 'sum(l_extendedprice)' \
      --timing --repeat 3 2>&1 >/dev/null | tail -12
    ;;
  all-gpu)
    SECONDS=0
    ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 900 > "$out/ctest-gpu.log" 2>&1
    echo "gpu tests: exit $? in $SECONDS s"
    grep -E "tests passed|\(Failed\)|\(Timeout\)" "$out/ctest-gpu.log" | head -20
    ;;
  peers)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    SECONDS=0
    PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 330 python3 bench/groupby/peers.py --gpuolap build-gpu/src/gpuolap \
      "$@" > "$out/peers.md" 2> "$out/peers.err"
    echo "peers: exit $? in $SECONDS s"
    cat "$out/peers.md"
    tail -3 "$out/peers.err"
    ;;
  sql)
    SECONDS=0
    build-gpu/tests/gpuolap_cube_gpu_tests --gtest_filter='SqlOrderedGpu.*:CubeGpu.Sql*' > "$out/sql-gpu-tests.log" 2>&1
    echo "SQL gpu tests: exit $? in $SECONDS s"
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure|error" "$out/sql-gpu-tests.log" | head -30
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    SECONDS=0
    PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout "${ORDERED_LIMIT:-300}" python3 bench/sql/ordered_vs_duckdb.py \
      --gpuolap build-gpu/src/gpuolap --gpu --work /tmp/ordered --scale "${ORDERED_SF:-10}" --repeat 5 --no-serial \
      --threads "$(nproc)" > "$out/sql.md" 2> "$out/sql.err"
    echo "SQL bench: exit $? in $SECONDS s"
    cat "$out/sql.md"
    tail -3 "$out/sql.err"
    # Where each engine's time goes (its operators, the last of the runs).
    for engine in gpu cpu-parallel; do
      build-gpu/src/gpuolap sql --db "/tmp/ordered/lineitem-sf${ORDERED_SF:-10}" --engine "$engine" --repeat 5 --timing \
        --max-rows 1000000000 "SELECT l_orderkey, SUM(l_extendedprice) AS a FROM lineitem GROUP BY l_orderkey" \
        2>&1 >/dev/null | sed -n '/^operators:/,$p'
    done
    ;;
  figures)
    SECONDS=0
    timeout 230 build-gpu/bench/gpuolap_ordered_bench --out "$out/paper.csv" --figures arch,intent,variant \
      --sizes 15,20,24,28 --reps 3 > "$out/paper.log" 2>&1
    echo "paper figures: exit $? in $SECONDS s"
    SECONDS=0
    timeout 200 build-gpu/bench/gpuolap_ordered_bench --out "$out/best.csv" --figures best,cpu,lineitem \
      --sizes 20,24,28,30 --reps 3 --lineitem-scale 10 > "$out/best.log" 2>&1
    echo "contenders: exit $? in $SECONDS s"
    head -1 "$out/paper.log"
    ;;
  bench)
    SECONDS=0
    build-gpu/bench/gpuolap_ordered_bench --out "$out/ordered-bench.csv" "$@" > "$out/ordered-bench.log" 2>&1
    echo "bench: exit $? in $SECONDS s"
    tail -5 "$out/ordered-bench.log"
    ;;
esac
