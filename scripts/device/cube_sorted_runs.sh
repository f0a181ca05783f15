#!/usr/bin/env bash
# On the GPU machine (issue 20): the lattice's two reductions of sorted
# rows into runs (`--sorted-runs one-pass` and `cub`) side by side in one
# binary. Builds gpuolap and the cube's and groupby's gpu tests, runs the
# tests that the one-pass kernel and the aggregate states it shares touch
# (TESTS, a ctest regex; each under a time limit), then cube_kernels.sh's
# resident stages (NCU=0, REPEAT builds) for both ways in turns, ROUNDS
# times, then Nsight Compute's kernel list of each way in NCU_WAYS on the
# sorted table; then, if DEADLINE (seconds from the start) leaves time, the
# GPU cubes against DuckDB (the carried .whl). Logs to $OUT.
#   cube_sorted_runs.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
S=$SECONDS
scripts/device/build.sh gpuolap gpuolap_cube_gpu_tests gpuolap_groupby_gpu_tests > "$out/build.log" 2>&1
echo "built: $? at $((SECONDS - S)) s"
ctest --test-dir build-gpu -R "${TESTS:-CubeGpu|OrderedGpu|SharedGpu}" --timeout 150 --output-on-failure > "$out/ctest.log" 2>&1
echo "ctest exit $? at $((SECONDS - S)) s"
grep -E "tests passed|Failed|Timeout|Expected|Which is|sec$" "$out/ctest.log" | head -40
for round in $(seq 1 "${ROUNDS:-2}"); do
  for way in one-pass cub; do
    echo "=== round $round, $way"
    BUILD=0 NCU=0 REPEAT="${REPEAT:-20}" CUBE_ARGS="--sorted-runs $way" timeout 100 bash scripts/device/cube_kernels.sh 2>&1 |
      grep -E "==|run 20|    finest cells   |coarser|kernels \(|wall" | tee -a "$out/stages-$way.txt"
  done
done
echo "stages done at $((SECONDS - S)) s"
for way in ${NCU_WAYS:-one-pass cub}; do
  mkdir -p "$out/ncu-$way"
  OUT="$out/ncu-$way" BUILD=0 REPEAT=2 TABLES=sales_sorted CUBE_ARGS="--sorted-runs $way" timeout 120 \
    bash scripts/device/cube_kernels.sh > "$out/ncu-$way/log.txt" 2>&1
  echo "ncu $way: exit $? at $((SECONDS - S)) s"
  grep -E "mark_sorted_runs|reduce_runs_of_slot|merge_warp_heads|UniqueByKey|ReduceByKey|runs_from_starts|kernels, " \
    "$out/ncu-$way/kernels-sales_sorted.txt" | tail -12
done
bash scripts/device/cube_duckdb_check.sh $((${DEADLINE:-560} - (SECONDS - S)))
echo "done at $((SECONDS - S)) s"
