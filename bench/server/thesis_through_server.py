#!/usr/bin/env python3
"""The thesis queries as a client of the server sees them (issue 23's first
target): `POST /cell/area` with the query files `gpuolap generate` writes,
against the engine's own time for the same query over the same resident cube.

Per cube (kind:scale, e.g. biker:1): the store is generated once into --work,
`gpuolap bench --engines ENGINE --repeat R` gives the engine's median time
and the map's time per query (the cube resident, as in the server), then
`gpuolap serve --cube STORE --engine ENGINE` answers each query file over
one kept-alive loopback connection: --warmup requests first (the first
uploads the cube), then --repeat timed ones, from the request's first byte
to the answer's last (Python's http.client, JSON answers, or CSV with
--format csv). The target per query: client time <= engine + map + 1 ms +
answer bytes / (1 GB/s). The server's Server-Timing header says where its
own time went (request parsed, map, engine, answer written; medians), and
/proc says how many pages it faulted in per timed request.

    python3 bench/server/thesis_through_server.py --bin build-gpu/src/gpuolap \
        [--cubes biker:1,machines:1] [--engine gpu] [--repeat 15] [--md FILE]
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = {"biker": ["B1", "B2", "B3"], "machines": ["M1", "M2", "M3"]}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def engine_times(binary, kind, scale, engine, repeat):
    """{query: (median ms, kept map's ms)} from `gpuolap bench`'s table."""
    out = subprocess.run([binary, "bench", "--kind", kind, "--scale", scale, "--engines", engine, "--repeat",
                          str(repeat)], capture_output=True, text=True, check=True).stdout
    header, times = None, {}
    for line in out.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if "median ms" in cells:
            header = cells
            continue
        if header and len(cells) == len(header) and cells[header.index("engine")].startswith(engine):
            q = cells[header.index("query")]
            # "map ms (built / kept)": the server keeps each dimension's map,
            # so after the warm-up its queries pay the kept map's time.
            map_col = next(i for i, h in enumerate(header) if h.startswith("map ms"))
            times[q] = (float(cells[header.index("median ms")]), float(cells[map_col].split("/")[-1]))
    return times


def serve(binary, store, engine, log_path):
    """Starts the server with its stderr in a file (a pipe left unread could
    fill and stop it) and waits for its "listening on" line."""
    log_file = open(log_path, "w")
    proc = subprocess.Popen([binary, "serve", "--cube", str(store), "--engine", engine, "--port", "0", "--max-cells",
                             "100000000"], stderr=log_file)
    deadline = time.time() + 600
    while time.time() < deadline:
        m = re.search(r"listening on http://[0-9.]+:([0-9]+)", Path(log_path).read_text())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            raise RuntimeError("gpuolap serve exited before listening: " + Path(log_path).read_text()[-2000:])
        time.sleep(0.05)
    raise RuntimeError("gpuolap serve did not listen within 600 s")


def minor_faults(pid):
    """The process's minor page faults so far (/proc/PID/stat, field 10)."""
    with open("/proc/%d/stat" % pid) as f:
        return int(f.read().rsplit(")", 1)[1].split()[7])


def client_times(port, body, warmup, repeat, fmt, pid):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    path = "/cell/area" + ("?format=csv" if fmt == "csv" else "")
    headers = {"Content-Type": "application/json"}
    times, stages, size = [], {}, 0
    for i in range(warmup + repeat):
        if i == warmup:
            faults = minor_faults(pid)
        start = time.perf_counter()
        conn.request("POST", path, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        elapsed = (time.perf_counter() - start) * 1e3
        if resp.status != 200:
            raise RuntimeError("POST %s answered %d: %s" % (path, resp.status, data[:400]))
        size = len(data)
        if i >= warmup:
            times.append(elapsed)
            # "parse;dur=0.012, map;dur=..., ...": the server's own steps.
            for part in (resp.getheader("Server-Timing") or "").split(","):
                name, _, dur = part.strip().partition(";dur=")
                if dur:
                    stages.setdefault(name, []).append(float(dur))
    conn.close()
    stages["faults"] = [(minor_faults(pid) - faults) / repeat]
    return statistics.median(times), max(times), size, {k: statistics.median(v) for k, v in stages.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build-gpu/src/gpuolap")
    ap.add_argument("--cubes", default="biker:1,machines:1")
    ap.add_argument("--engine", default="gpu")
    ap.add_argument("--repeat", type=int, default=15, choices=range(1, 1001), metavar="1..1000")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--format", choices=["json", "csv"], default="json")
    ap.add_argument("--work", default="/tmp/thesis-server")
    ap.add_argument("--label", default="", help="a note for the report's first line (e.g. the malloc settings)")
    ap.add_argument("--md")
    args = ap.parse_args()

    rows = []
    for spec in args.cubes.split(","):
        kind, scale = spec.split(":")
        store = Path(args.work) / ("%s-%s" % (kind, scale))
        if not (store / "cube.gpuolap").exists():
            log("generating %s at scale %s" % (kind, scale))
            subprocess.run([args.bin, "generate", "--kind", kind, "--scale", scale, "--format", "store", "--force",
                            "--out", str(store)], check=True, capture_output=True)
        log("engine times (gpuolap bench) for %s" % spec)
        engine = engine_times(args.bin, kind, scale, args.engine, args.repeat)
        proc, port = serve(args.bin, store, args.engine, str(Path(args.work) / "serve.log"))
        try:
            for q in QUERIES[kind]:
                body = (store / "queries" / (q + ".json")).read_bytes()
                median, worst, size, stages = client_times(port, body, args.warmup, args.repeat, args.format, proc.pid)
                if q not in engine:
                    raise RuntimeError("gpuolap bench gave no %s time for %s" % (args.engine, q))
                eng, map_ms = engine[q]
                bound = eng + map_ms + 1.0 + size / 1e6  # 1 GB/s = 1e6 bytes per ms
                rows.append((spec, q, eng, map_ms, median, worst, size, bound, stages))
                log("%s %s: engine %.3f + map %.3f ms, through the server %.3f ms (%d bytes)" %
                    (spec, q, eng, map_ms, median, size))
        finally:
            proc.terminate()
            proc.wait()

    lines = ["# The thesis queries through the server (issue 23)", "",
             args.label + ("; " if args.label else "") + "%s, %s, engine %s, %s answers; %d cores; GPU: %s. Client: Python http.client over one kept-alive "
             "loopback connection, %d warm-up requests then the median (and maximum) of %d. Engine and map: "
             "`gpuolap bench --engines %s --repeat %d` (medians, cube resident). Bound: engine + map + 1 ms + "
             "answer bytes / (1 GB/s). The last column: the server's Server-Timing header (medians)." % (
                 time.strftime("%Y-%m-%d"), os.popen("git rev-parse --short HEAD").read().strip() or "?",
                 args.engine, args.format, os.cpu_count(),
                 os.popen("nvidia-smi -L 2>/dev/null | head -1").read().strip() or "none",
                 args.warmup, args.repeat, args.engine, args.repeat), "",
             "| cube | query | engine ms | map ms | answer bytes | server median ms | server max ms | bound ms | met |"
             " server's parse / map / engine / write ms | server's page faults per request |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|"]
    for spec, q, eng, map_ms, median, worst, size, bound, stages in rows:
        steps = " / ".join("%.3f" % stages.get(k, float("nan")) for k in ("parse", "map", "engine", "write"))
        lines.append("| %s | %s | %.3f | %.3f | %d | %.3f | %.3f | %.3f | %s | %s | %.0f |" %
                     (spec, q, eng, map_ms, size, median, worst, bound, "yes" if median <= bound else "**no**", steps,
                      stages["faults"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.md:
        Path(args.md).write_text(text)


if __name__ == "__main__":
    main()
