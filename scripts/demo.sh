#!/usr/bin/env bash
# The main job: set up, build the gpuolap command, generate the embedded demo
# cube, store it, and answer its sample queries with the best engine
# available, printing the answers and their timings.
#
# It builds only the command (no tests) into build-demo/, its own folder, so
# that it never changes the cache of build/ that scripts/test.sh builds
# everything in. The CUDA code (most of a build's time) is compiled only
# where it can run: when `nvidia-smi -L` finds a GPU, or when asked with
# GPUOLAP_CUDA=ON (AUTO: wherever nvcc is; OFF: never).
set -euo pipefail
cd "$(dirname "$0")/.."
cuda="${GPUOLAP_CUDA:-}"
if [ -z "$cuda" ]; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then cuda=ON; else cuda=OFF; fi
fi
case "$cuda" in
  ON | OFF | AUTO) ;;
  *) echo "demo.sh: GPUOLAP_CUDA=$cuda: expected ON, OFF or AUTO" >&2; exit 2 ;;
esac
echo "demo.sh: building the gpuolap command into build-demo/ (CUDA $cuda)" >&2
bash scripts/build.sh --dir build-demo --target gpuolap --setup build -DGPUOLAP_TESTS=OFF -DGPUOLAP_CUDA="$cuda" >&2
gpuolap=build-demo/src/gpuolap
out=build-demo/demo
rm -rf "$out"
"$gpuolap" generate --kind demo --out "$out"
"$gpuolap" create --schema "$out/schema.json" --facts "$out/facts.csv" --out "$out/cube"
"$gpuolap" info --cube "$out/cube"
for q in "$out"/queries/*.json; do
  echo
  echo "== $(basename "$q" .json): $(tr -s ' \n' ' ' <"$q" | sed 's/ $//')"
  "$gpuolap" query --cube "$out/cube" --query "$q" --engine auto --timing 2>&1
done

# The relational half: the cube-creation paper's flat sales table (250,000
# rows at this scale) in a database, and GROUP BY ROLLUP through SQL.
"$gpuolap" generate sales-flat --db "$out/db" --scale 0.01
sql="SELECT year, product_group, SUM(amount) AS revenue, COUNT(*) AS sales FROM sales
     GROUP BY ROLLUP(year, product_group) ORDER BY year NULLS LAST, product_group NULLS LAST LIMIT 8"
echo
echo "== sql: $sql"
"$gpuolap" sql --db "$out/db" --engine cpu-parallel --format table "$sql"
echo
echo "demo.sh: the command is $PWD/$gpuolap; to call it gpuolap as the README does:" >&2
echo "  export PATH=\"$PWD/build-demo/src:\$PATH\"" >&2
