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
bash scripts/device/cube_duckdb_check.sh $((540 - (SECONDS - S)))
echo "done at $((SECONDS - S)) s"
