#!/usr/bin/env bash
# The memory-contention operators on the GPU machine (issue 19), logs to $OUT:
#   contention.sh test [LOG2]  build the groupby gpu tests and the benchmark;
#                              run the SharedGpu tests and the variants at
#                              2^LOG2 rows (default 24)
#   contention.sh cli          build the command; its --selfcheck of both
#                              operators on a zipf table, and the profiler's
#                              shared-memory bank conflicts (ncu, where
#                              installed) per variant
#   contention.sh sql          the command and the cube and groupby gpu tests
#                              built; SQL's gpu engine on the shared-memory
#                              route against cpu-serial (CubeGpu.Sql*), the
#                              SharedGpu tests, and `gpuolap sql --timing` of
#                              Q2 and Q1 on a zipf table of 100 M rows
#   contention.sh ncu          the benchmark built; the profiler's shared-
#                              memory bank conflicts and wavefronts of Q2's
#                              shared-memory kernel (one copy, naive replicas,
#                              the placement: two launches each) at theta 0 and
#                              2, C = 1,024, 2^22 rows
#   contention.sh bench [ARGS...]
#                              gpuolap_contention_bench ARGS into
#                              $OUT/contention.csv
#   contention.sh peers [ARGS...]
#                              DuckDB (the carried .whl) on the host's cores,
#                              bench/contention/peers.py ARGS into $OUT/peers.csv
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-test}"
shift || true
nvidia-smi -L
SECONDS=0
targets=(gpuolap_groupby_gpu_tests gpuolap_contention_bench)
[ "$mode" = cli ] && targets=(gpuolap)
[ "$mode" = ncu ] && targets=(gpuolap_contention_bench)
[ "$mode" = sql ] && targets=(gpuolap gpuolap_cube_gpu_tests gpuolap_groupby_gpu_tests)
if [ "$mode" != peers ]; then
  if ! scripts/device/build.sh "${targets[@]}" > "$out/build.log" 2>&1; then
    grep -E "error|Error" "$out/build.log" | head -30
    exit 1
  fi
  echo "built in $SECONDS s"
