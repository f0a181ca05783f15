#!/usr/bin/env python3
"""The cube-creation paper's fig. 5 re-measured: `gpuolap cube build` on the
sales-flat table (Year, Month, Day, Group, Product, Amount; 25 M rows at
scale 1) for each algorithm and row count, the table sorted (as the paper's
improved algorithm assumes) and not, with the stages the command reports:
encode (host, once), upload (host to device), kernels, download, result
table. DuckDB's GROUP BY ROLLUP(...), ROLLUP(...) on the same rows and host
is the peer (the rows exported once as CSV).

Writes a Markdown table to stdout and the raw numbers as JSON (--json).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

DIMS = "year>month>day, product_group>product"
MEASURE = "sum(amount),count(*)"
STAGE = re.compile(r"^\s{4}(.+?)\s+([0-9.]+) ms$")


def on_gpu(algorithm):
    """A gpu algorithm, or auto (which, on a machine with a GPU, picks one)."""
    return algorithm.startswith("gpu-") or algorithm == "auto"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def parse_timing(err):
    """Run 1's and the last run's stages, the wall times, the cells."""
    out = {"run1": {}, "last": {}, "cells": None}
    section = None
    for line in err.splitlines():
        if line.startswith("cube build:"):
            out["cells"] = int(re.search(r"(\d+) cells", line).group(1))
            out["chose"] = re.search(r"algorithm (\S+) \(", line).group(1)
        elif line.strip() == "run 1:":
            section = "run1"
        elif line.strip().startswith("run ") and line.strip().endswith(":"):
            section = "last"
        elif line.strip().startswith("wall:"):
            section = None
            m = re.search(r"run 1 ([0-9.]+) ms", line)
            out["wall1"] = float(m.group(1))
            m = re.search(r"median ([0-9.]+) ms", line)
            out["wall_last"] = float(m.group(1)) if m else None
        elif section and STAGE.match(line):
            name, ms = STAGE.match(line).groups()
            out[section][name] = float(ms)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuolap", default="build-gpu/src/gpuolap")
    ap.add_argument("--work", default="/tmp/cube-bench")
    ap.add_argument("--scales", default="0.04,0.2,0.4,1")
    ap.add_argument("--algorithms", default="cpu-partitioned,gpu-naive,gpu-sorted,gpu-lattice,gpu-expand")
    ap.add_argument("--threads", default="1,2,16", help="cpu-partitioned's thread counts")
    ap.add_argument("--sequential-max-scale", type=float, default=0.2, help="cpu-sequential up to this scale")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--duckdb", action="store_true", help="time DuckDB's GROUP BY ROLLUP, ROLLUP on the same rows")
    ap.add_argument("--json")
    ap.add_argument("--unsorted-only", action="store_true", help="only the table as generated (no sorted copy)")
    ap.add_argument("--lineitem", type=float, help="also the lineitem table at this scale factor, CUBE of 4 and 6 columns")
    ap.add_argument("--lineitem-algorithms", default="cpu-partitioned,gpu-sorted,gpu-lattice,gpu-expand")
    ap.add_argument("--bandwidth", type=float, help="the GPU's measured streaming read, TB/s (for the floor)")
    ap.add_argument("--gpus", default="1", help="GPU counts for the gpu algorithms: 1,2,4 builds each over GPUs 0..n-1 "
                    "(--gpus), the rows cut into a slice per GPU")
    ap.add_argument("--gpu-splits", default="auto", help="with several GPUs, a build per split of the rows "
                    "(--gpu-split): auto, rows, keys")
    ap.add_argument("--skip-cpu", action="store_true", help="no cpu-sequential or cpu-partitioned rows")
    ap.add_argument("--upload-chunks", default="0", help="the uploaded (not resident) gpu builds, one per value of "
                    "--upload-chunks: 0 chunks of about 32 MB aggregated beside the copy, 1 one copy then the kernels")
    args = ap.parse_args()
    results = []
    if args.lineitem:
        results += lineitem_rows(args)
    for scale in [float(s) for s in args.scales.split(",") if s]:
        db = os.path.join(args.work, f"sales-{scale}")
        if not os.path.exists(os.path.join(db, "sales.table")):
            run([args.gpuolap, "generate", "sales-flat", "--db", db, "--scale", str(scale)])
        if not args.unsorted_only and not os.path.exists(os.path.join(db, "sales_sorted.table")):
            run([args.gpuolap, "table", "sort", "--db", db, "--name", "sales", "--by",
                 "year,month,day,product_group,product", "--out", "sales_sorted"])
        for table in ("sales",) if args.unsorted_only else ("sales", "sales_sorted"):
            runs = []
            for algorithm in args.algorithms.split(","):
                if algorithm == "cpu-partitioned":
                    runs += [(algorithm, int(t)) for t in args.threads.split(",")]
                else:
                    runs.append((algorithm, 0))
            if scale <= args.sequential_max_scale:
                runs.insert(0, ("cpu-sequential", 1))
            if args.skip_cpu:
                runs = [(a, t) for a, t in runs if on_gpu(a)]
            counts = [int(n) for n in args.gpus.split(",")]
            chunk_counts = [int(c) for c in args.upload_chunks.split(",")]
            runs = [(a, t, False, n, None) for a, t in runs
                    for n in (counts if a.startswith("gpu-") else [1])]
            gpu_runs = [(a, t, True, n, c) for a, t, _, n, _ in runs if on_gpu(a) for c in chunk_counts]
            splits = args.gpu_splits.split(",")
            runs = [(a, t, nr, n, c, split if n > 1 else None) for a, t, nr, n, c in runs + gpu_runs
                    for split in (splits if n > 1 else [None])]
            for algorithm, threads, not_resident, gpus, chunks, split in runs:
                cmd = [args.gpuolap, "cube", "build", "--db", db, "--table", table, "--dims", DIMS, "--measure", MEASURE,
                       "--algorithm", algorithm, "--repeat", str(args.repeat if algorithm != "cpu-sequential" else 2),
                       "--timing", "--out", "cube_out"]
                if threads:
                    cmd += ["--threads", str(threads)]
                if not_resident:
                    cmd += ["--not-resident", "--upload-chunks", str(chunks)]
                if gpus > 1:
                    cmd += ["--gpus", ",".join(str(d) for d in range(gpus)), "--gpu-split", split]
                p = subprocess.run(cmd, capture_output=True, text=True)
                row = {"scale": scale, "rows": round(25_000_000 * scale), "table": table, "algorithm": algorithm,
                       "threads": threads, "resident": not not_resident, "gpus": gpus}
                if not_resident:
                    row["upload_chunks"] = chunks
                if split:
                    row["gpu_split"] = split
                if p.returncode != 0:
                    row["error"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
                else:
                    row.update(parse_timing(p.stderr))
                results.append(row)
                print(json.dumps(row), file=sys.stderr, flush=True)
        if args.duckdb:
            results.append(duckdb_row(args, db, scale))
            print(json.dumps(results[-1]), file=sys.stderr, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print_table(results, args.bandwidth)
    if any(r["algorithm"] == "auto" for r in results):
        print()
        print_auto_table(results)
    if any(r.get("gpus", 1) > 1 for r in results):
        print()
        print_gpus_table(results)


# The lineitem table's CUBE over 4 and 6 columns: the lattice against a
# pass per set (gpu-sorted) and the expansion.
LINEITEM_CUBES = {
    "4 columns, 16 sets": "l_returnflag, l_linestatus, l_shipmode, l_shipinstruct",
    "6 columns, 64 sets": "l_returnflag, l_linestatus, l_shipmode, l_shipinstruct, l_linenumber, l_tax",
}


def lineitem_rows(args):
    db = os.path.join(args.work, f"lineitem-{args.lineitem}")
    if not os.path.exists(os.path.join(db, "lineitem.table")):
        run([args.gpuolap, "generate", "lineitem", "--db", db, "--scale", str(args.lineitem)])
    rows = []
    for name, dims in LINEITEM_CUBES.items():
        for algorithm in args.lineitem_algorithms.split(","):
            cmd = [args.gpuolap, "cube", "build", "--db", db, "--table", "lineitem", "--dims", dims, "--measure",
                   "sum(l_extendedprice),count(*)", "--algorithm", algorithm, "--repeat", str(args.repeat), "--timing",
                   "--out", "cube_out"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            row = {"scale": args.lineitem, "rows": None, "table": f"lineitem SF {args.lineitem}, {name}",
                   "algorithm": algorithm, "threads": 0, "resident": True}
            if p.returncode != 0:
                row["error"] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
            else:
                row.update(parse_timing(p.stderr))
                row["rows"] = int(re.search(r"cube build: (\d+) rows", p.stderr).group(1))
            rows.append(row)
            print(json.dumps(row), file=sys.stderr, flush=True)
    return rows


def duckdb_row(args, db, scale):
    import duckdb
    csv = os.path.join(db, "sales.csv")
    if not os.path.exists(csv):
        with open(csv, "w") as f:
            subprocess.run([args.gpuolap, "sql", "--db", db, "--max-rows", "300000000", "SELECT * FROM sales"],
                           check=True, stdout=f)
    con = duckdb.connect()
    threads = os.cpu_count()
    con.execute(f"SET threads={threads}")
    con.execute(f"CREATE TABLE sales AS SELECT * FROM read_csv('{csv}', header=true)")
    q = ("SELECT GROUPING(year, month, day, product_group, product) AS g, year, month, day, product_group, product, "
         "sum(amount), count(*) FROM sales GROUP BY ROLLUP(year, month, day), ROLLUP(product_group, product)")
    times, cells = [], 0
    for _ in range(args.repeat + 1):
        start = time.perf_counter()
        con.execute(f"CREATE OR REPLACE TEMP TABLE r AS {q}")
        times.append((time.perf_counter() - start) * 1000)
        cells = con.execute("SELECT count(*) FROM r").fetchone()[0]
    times = sorted(times[1:])
    return {"scale": scale, "rows": round(25_000_000 * scale), "table": "sales", "algorithm": f"DuckDB {duckdb.__version__}",
            "threads": threads, "resident": True, "wall_last": times[len(times) // 2], "cells": cells}


# A stage that ran beside the upload (its chunks aggregated while the next
# were copied): from the first copy to the last chunk's kernels.
BESIDE_UPLOAD = ", beside the upload"


def kernels(stages):
    """The GPU's stages other than transfers and those beside the upload."""
    return sum(ms for name, ms in stages.items()
               if "host to device" not in name and "device to host" not in name and "(host" not in name
               and not name.endswith(BESIDE_UPLOAD)
               and name not in ("transfers", "kernels (on the GPU, without transfers)"))


