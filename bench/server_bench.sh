#!/usr/bin/env bash
# Requests per second and p50/p99 latency of the HTTP API under wrk on
# loopback: cell/value of a consolidated cell, a 100-cell cell/area and
# cell/replace (add 1 to a random filled base cell) at 1, 8 and 64
# concurrent connections, on the demo cube and a 10 M-cell machines cube.
# Needs wrk, curl and jq (Debian packages); prints a markdown table.
#   bash bench/server_bench.sh [seconds per run, default 5] > bench/results/server-....md
# GPUOLAP_BIN names another build of the command (e.g. build-gpu/src/gpuolap).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-5}
bin=${GPUOLAP_BIN:-build/src/gpuolap}
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"' EXIT

$bin generate --kind demo --format store --out "$work/demo" 2>/dev/null
$bin generate --kind machines --scale 0.2422 --format store --out "$work/m10" 2>/dev/null

echo "# gpuolap serve under wrk"
echo
echo "$(date -u +%Y-%m-%d), commit $(git rev-parse --short HEAD), $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
gpu=$(nvidia-smi -L 2>/dev/null | head -1 || true)
echo "GPU: ${gpu:-none}. Engine auto: the gpu engine where there is a GPU, else cpu-serial below 200,000 facts and"
echo "cpu-parallel above. wrk and the server share the cores."
echo "Each run: \`wrk -t T -c C -d ${seconds}s --latency\` (T = 1 for C = 1, else 2). Errors: non-2xx answers plus socket errors."
echo
echo "| cube | request | clients | requests/s | p50 ms | p99 ms | errors |"
echo "|---|---|---:|---:|---:|---:|---:|"

run() {  # cube label clients url [script]
  local cube=$1 label=$2 c=$3 url=$4 script=${5:-}
  local t=2; [ "$c" -eq 1 ] && t=1
  local args=(-t "$t" -c "$c" -d "${seconds}s" --latency --timeout 30s)
  [ -n "$script" ] && args+=(-s "$script")
  local out
  out=$(wrk "${args[@]}" "$url")
  local rps p50 p99 non2xx sock
  rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
  p50=$(awk '$1 == "50%" {print $2}' <<<"$out")
  p99=$(awk '$1 == "99%" {print $2}' <<<"$out")
  non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
  sock=$(awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10}' <<<"$out")
  to_ms() { awk -v v="$1" 'BEGIN { if (v ~ /us$/) printf "%.3f", v / 1000; else if (v ~ /ms$/) printf "%.2f", v + 0; else if (v ~ /s$/) printf "%.0f", v * 1000; else print v }'; }
  echo "| $cube | $label | $c | $rps | $(to_ms "$p50") | $(to_ms "$p99") | $(( ${non2xx:-0} + ${sock:-0} )) |"
}

bench_cube() {  # name dir value-path(url-encoded) area-json
  local name=$1 dir=$2 value_path=$3 area=$4
  "$bin" serve --cube "$dir" --port 0 2>"$work/serve.err" &
  server=$!
  local port=""
  for _ in $(seq 1 600); do
    port=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$work/serve.err" | grep -o '[0-9]*$' || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/serve.err" >&2; exit 1; }
  local base="http://127.0.0.1:$port"
  echo "$area" >"$work/area.json"
  curl -sf "$base/cell/export?blocksize=500" | jq -c '.cells[].path' >"$work/paths.txt"
  # The same answers as a check that the requests are right.
  curl -sf "$base/cell/value?path=$value_path" >/dev/null
  [ "$(curl -sf -XPOST "$base/cell/area" --data-binary @"$work/area.json" | jq '.target_cells')" = 100 ]
  for c in 1 8 64; do run "$name" "cell/value (consolidated)" "$c" "$base/cell/value?path=$value_path"; done
  for c in 1 8 64; do BODY="$work/area.json" run "$name" "cell/area, 100 cells" "$c" "$base/cell/area" bench/server/post_body.lua; done
  for c in 1 8 64; do PATHS="$work/paths.txt" run "$name" "cell/replace (add)" "$c" "$base" bench/server/replace_random.lua; done
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=""
}

export BODY PATHS
bench_cube "demo (1,406 cells)" "$work/demo" "2024,Bikes,Europe" \
  '{"measure": "Revenue", "area": {"Years": ["2024-01","2024-02","2024-03","2024-04","2024-05","2024-06","2024-07","2024-08","2024-09","2024-10"], "Products": ["City Bike","Mountain Bike","Road Bike","E-Bike","Wheel","Saddle","Chain","Brake","Helmet","Jersey"], "Regions": ["World"]}}'
bench_cube "machines (10,001,504 cells)" "$work/m10" "Europe,2024,Q1,Early%20Shift,Drives,All%20Components" \
  '{"measure": "Value", "area": {"Plants": ["Stuttgart","Munich","Lyon","Turin","Graz","Brno","Wroclaw","Eindhoven","Bilbao","Gothenburg"], "Years": ["2016","2017","2018","2019","2020","2021","2022","2023","2024","2025"], "Days": ["Full Year"], "Hours": ["All Hours"], "Products": ["All Products"], "Components": ["All Components"]}}'
