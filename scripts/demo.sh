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
# A unity build (each library's files compiled a few at a time, as one):
# the headers every file includes (fmt, nlohmann-json, TBB, the HTTP and
# CLI libraries) are parsed once per batch, not once per file. On the
# 2-core VM: 369 CPU-seconds and 197 s against 714 and 359 file by file.
bash scripts/build.sh --dir build-demo --target gpuolap --setup build -DGPUOLAP_TESTS=OFF -DGPUOLAP_CUDA="$cuda" \
  -DCMAKE_UNITY_BUILD=ON >&2
gpuolap=build-demo/src/gpuolap
out=build-demo/demo
# The server a previous run left serving the cube that is about to be replaced.
pidfile=build-demo/demo-server.pid
if [ -f "$pidfile" ]; then
  kill "$(cat "$pidfile")" 2>/dev/null && echo "demo.sh: stopped the previous demo's server" >&2 && sleep 0.5 || true
  rm -f "$pidfile"
fi
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

# The pivot page: the demo cube served in the background, on port 7777 unless
# GPUOLAP_DEMO_PORT says otherwise (GPUOLAP_DEMO_PORT=none: not served).
port="${GPUOLAP_DEMO_PORT:-7777}"
if [ "$port" != none ]; then
  log="$out/serve.log"
  nohup "$gpuolap" serve --cube "$out/cube" --port "$port" >"$log" 2>&1 &
  server=$!
  echo "$server" >"$pidfile"
  for _ in $(seq 100); do
    grep -q '^listening on ' "$log" 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
  done
  echo
  if grep -q '^listening on ' "$log"; then
    echo "demo.sh: the demo cube is served at http://localhost:$port/ — open it in a browser for the pivot page" >&2
    echo "  (server pid $server, log $log; stop it with: kill $server)" >&2
  else
    echo "demo.sh: the demo cube could not be served on port $port (another port: GPUOLAP_DEMO_PORT=N):" >&2
    sed 's/^/  /' "$log" >&2
  fi
fi
echo
echo "demo.sh: the command is $PWD/$gpuolap; to call it gpuolap as the README does:" >&2
echo "  export PATH=\"$PWD/build-demo/src:\$PATH\"" >&2
