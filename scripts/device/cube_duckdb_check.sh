#!/usr/bin/env bash
# On the GPU machine: the GPU cube algorithms against DuckDB's GROUPING SETS
# (tests/cube/cube_vs_duckdb.py, 128 builds, seed 7), with the DuckDB wheel
# carried in .whl, within SECONDS_LEFT seconds (skipped under 60 or without
# the wheel). Uses build-gpu/src/gpuolap; the log goes to $OUT.
#   cube_duckdb_check.sh SECONDS_LEFT
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
left="$1"
if [ "$left" -le 60 ] || ! ls .whl/*.whl > /dev/null 2>&1; then
  echo "GPU cubes against DuckDB: skipped ($left s left, or no wheel in .whl)"
  exit 0
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
PYTHONPATH=/tmp/site timeout "$left" python3 tests/cube/cube_vs_duckdb.py --gpuolap build-gpu/src/gpuolap \
  --work /tmp/cube-vs-duckdb --seed 7 --tables 2 --cubes 8 --algorithms gpu-naive,gpu-sorted,gpu-lattice,gpu-expand \
  > "$out/cube-vs-duckdb.log" 2>&1
status=$?
echo "GPU cubes against DuckDB: exit $status"
tail -4 "$out/cube-vs-duckdb.log"
exit $status
