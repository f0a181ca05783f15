#!/usr/bin/env bash
# On the GPU machine (issue 20): one tree's resident gpu-lattice stages
# against another's on the same machine. Builds this tree (the command and
# the cube's gpu tests) and, beside it, the baseline (a copy of the older
# tree in BASE, e.g. `git archive <commit> | tar -x -C tmp/baseline`,
# carried), runs this tree's CubeGpu tests, then cube_kernels.sh's stages
# (NCU=0, REPEAT builds) for both in turns, ROUNDS times; then, if time is
# left, the GPU cubes against DuckDB (the carried .whl). Logs to $OUT.
#   cube_stages_ab.sh BASE
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
base="$1"
S=$SECONDS
[ -d "$base/.deps" ] || cp -r .deps "$base/"
(cd "$base" && scripts/device/build.sh gpuolap > "$out/build-before.log" 2>&1; echo "before built: $? at $((SECONDS - S)) s") &
scripts/device/build.sh gpuolap gpuolap_cube_gpu_tests > "$out/build-after.log" 2>&1
echo "after built: $? at $((SECONDS - S)) s"
wait
timeout 120 ctest --test-dir build-gpu -R CubeGpu --output-on-failure > "$out/ctest.log" 2>&1
echo "ctest exit $? at $((SECONDS - S)) s"
grep -E "tests passed|Failed|Expected|Which is" "$out/ctest.log" | head -20
for round in $(seq 1 "${ROUNDS:-2}"); do
  for tree in before after; do
    dir=.
    [ "$tree" = before ] && dir="$base"
    echo "=== round $round, $tree"
    (cd "$dir" && BUILD=0 NCU=0 REPEAT="${REPEAT:-20}" timeout 100 bash scripts/device/cube_kernels.sh 2>&1 |
      grep -E "==|run 20|    finest cells   |coarser|kernels \(|wall") | tee -a "$out/stages-$tree.txt"
  done
done
echo "stages done at $((SECONDS - S)) s"
left=$((540 - (SECONDS - S)))
if [ "$left" -gt 60 ] && ls .whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  PYTHONPATH=/tmp/site timeout "$left" python3 tests/cube/cube_vs_duckdb.py --gpuolap build-gpu/src/gpuolap \
    --work /tmp/cube-vs-duckdb --seed 7 --tables 2 --cubes 8 --algorithms gpu-naive,gpu-sorted,gpu-lattice,gpu-expand \
    > "$out/cube-vs-duckdb.log" 2>&1
  echo "GPU cubes against DuckDB: exit $? at $((SECONDS - S)) s"
  tail -4 "$out/cube-vs-duckdb.log"
fi
