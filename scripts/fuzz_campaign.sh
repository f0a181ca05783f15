#!/usr/bin/env bash
# A long fuzzing campaign over many cores (issue 24's volume: 10 M
# executions per harness): every harness named runs at once, each as J
# libFuzzer processes over one shared corpus (a copy of its seeds; each
# reads what the others found), until they together have run the
# executions asked for or the time is up. Prints a markdown row per harness:
# executions summed over its jobs, their summed rate, the highest coverage
# and peak RSS of any job, the corpus at the end, and ok or the finding.
#
#   scripts/fuzz_campaign.sh [--bins DIR] [--seconds S] [--executions N]
#                            [--out DIR] [--resume DIR] [--reload S] [--separate]
#                            harness:jobs ...
#
# --bins holds the fuzz_<harness> binaries (default build-fuzz/tests/fuzz:
# bash scripts/fuzz.sh 1 builds them); --out keeps the logs, the final
# corpora and any finding (default: a temporary folder, removed). The limits
# are scripts/fuzz.sh's: 10 s an input, no allocation over 256 MB, a
# resident size under 256 MB over the harness's 128 MB baseline. --resume
# starts each harness from DIR/<harness>/corpus (an earlier campaign's --out)
# where there is one, so a campaign can go on in several sittings; the seeds
# are always added. --reload: how often a job reads what the others found
# (default 60 s; with libFuzzer's 1 s, 40 jobs of the SQL harness, each
# rescanning thousands of files a second, ran at 25 inputs a second each on
# a 64-core host). --separate: each job works on a corpus of its own (a
# copy of the shared one at the start; no reloads), and the jobs' corpora
# are merged into the harness's at the end — for hosts where jobs sharing
# a directory slow each other down.
set -euo pipefail
cd "$(dirname "$0")/.."
bins=build-fuzz/tests/fuzz
seconds=600
executions=10000000
out=""
resume=""
reload=60
separate=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bins) bins="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --executions) executions="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --resume) resume="$2"; shift 2 ;;
    --reload) reload="$2"; shift 2 ;;
    --separate) separate=1; shift ;;
    -*) echo "fuzz_campaign.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "fuzz_campaign.sh: name at least one harness:jobs" >&2; exit 2; }
if [ -z "$out" ]; then
  out=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
kBaselineMb=128
kOverMb=256
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# One thread a job for the parallel code (tests/fuzz/fuzz_input.hpp): the
# jobs fill the cores. Two SQL jobs on 2 cores ran 15-25 % faster so.
export GPUOLAP_FUZZ_THREADS=${GPUOLAP_FUZZ_THREADS:-1}
root=$PWD

pids=()
for spec in "$@"; do
  h=${spec%%:*}
  jobs=${spec#*:}
  [ "$jobs" != "$spec" ] || jobs=1
  binary=$root/$bins/fuzz_$h
  [ -x "$binary" ] || binary=$bins/fuzz_$h
  [ -x "$binary" ] || { echo "fuzz_campaign.sh: no $bins/fuzz_$h" >&2; exit 2; }
  dir=$out/$h
  rm -rf "$dir"
  mkdir -p "$dir/tmp" "$dir/artifacts"
  cp -r "$root/tests/fuzz/corpus/$h" "$dir/corpus"
  if [ -n "$resume" ] && [ -d "$resume/$h/corpus" ]; then cp -r "$resume/$h/corpus/." "$dir/corpus/"; fi
  dict=()
  [ -f "$root/tests/fuzz/$h.dict" ] && dict=(-dict="$root/tests/fuzz/$h.dict")
  # Each job stops at its share of the executions (the shares add up to
  # them) or at the time. libFuzzer looks at the time only once it has run
  # the corpus it starts from, which a resumed campaign's slow harness can
  # take longer than that: past it by a minute, a job is interrupted (SIGINT:
  # it still prints its statistics).
  runs=$(((executions + jobs - 1) / jobs))
  for ((j = 0; j < jobs; ++j)); do
    mkdir -p "$dir/tmp/$j"
    corpus=corpus
    if [ "$separate" = 1 ]; then
      corpus=corpus-$j
      rm -rf "${dir:?}/$corpus"
      cp -r "$dir/corpus" "$dir/$corpus"
    fi
    (cd "$dir" && TMPDIR=$dir/tmp/$j timeout -s INT -k 30 $((seconds + 60)) "$binary" "$corpus" "${dict[@]}" -runs="$runs" \
       -reload="$reload" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=$((kBaselineMb + kOverMb)) \
       -malloc_limit_mb=$kOverMb -print_final_stats=1 -artifact_prefix="$dir/artifacts/" >"$dir/fuzz-$j.log" 2>&1) &
    pids+=($!)
  done
done
for pid in "${pids[@]}"; do wait "$pid" || true; done
if [ "$separate" = 1 ]; then
  # Every job's finds into the harness's corpus (libFuzzer names inputs by
  # their hash, so the same input found twice is one file).
  for spec in "$@"; do
    dir=$out/${spec%%:*}
    for c in "$dir"/corpus-*; do cp -r "$c/." "$dir/corpus/" && rm -rf "$c"; done
  done
fi

failed=0
echo "| harness | jobs | executions | exec/s | cov | ft | corpus | peak RSS (MB) | result |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
for spec in "$@"; do
  h=${spec%%:*}
  jobs=${spec#*:}
  [ "$jobs" != "$spec" ] || jobs=1
  dir=$out/$h
  logs=("$dir"/fuzz-*.log)
  total=$(cat "${logs[@]}" | sed -n 's/^stat::number_of_executed_units: *//p' | awk '{s += $1} END {print s + 0}')
  rate=$(cat "${logs[@]}" | sed -n 's/^stat::average_exec_per_sec: *//p' | awk '{s += $1} END {print s + 0}')
  peak=$(cat "${logs[@]}" | sed -n 's/^stat::peak_rss_mb: *//p' | sort -n | tail -1)
  cov=$(cat "${logs[@]}" | grep -o 'cov: [0-9]*' | cut -d' ' -f2 | sort -n | tail -1)
  ft=$(cat "${logs[@]}" | grep -o 'ft: [0-9]*' | cut -d' ' -f2 | sort -n | tail -1)
  corpus=$(find "$dir/corpus" -type f | wc -l)
  result=ok
  # A finding: a sanitizer's or libFuzzer's report in any job's log, or an input kept.
  if grep -l -E '^==[0-9]+==ERROR|^SUMMARY: |ERROR: libFuzzer|runtime error:' "${logs[@]}" >/dev/null 2>&1 ||
     [ -n "$(ls -A "$dir/artifacts")" ]; then
    # (A kept input with no report in the log, such as libFuzzer's slow
    # units, is named instead: with pipefail, grep's "no match" stopped the
    # whole table here.)
    report=$(grep -h -m1 -E '^SUMMARY: |ERROR: libFuzzer|runtime error:' "${logs[@]}" | head -1 | cut -c1-120 || true)
    [ -n "$report" ] || report="kept $(ls "$dir/artifacts" | head -3 | tr '\n' ' ')"
    result="FOUND: $report"
    failed=1
  fi
  [ "$total" -ge "$executions" ] || [ "$result" != ok ] || result="ok, short of $executions"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$h" "$jobs" "$total" "$rate" "${cov:--}" "${ft:--}" \
    "$corpus" "${peak:--}" "$result"
done
exit $failed
