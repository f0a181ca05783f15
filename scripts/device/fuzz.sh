#!/usr/bin/env bash
# On a many-core device host (no clang there): the long fuzzing campaign of
# scripts/fuzz_campaign.sh over harness binaries built on the development
# machine and carried in .fuzzbin/ (stripped, with the Debian libraries they
# link that the host's image lacks in .fuzzbin/lib):
#   here:  bash scripts/fuzz.sh 1 && mkdir -p .fuzzbin/lib &&
#          for f in build-fuzz/tests/fuzz/fuzz_*; do strip -o .fuzzbin/$(basename $f) $f; done &&
#          cp -L /usr/lib/x86_64-linux-gnu/{libtbb.so.12,libfmt.so.9,libxxhash.so.0} .fuzzbin/lib/
#   there: bash scripts/device/fuzz.sh SECONDS harness:jobs ...     (carry .fuzzbin)
# The table goes to stdout and $OUT/campaign.md, every job's log to
# $OUT/logs.tgz, the corpora at the end to $OUT/corpora.tgz. With
# .fuzzbin/resume.tgz (an earlier call's corpora.tgz), each harness goes on
# from its corpus there.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=$1
shift
export LD_LIBRARY_PATH=$PWD/.fuzzbin/lib
# Older system C++ libraries than the one the binaries were linked with: carry that one too.
if ! .fuzzbin/fuzz_export_condition -runs=1 tests/fuzz/corpus/export_condition >/dev/null 2>&1 && [ -d .fuzzbin/lib-fallback ]; then
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$PWD/.fuzzbin/lib-fallback
fi
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
work=/tmp/fuzz-campaign
status=0
resume=()
if [ -f .fuzzbin/resume.tgz ]; then
  mkdir -p /tmp/fuzz-resume && tar xzf .fuzzbin/resume.tgz -C /tmp/fuzz-resume
  resume=(--resume /tmp/fuzz-resume)
fi
bash scripts/fuzz_campaign.sh --bins .fuzzbin --seconds "$seconds" --out "$work" "${resume[@]}" "$@" | tee "${OUT:-/tmp}/campaign.md" || status=$?
(cd "$work" && tar czf "${OUT:-/tmp}/logs.tgz" --exclude=corpus --exclude=tmp . &&
  tar czf "${OUT:-/tmp}/corpora.tgz" */corpus)
exit $status
