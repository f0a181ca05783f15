#!/usr/bin/env bash
# Builds gpuolap and runs every test. Tests labelled `gpu` need an NVIDIA GPU
# and are left out on a machine without one, each listed as skipped. Then the
# Python module is installed (scripts/python_setup.sh: pip install .) and its
# tests (tests/python) run with pytest against the command just built, and
# the pivot page's browser tests (tests/server/pivot, headless Chromium). Then
# every parser's fuzzing harness runs for 15 s (scripts/fuzz.sh, its own build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh "$@"
exclude=()
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "test.sh: no NVIDIA GPU here; tests labelled 'gpu' are not run" >&2
  exclude=(-LE gpu)
fi
ctest --test-dir build --output-on-failure --parallel "$(nproc)" "${exclude[@]}"
# ctest's summary counts only the tests it ran: name the ones left out, so a
# report without a GPU does not read as if every test had passed.
if [ ${#exclude[@]} -gt 0 ]; then
  skipped=$(ctest --test-dir build -N -L gpu | sed -n 's/^ *Test *#[0-9]*: //p')
  if [ -n "$skipped" ]; then
    echo "test.sh: $(printf '%s\n' "$skipped" | wc -l) tests labelled 'gpu' skipped (no NVIDIA GPU):"
    printf '%s\n' "$skipped" | sed 's/^/  skipped: /'
  else
    echo "test.sh: no tests labelled 'gpu' in this build (built without CUDA)"
  fi
fi
bash scripts/python_setup.sh
GPUOLAP_BIN="$PWD/build/src/gpuolap" python3 -m pytest -q tests/python
# The pivot page in headless Chromium, against a server of the command just built.
GPUOLAP_BIN="$PWD/build/src/gpuolap" python3 -m pytest -q tests/server/pivot
GPUOLAP_FUZZ_SEED=1 bash scripts/fuzz.sh 15
