#!/usr/bin/env bash
# The power-loss check of the cube store (tests/storage/power_loss/) over a
# write-heavy workload: every cut point of W writes with a checkpoint every
# K, each crash state a cut there may leave opened as a reader and as a
# writer. Prints what was checked and how many acknowledged writes were
# lost; exits non-zero if any crash state failed. Of the crash states a
# writer had to repair, every R-th is recovered under the shim and written
# to again, and every cut of that checked too.
#   bash bench/power_loss.sh [writes, default 10000] [checkpoint every, default 100] [seed, default 1] [R, default 100]
# BUILD names the build folder (default build-cpu); the work directory goes
# to /dev/shm when there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
writes=${1:-10000}
every=${2:-100}
seed=${3:-1}
recovery_every=${4:-100}
build=${BUILD:-build-cpu}
ninja -C "$build" power_loss_bench >/dev/null
base=/dev/shm
[ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/gpuolap_power_loss.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "# Power loss, tested: every cut point of a write-heavy workload"
echo
echo "$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores, work directory on $(df --output=fstype "$base" | tail -1)"
echo
echo '```'
"$build/tests/storage/power_loss/power_loss_bench" "$work/check" "$writes" "$every" "$seed" - "$recovery_every"
echo '```'
