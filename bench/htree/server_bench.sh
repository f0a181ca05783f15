#!/usr/bin/env bash
# The H-tree through the server (issue 21's targets): a D15C40T10M tree,
# served with the gpu engine (and then cpu-parallel), fed 100K-tuple batches
# by POST /htree/append (acknowledged once logged, synced and folded in) and
# asked 10K on-popular-path queries and 1K online-cubing queries by POST
# /htree/query; curl's total time per request, and the server's own, into
# OUT/server.csv.
#   server_bench.sh BIN OUT [TUPLES [ENGINES]]   (default 10M, "gpu cpu-parallel")
set -euo pipefail
bin="$1"
out="$2"
tuples="${3:-10M}"
engines="${4:-gpu cpu-parallel}"
work=$(mktemp -d /tmp/htree-server.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin" generate htree --db "$work/db" --shape "D15C40T$tuples" > /dev/null 2>&1
for b in 1 2 3 4 5 6; do
  "$bin" generate htree --db "$work/b$b" --shape D15C40T100K --seed $((100 + b)) > /dev/null 2>&1
  "$bin" sql --db "$work/b$b" "SELECT * FROM d15c40t100k" > "$work/batch$b.csv"
done
python3 - "$work" <<'PY'
import random, sys
w = sys.argv[1]
rng = random.Random(5)
dims = [f"d{i}" for i in range(1, 16)]
with open(f"{w}/popular.csv", "w") as f:
    f.write(",".join(dims) + "\n")
    for _ in range(10000):
        k = rng.randint(1, 15)
        f.write(",".join(str(rng.randrange(40)) if i < k else "*" for i in range(15)) + "\n")
with open(f"{w}/online.csv", "w") as f:
    f.write(",".join(dims) + "\n")
    for _ in range(1000):
        q = ["*"] * 15
        while True:
            for i in rng.sample(range(15), rng.randint(1, 3)):
                q[i] = str(rng.randrange(40))
            if q[0] == "*":
                break
            q = ["*"] * 15
        f.write(",".join(q) + "\n")
PY
echo "engine,request,run,curl_ms,server_ms,queries,side_link_nodes,stages" > "$out/server.csv"
for engine in $engines; do
  rm -rf "$work/tree"
  "$bin" htree build --db "$work/db" --table "d15c40t$(echo "$tuples" | tr 'A-Z' 'a-z')" --measure m \
    --order d1,d2,d3,d4,d5,d6,d7,d8,d9,d10,d11,d12,d13,d14,d15 --out "$work/tree" --engine "$engine" 2>&1 | tail -1
  "$bin" serve --htree "$work/tree" --htree-engine "$engine" --port 0 --max-body-bytes 268435456 \
    2> "$work/serve.log" &
  pid=$!
  port=""
  for _ in $(seq 1 600); do
    port=$(grep -oE "listening on http://[^:]+:[0-9]+" "$work/serve.log" | grep -oE "[0-9]+$" || true)
    [ -n "$port" ] && break
    sleep 0.5
  done
  head -3 "$work/serve.log"
  url="http://127.0.0.1:$port"
  for b in 1 2 3 4 5 6; do
    curl -s -o "$work/append.json" -w '%{time_total}' -H 'Content-Type: text/csv' --data-binary @"$work/batch$b.csv" \
      "$url/htree/append" > "$work/t"
    ms=$(python3 -c "import json;print(json.load(open('$work/append.json'))['ms'])")
    echo "$engine,append-100K,$b,$(python3 -c "print($(cat "$work/t")*1000)"),$ms,,," >> "$out/server.csv"
    echo "$engine append $b: $(cat "$work/append.json")" >> "$out/append-times.log"
  done
  for kind in popular online; do
    n=$([ $kind = popular ] && echo 10000 || echo 1000)
    for r in 1 2 3 4 5 6 7; do
      curl -s -D "$work/h" -o "$work/answer.csv" -w '%{time_total}' -H 'Content-Type: text/csv' \
        --data-binary @"$work/$kind.csv" "$url/htree/query" > "$work/t"
      sms=$(grep -i "X-HTree-Ms" "$work/h" | tr -d '\r' | awk '{print $2}')
      nodes=$(grep -i "X-HTree-Side-Link-Nodes" "$work/h" | tr -d '\r' | awk '{print $2}')
      stages=$(grep -i "X-HTree-Stages-Ms" "$work/h" | tr -d '\r' | cut -d' ' -f2- | tr -d ' ')
      echo "$engine,$kind-$n,$r,$(python3 -c "print($(cat "$work/t")*1000)"),$sms,$n,$nodes,$stages" >> "$out/server.csv"
    done
  done
  kill $pid
  wait $pid 2>/dev/null || true
done
cat "$out/server.csv"
cat "$out/append-times.log"
