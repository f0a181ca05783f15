#!/usr/bin/env bash
# The H-tree on the GPU machine (issue 21), logs to $OUT:
#   htree.sh test            build the htree gpu tests (and the groupby ones);
#                            run HTreeGpu.* and SharedGpu.*
#   htree.sh bench [ARGS...] build the benchmark; gpuolap_htree_bench ARGS
#                            (default: every figure) into $OUT/htree.csv
#   htree.sh server [ENGINES] build the command; the server's append and query
#                            path on a 10 M-tuple D15C40 tree (ENGINES default
#                            "gpu cpu-parallel")
#   htree.sh all [ARGS...]   one build of all three; the tests, the benchmark
#                            with ARGS, and the server with the gpu engine
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-test}"
shift || true
nvidia-smi -L
SECONDS=0
case "$mode" in
  test) targets=(gpuolap_htree_gpu_tests gpuolap_groupby_gpu_tests) ;;
  bench) targets=(gpuolap_htree_bench) ;;
  all) targets=(gpuolap_htree_gpu_tests gpuolap_groupby_gpu_tests gpuolap_htree_bench gpuolap) ;;
  *) targets=(gpuolap) ;;
esac
if ! scripts/device/build.sh "${targets[@]}" > "$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -30
  exit 1
fi
echo "built in $SECONDS s"
run_tests() {
    SECONDS=0
    build-gpu/tests/gpuolap_htree_gpu_tests > "$out/htree-gpu-tests.log" 2>&1
    echo "HTreeGpu tests: exit $? in $SECONDS s"
    grep -E "^\[  (PASSED|FAILED|  OK) |Failure|error|Expected|Which|level" "$out/htree-gpu-tests.log" | head -40
    SECONDS=0
    build-gpu/tests/gpuolap_groupby_gpu_tests --gtest_filter='SharedGpu.*' > "$out/shared-gpu-tests.log" 2>&1
    echo "SharedGpu tests: exit $? in $SECONDS s"
    grep -E "^\[  (PASSED|FAILED) " "$out/shared-gpu-tests.log" | head
}
run_bench() {
    build-gpu/bench/gpuolap_htree_bench --out "$out/htree.csv" "$@" 2>&1 | tee "$out/htree-bench.log" | tail -80
}
run_server() {
    bash bench/htree/server_bench.sh build-gpu/src/gpuolap "$out" 10M "${1:-gpu cpu-parallel}" 2>&1 |
      tee "$out/server.log" | tail -40
}
case "$mode" in
  test) run_tests ;;
  bench) run_bench "$@" ;;
  server) run_server "$@" ;;
  all)
    run_tests
    run_bench "$@"
    run_server gpu
    ;;
esac