def resident_text(r):
    """yes; or no, with how the upload went (--upload-chunks)."""
    if r.get("resident"):
        return "yes"
    chunks = r.get("upload_chunks")
    return {None: "no", 0: "no (chunks)", 1: "no (one copy)"}.get(chunks, f"no ({chunks} chunks)")


def beside_upload(stages):
    return sum(ms for name, ms in stages.items() if name.endswith(BESIDE_UPLOAD))


GPU_WALL = "GPU build, all contexts (host clock)"


def print_gpus_table(results):
    """The gpu rows over 1, 2, 4 ... GPUs: the GPU part of the last build by
    the host's clock (contexts overlap, so their stages do not add up), its
    speed-up over one GPU, the merge's stages, and the whole command."""
    print("| rows | table | algorithm | resident | GPUs | split | GPU build ms | × over 1 GPU | upload ms (slowest GPU) | "
          "merge ms (GPU to GPU + merge, or host) | result table ms | runs 2..N wall ms |")
    print("|---:|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|")
    one = {}
    for r in results:
        if not on_gpu(r["algorithm"]):
            continue
        if "error" in r:
            print(f"| {r['rows']:,} | {r['table']} | {r['algorithm']} | | {r.get('gpus', 1)} | {r.get('gpu_split', '')} | "
                  f"error: {r['error']} ||||||")
            continue
        last = r.get("last") or {}
        build = last.get(GPU_WALL)
        key = (r["rows"], r["table"], r["algorithm"], r["resident"], r.get("upload_chunks"))
        if r.get("gpus", 1) == 1:
            one[key] = build
        base = one.get(key)
        uploads = [ms for name, ms in last.items() if name.endswith("upload (host to device)")]
        merge = sum(ms for name, ms in last.items()
                    if "other contexts" in name or "merge of" in name or "key ranges merged" in name
                    or "set of every column sized" in name)
        fmt = lambda v: "" if v is None else f"{v:.3f}"
        print(f"| {r['rows']:,} | {r['table']} | {r['algorithm']} | {resident_text(r)} | {r.get('gpus', 1)} | "
              f"{r.get('gpu_split', '')} | {fmt(build)} | {f'{base / build:.2f}' if base and build else ''} | {fmt(max(uploads) if uploads else None)} | "
              f"{fmt(merge if r.get('gpus', 1) > 1 else None)} | {fmt(last.get('result table (host)'))} | "
              f"{fmt(r.get('wall_last'))} |")


