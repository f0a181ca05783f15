#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (clang, into build-fuzz/) and
# runs each for a bounded time over a copy of its seed corpus, so that
# nothing new is written into the repository. Fails when any harness finds a
# crash, a leak, an input slower than 10 s or a memory blow-up; the input
# that did it is kept in build-fuzz/artifacts/.
#
#   scripts/fuzz.sh [seconds-per-harness] [harness...]   (default: 15, all)
#
# Memory: the harnesses' cubes are a few kilobytes, so "256 MB over the
# cube's own size" is checked as: no single allocation over 256 MB
# (-malloc_limit_mb) and a resident size under 256 MB over what a harness
# holds before its first input (-rss_limit_mb, with the sanitizers' own
# memory — see kBaselineMb below — counted as that baseline).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-15}
shift || true
bash scripts/setup.sh

# A harness with the address sanitizer holds about this much before its
# first input (measured: bench/results/fuzz-2026-11-25.md).
kBaselineMb=${GPUOLAP_FUZZ_BASELINE_MB:-128}
# libFuzzer's random seed: 0 (the default) a new one each run; the tests
# pass a fixed one, so that a run of theirs mutates the same way each time
# and a red test is a change's doing, not a lucky draw (a finding of a
# longer run becomes a seed input and a fix).
seed=${GPUOLAP_FUZZ_SEED:-0}
kOverMb=256

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz "${generator[@]}" "${launcher[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGPUOLAP_CUDA=OFF -DGPUOLAP_TESTS=OFF -DGPUOLAP_FUZZ=ON
fi
cmake --build build-fuzz --target gpuolap_fuzzers --parallel "$(nproc)"

harnesses=("$@")
if [ ${#harnesses[@]} -eq 0 ]; then
  for source in tests/fuzz/*.cpp; do harnesses+=("$(basename "$source" .cpp)"); done
fi

# The store and log harnesses write a file per input: on a tmpfs where there
# is one (sixty times the executions per second of a disk).
if [ -d /dev/shm ] && [ -w /dev/shm ]; then work=$(mktemp -d -p /dev/shm); else work=$(mktemp -d); fi
trap 'rm -rf "$work"' EXIT
mkdir -p build-fuzz/artifacts
# ASan keeps freed memory in quarantine to catch uses after free; 256 MB of
# it by default, which would count against the memory limit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

failed=()
printf '%-18s %12s %9s %7s %7s %8s  %s\n' harness executions exec/s cov ft peak_mb result
for h in "${harnesses[@]}"; do
  binary=build-fuzz/tests/fuzz/fuzz_$h
  seeds=tests/fuzz/corpus/$h
  if [ ! -x "$binary" ] || [ ! -d "$seeds" ]; then
    echo "fuzz.sh: harness '$h' needs $binary and a seed corpus in $seeds" >&2
    failed+=("$h")
    continue
  fi
  corpus=$work/$h
  cp -r "$seeds" "$corpus"
  dict=()
  [ -f "tests/fuzz/$h.dict" ] && dict=(-dict="tests/fuzz/$h.dict")
  log=$work/$h.log
  scratch=$work/$h-tmp
  mkdir -p "$scratch"
  result=ok
  if ! TMPDIR=$scratch "$binary" "$corpus" "${dict[@]}" -seed="$seed" -max_total_time="$seconds" -timeout=10 \
      -rss_limit_mb=$((kBaselineMb + kOverMb)) -malloc_limit_mb=$kOverMb -print_final_stats=1 \
      -artifact_prefix="build-fuzz/artifacts/$h-" >"$log" 2>&1; then
    result=FAILED
    failed+=("$h")
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  peak=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  ft=$(grep -o 'ft: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  printf '%-18s %12s %9s %7s %7s %8s  %s\n' "$h" "${runs:--}" "${rate:--}" "${cov:--}" "${ft:--}" "${peak:--}" "$result"
  if [ "$result" != ok ]; then
    echo "---- $h: the end of its log ----" >&2
    tail -40 "$log" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]} (inputs in build-fuzz/artifacts/)" >&2
  exit 1
fi
