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

# The relational half: the cube-creation paper's flat sales table (250,000
# rows at this scale) in a database, and GROUP BY ROLLUP through SQL.
"$gpuolap" generate sales-flat --db "$out/db" --scale 0.01
sql="SELECT year, product_group, SUM(amount) AS revenue, COUNT(*) AS sales FROM sales
     GROUP BY ROLLUP(year, product_group) ORDER BY year NULLS LAST, product_group NULLS LAST LIMIT 8"
echo
echo "== sql: $sql"
"$gpuolap" sql --db "$out/db" --engine cpu-parallel --format table "$sql"