def print_auto_table(results):
    """auto against the fastest algorithm at each point (rows, table, and
    whether the table stays on the GPU), by the median wall of runs 2..N:
    the issue's target is auto within 10 % of the best. auto's own run is a
    second sample of the algorithm it chose, so the chosen algorithm's run
    is compared too (two runs of one algorithm differ by the host's noise).
    CPU algorithms count at every point (they have nothing to upload);
    DuckDB does not (it is the peer, not one of ours)."""
    print("| rows | table | resident | auto chose | auto ms | the chosen algorithm's run ms | fastest algorithm | its ms | "
          "auto / fastest | chosen / fastest |")
    print("|---:|---|---|---|---:|---:|---|---:|---:|---:|")
    usable = [r for r in results if "error" not in r and r.get("wall_last") is not None and r.get("gpus", 1) == 1
              and not r["algorithm"].startswith("DuckDB")]
    label = lambda r: r["algorithm"] + (f" ({r['threads']} threads)" if r.get("threads") else "")
    # A point per GPU run's (rows, table, resident, upload chunks); the CPU
    # runs of the same rows and table join every point.
    points = {}
    for r in usable:
        if on_gpu(r["algorithm"]):
            points.setdefault((r["rows"], r["table"], r.get("resident", True), r.get("upload_chunks")), []).append(r)
    for key, entries in points.items():
        entries += [r for r in usable if not on_gpu(r["algorithm"]) and (r["rows"], r["table"]) == key[:2]]
    for (rows, table, resident, _), entries in points.items():
        auto = [r for r in entries if r["algorithm"] == "auto"]
        others = [(r["wall_last"], label(r)) for r in entries if r["algorithm"] != "auto"]
        if not auto or not others:
            continue
        best_ms, best = min(others)
        a = auto[0]
        # The chosen algorithm's run (the most threads, as auto uses them all).
        same = sorted((r for r in entries if r["algorithm"] == a.get("chose")), key=lambda r: r.get("threads") or 0)
        chosen = [same[-1]["wall_last"]] if same else []
        chosen_text = f"{chosen[0]:.3f}" if chosen else ""
        chosen_ratio = f"{chosen[0] / best_ms:.2f}" if chosen else ""
        print(f"| {rows:,} | {table} | {'yes' if resident else 'no'} | {a.get('chose', '')} | {a['wall_last']:.3f} | "
              f"{chosen_text} | {best} | {best_ms:.3f} | {a['wall_last'] / best_ms:.2f} | {chosen_ratio} |")


