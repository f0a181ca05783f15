#!/usr/bin/env bash
# Issue 23's measurements on the GPU machine, logs and tables to $OUT:
#   answers.sh server [CUBES]   the command built; the thesis queries through
#                               `gpuolap serve --engine gpu` against the
#                               engine's own time (bench/server/
#                               thesis_through_server.py), JSON answers
#                               (and CSV with ANSWERS_CSV=1; again under
#                               GLIBC_TUNABLES=$ANSWERS_TUNABLES); CUBES
#                               default biker:1,machines:1
#   answers.sh cpu BIKER MACH   the command built; cpu-parallel against
#                               DuckDB (the carried .whl) on every core
#                               (bench/molap/cpu_vs_duckdb.py) at the given
#                               Biker and Machines scales
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-/tmp/gpuolap-out}"
mkdir -p "$out"
mode="${1:-server}"
shift || true
nvidia-smi -L
SECONDS=0
if ! scripts/device/build.sh gpuolap > "$out/build.log" 2>&1; then
  grep -E "error|Error" "$out/build.log" | head -30
  exit 1
fi
echo "built in $SECONDS s"
case "$mode" in
  server)
    cubes="${1:-biker:1,machines:1}"
    python3 bench/server/thesis_through_server.py --bin build-gpu/src/gpuolap --cubes "$cubes" --engine gpu \
      --md "$out/server-json.md" 2> "$out/server-json.log"
    echo "json: exit $? at $SECONDS s"
    if [ -n "${ANSWERS_TUNABLES:-}" ]; then  # again under other malloc settings, e.g. glibc.malloc.mmap_threshold=...
      GLIBC_TUNABLES="$ANSWERS_TUNABLES" python3 bench/server/thesis_through_server.py --bin build-gpu/src/gpuolap \
        --cubes "$cubes" --engine gpu --label "GLIBC_TUNABLES=$ANSWERS_TUNABLES" --md "$out/server-tunables.md" \
        2> "$out/server-tunables.log"
      echo "tunables: exit $? at $SECONDS s"
    fi
    if [ "${ANSWERS_CSV:-0}" = 1 ]; then
      python3 bench/server/thesis_through_server.py --bin build-gpu/src/gpuolap --cubes "$cubes" --engine gpu \
        --format csv --md "$out/server-csv.md" 2> "$out/server-csv.log"
      echo "csv: exit $? at $SECONDS s"
    fi
    ;;
  cpu)
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
    PYTHONPATH=/tmp/site timeout "${ANSWERS_CPU_LIMIT:-500}" python3 bench/molap/cpu_vs_duckdb.py --gpuolap build-gpu/src/gpuolap \
      --biker-scale "${1:-0.1}" --machines-scale "${2:-0.5}" --serial-limit 5 \
      --md "$out/cpu-vs-duckdb.md" --png "$out/cpu-vs-duckdb.png" > "$out/cpu-vs-duckdb.log" 2>&1
    echo "cpu_vs_duckdb: exit $? at $SECONDS s"
    tail -20 "$out/cpu-vs-duckdb.log"
    ;;
esac
