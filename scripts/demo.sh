#!/usr/bin/env bash
# The main job: set up, build, generate the embedded demo cube, store it, and
# answer its sample queries with the best engine available, printing the
# answers and their timings.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >&2
gpuolap=build/src/gpuolap
out=build/demo
rm -rf "$out"
"$gpuolap" generate --kind demo --out "$out"
"$gpuolap" create --schema "$out/schema.json" --facts "$out/facts.csv" --out "$out/cube"
"$gpuolap" info --cube "$out/cube"
for q in "$out"/queries/*.json; do
  echo
  echo "== $(basename "$q" .json)"
  "$gpuolap" query --cube "$out/cube" --query "$q" --engine auto --timing 2>&1
done