def print_table(results, bandwidth=None):
    """Runs 2..N: the table resident on the GPU, or uploaded each run (not resident)."""
    print("| rows | table | algorithm | threads | resident | cells | run 1 wall ms | runs 2..N wall ms | "
          "kernels ms (without those beside the upload) | upload ms | beside the upload ms | download ms | floor ms | "
          "kernels / floor | GPU part / upload |")
    print("|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    fmt = lambda v, p=3: "" if v is None else f"{v:.{p}f}"
    for r in results:
        if r.get("gpus", 1) > 1:
            continue  # in print_gpus_table: the contexts' stages overlap
        if "error" in r:
            print(f"| {r['rows'] or 0:,} | {r['table']} | {r['algorithm']} | {r['threads'] or ''} | | error: {r['error']} ||||||||||")
            continue
        last = r.get("last") or {}
        gpu = on_gpu(r["algorithm"])
        k = kernels(last) if last else None
        up = last.get("upload (host to device)")
        down = last.get("download (device to host)")
        beside = beside_upload(last) if last else 0
        floor = r["rows"] * 16 / (bandwidth * 1e12) * 1e3 if bandwidth and gpu else None
        # The GPU part of a build that uploads: the upload, or the stage
        # beside it (which spans it), then the other kernels and the download.
        bus = ((beside or up) + k + down) / up if up and down is not None else None
        print(f"| {r['rows'] or 0:,} | {r['table']} | {r['algorithm']} | {r['threads'] or ''} | "
              f"{resident_text(r) if gpu else ''} | {r.get('cells') or ''} | {fmt(r.get('wall1'))} | "
              f"{fmt(r.get('wall_last'))} | {fmt(k) if gpu else ''} | {fmt(up)} | {fmt(beside or None)} | {fmt(down)} | {fmt(floor, 4)} | "
              f"{fmt(k / floor if floor and k else None, 1)} | {fmt(bus, 2)} |")


if __name__ == "__main__":
    main()
