#!/usr/bin/env bash
# On a machine with several GPUs (issue 22), logs to $OUT:
#   multi_gpu.sh test    build the command and the gpu tests, run the gpu
#                        tests on one GPU, then again with every engine over
#                        every GPU (GPUOLAP_GPUS=all)
#   multi_gpu.sh bench [SCALE...]
#                        the thesis queries on one GPU, over GPUs 0-1,
#                        0-3, ... and over every GPU (bench --gpus-sweep),
#                        and auto, which chooses, at each scale (default 1);
#                        KIND=biker (default all) times one cube only
#   multi_gpu.sh all [SCALE...]
#                        test, then bench
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-test}"
shift || true
nvidia-smi -L
nvidia-smi topo -m > "$out/topology.txt" 2>&1
scripts/device/unpack_deps.sh  # the programs load the libraries from there
if [ ! -x build-gpu/src/gpuolap ] || [ "$mode" != bench ]; then
  SECONDS=0
  if ! scripts/device/build.sh gpuolap gpuolap_gpu_tests gpuolap_gpu_primitives_tests gpuolap_groupby_gpu_tests \
      > "$out/build.log" 2>&1; then
    grep -E "error|Error" "$out/build.log" | head -30
    exit 1
  fi
  echo "built in $SECONDS s"
fi
run_tests() {
  SECONDS=0
  ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 600 > "$out/ctest-one-gpu.log" 2>&1
  echo "gpu tests, one GPU: exit $? in $SECONDS s"
  grep -E "tests passed|\(Failed\)|\(Timeout\)" "$out/ctest-one-gpu.log" | head -20
  SECONDS=0
  GPUOLAP_GPUS=all ctest --test-dir build-gpu -L gpu --output-on-failure --timeout 600 > "$out/ctest-all-gpus.log" 2>&1
  echo "gpu tests, GPUOLAP_GPUS=all: exit $? in $SECONDS s"
  grep -E "tests passed|\(Failed\)|\(Timeout\)" "$out/ctest-all-gpus.log" | head -20
}
run_bench() {
  for scale in "${@:-1}"; do
  SECONDS=0
    build-gpu/src/gpuolap bench --kind "${KIND:-all}" --scale "$scale" --engines gpu,auto --gpus-sweep --repeat 9 \
      > "$out/bench-scale$scale.md" 2> "$out/bench-scale$scale.err"
    echo "bench scale $scale: exit $? in $SECONDS s"
    grep -E "^\| [BM][0-9]" "$out/bench-scale$scale.md" | cut -c1-200
    tail -3 "$out/bench-scale$scale.err"
  done
}
case "$mode" in
  test) run_tests ;;
  bench) run_bench "$@" ;;
  all) run_tests; run_bench "$@" ;;
esac
