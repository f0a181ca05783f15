#!/usr/bin/env bash
# Builds gpuolap and runs every test. Tests labelled `gpu` need an NVIDIA GPU
# and are left out, with a note, on a machine without one. Then every
# parser's fuzzing harness runs for 15 s (scripts/fuzz.sh, its own build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
exclude=()
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "test.sh: no NVIDIA GPU here; tests labelled 'gpu' are not run" >&2
  exclude=(-LE gpu)
fi
ctest --test-dir build --output-on-failure --parallel "$(nproc)" "${exclude[@]}"
GPUOLAP_FUZZ_SEED=1 bash scripts/fuzz.sh 15