fi
bin=build-gpu/src/gpuolap
case "$mode" in
  test)
    SECONDS=0
    build-gpu/tests/gpuolap_groupby_gpu_tests --gtest_filter='SharedGpu.*' > "$out/shared-gpu-tests.log" 2>&1
    echo "SharedGpu tests: exit $? in $SECONDS s"
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure|error" "$out/shared-gpu-tests.log" | head -30
    SECONDS=0
    timeout 200 build-gpu/bench/gpuolap_contention_bench --out "$out/variants-quick.csv" --figures variants \
      --log2-rows "${1:-24}" --reps 3 > "$out/variants-quick.log" 2>&1
    echo "variants at 2^${1:-24}: exit $? in $SECONDS s"
    head -1 "$out/variants-quick.log"
    cut -d, -f2-6,11,14,22-24 "$out/variants-quick.csv" | head -120
    ;;
  cli)
    db=/tmp/contention-db
    rm -rf "$db"
    "$bin" generate zipf --db "$db" --scale 1 --theta 1.5 > /dev/null 2>&1
    "$bin" optimize --db "$db" --table f --column a --for write --budget 4 --window 16 > "$out/optimize.txt" 2>&1
    "$bin" optimize --db "$db" --table f --column fk --for read --budget 4 > "$out/optimize-read.txt" 2>&1
    cat "$out/optimize.txt"
    "$bin" groupby-shared --db "$db" --table f --by a --sum fk --min-max --selfcheck > "$out/selfcheck.csv" 2>&1
    echo "groupby selfcheck (integer sums, min/max, the stored placement): exit $?"; cat "$out/selfcheck.csv"
    "$bin" join-shared --db "$db" --table f --fk fk --dim d1 --value b --selfcheck > "$out/selfcheck-join.csv" 2>&1
    echo "join selfcheck: exit $?"; cat "$out/selfcheck-join.csv"
    if command -v ncu > /dev/null || [ -x /usr/local/cuda/bin/ncu ]; then
      ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
      metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,smsp__sass_inst_executed_op_shared_atom.sum,gpu__time_duration.sum
      for v in shared naive-replicas placement; do
        echo "## ncu: groupby-shared --variant $v (COUNT only, theta 1.5)"
        timeout 120 "$ncu" --metrics "$metrics" -k regex:grouped -c 1 "$bin" groupby-shared --db "$db" --table f \
          --by a --variant "$v" > "$out/ncu-$v.txt" 2>&1
        grep -E "bank_conflicts|wavefronts|shared_atom|duration" "$out/ncu-$v.txt" | head -8
      done
    else
      echo "no ncu on this machine"
    fi
    ;;
  sql)
    SECONDS=0
    build-gpu/tests/gpuolap_cube_gpu_tests --gtest_filter='CubeGpu.Sql*' > "$out/sql-gpu-tests.log" 2>&1
    echo "CubeGpu.Sql* tests: exit $? in $SECONDS s"
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure" "$out/sql-gpu-tests.log" | head -20
    build-gpu/tests/gpuolap_groupby_gpu_tests --gtest_filter='SharedGpu.*' > "$out/shared-gpu-tests.log" 2>&1
    echo "SharedGpu tests: exit $?"; grep -E "^\[  (PASSED|FAILED) " "$out/shared-gpu-tests.log"
    db=/tmp/contention-sql
    rm -rf "$db"
    "$bin" generate zipf --db "$db" --scale "${1:-10}" --theta 1.5 > /dev/null 2>&1
    # A sum of a 4-byte integer column (64-bit accumulators) per variant.
    "$bin" optimize --db "$db" --table f --column a --for write --budget 4 --window 16 | grep -E "optimization|copies a value"
    for v in shared naive-replicas placement warp-aggregation sort-reduce; do
      echo "## groupby-shared --sum fk --variant $v"
      timeout 60 "$bin" groupby-shared --db "$db" --table f --by a --sum fk --variant "$v" --repeat 3 --timing 2>&1 \
        >/dev/null | grep -E "kernel|sort|reduce|plan"
    done
    for q in "SELECT a, count(*), sum(fk) FROM f GROUP BY a ORDER BY 2 DESC LIMIT 3" \
             "SELECT count(*), sum(d1.b) FROM f JOIN d1 ON f.fk = d1.id"; do
      for engine in gpu cpu-parallel; do
        echo "## $engine: $q"
        timeout 120 "$bin" sql --db "$db" --engine "$engine" --repeat 5 --timing "$q" 2>&1 | tail -12
      done
    done
    ;;
  ncu)
    ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    [ -x "$ncu" ] || { echo "no ncu on this machine"; exit 0; }
    metrics=l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__sass_inst_executed_op_shared_atom.sum,gpu__time_duration.sum
    for theta in 0 2; do
      echo "## ncu, theta $theta: launches 1-2 one copy, 3-4 naive replicas, 5-6 the placement (Q2 SUM(double), C 1024)"
      timeout 150 "$ncu" --metrics "$metrics" -k regex:grouped_shared_kernel -c 6 \
        build-gpu/bench/gpuolap_contention_bench --out /tmp/ncu.csv --figures variants --log2-rows 22 \
        --thetas "$theta" --reps 1 > "$out/ncu-theta$theta.txt" 2>&1
      echo "exit $?"
      grep -E "grouped_shared_kernel|bank_conflicts|wavefronts|shared_atom|duration" "$out/ncu-theta$theta.txt" | head -40
    done
    ;;
  bench)
    SECONDS=0
    build-gpu/bench/gpuolap_contention_bench --out "$out/contention.csv" "$@" > "$out/contention.log" 2>&1
    echo "bench: exit $? in $SECONDS s"
    head -1 "$out/contention.log"
    cut -d, -f1-6,11,14,22-24 "$out/contention.csv" | head -200
    ;;
  peers)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    SECONDS=0
    PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 500 python3 bench/contention/peers.py "$@" > "$out/peers.csv" \
      2> "$out/peers.err"
    echo "peers: exit $? in $SECONDS s"
    cat "$out/peers.csv"
    tail -3 "$out/peers.err"
    ;;
esac
