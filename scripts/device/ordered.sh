#!/usr/bin/env bash
# Ordered aggregation on the GPU machine (issue 18), logs to $OUT:
#   ordered.sh test     build the command, the ordered-aggregation gpu tests
#                       and the benchmark; run those tests, then the CLI's
#                       --selfcheck on a lineitem table
#   ordered.sh all-gpu  the same build, then every `gpu` test
#   ordered.sh bench [ARGS...]
#                       gpuolap_ordered_bench ARGS (default: every figure)
#                       into $OUT/ordered-bench.csv, and its plots
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-test}"
shift || true
nvidia-smi -L
# The carried .deps replaces the unpacked one at every call: unpack again.
root="$PWD/.deps/root"
mkdir -p "$root"
for deb in .deps/debs/*.deb; do dpkg -x "$deb" "$root"; done
SECONDS=0
export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUOLAP_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/usr" > "$out/build.log" 2>&1
targets=(gpuolap gpuolap_groupby_gpu_tests gpuolap_ordered_bench)
[ "$mode" = all-gpu ] && targets+=(gpuolap_gpu_tests gpuolap_gpu_primitives_tests)
if ! cmake --build build-gpu --parallel "$(nproc)" --target "${targets[@]}" >> "$out/build.log" 2>&1; then
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
  bench)
    SECONDS=0
    build-gpu/bench/gpuolap_ordered_bench --out "$out/ordered-bench.csv" "$@" > "$out/ordered-bench.log" 2>&1
    echo "bench: exit $? in $SECONDS s"
    tail -5 "$out/ordered-bench.log"
    ;;
esac
