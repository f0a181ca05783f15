#!/usr/bin/env python3
"""The peers of ordered aggregation, on the machine that ran gpuolap_ordered_bench:
DuckDB on the host's cores and PyTorch on the GPU (when installed) for
SUM(v) GROUP BY k over sorted int32 keys in runs of 1, 16 and 1024 and
double values, and for TPC-H lineitem's
    SELECT l_orderkey, SUM(l_extendedprice) FROM lineitem GROUP BY l_orderkey
at SF 10 (the issue's query), beside gpuolap groupby-ordered's engines.

    python3 bench/groupby/peers.py --gpuolap build-gpu/src/gpuolap [--sizes 24,28] [--runs 1,16,1024]
                                   [--lineitem-scale 10] [--threads 16] [--repeat 5] [--work DIR]

DuckDB's time is the query alone on an in-memory table (a warm-up run, then
the median of --repeat), its result reduced to sum(s), count(*) so that
nothing is pruned and nothing large is fetched. Its data differ from the
GPU benchmark's only in the values (DuckDB has no wrapping 64-bit multiply;
the values do not change the work). PyTorch's time is CUDA-event time of
unique_consecutive + segment_reduce, and of unique_consecutive(inverse) +
index_add_, the faster reported. Prints markdown.
"""
import argparse
import os
import re
import statistics
import subprocess
import time


def duckdb_time(con, sql, repeat):
    con.execute(sql).fetchall()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        con.execute(sql).fetchall()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def torch_time(n, run, repeat):
    try:
        import torch
    except ImportError:
        return None, "not installed"
    if not torch.cuda.is_available():
        return None, "no CUDA"
    keys = (torch.arange(n, device="cuda", dtype=torch.int64) // run).to(torch.int32)
    values = (torch.arange(n, device="cuda", dtype=torch.float64) * 7919) % 100000 / 100

    def segment():
        _, counts = torch.unique_consecutive(keys, return_counts=True)
        return torch.segment_reduce(values, "sum", lengths=counts)

    def index_add():
        uniq, inverse = torch.unique_consecutive(keys, return_inverse=True)
        return torch.zeros(uniq.numel(), device="cuda", dtype=torch.float64).index_add_(0, inverse, values)

    best = None
    for f in (segment, index_add):
        try:
            f()
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            times = []
            for _ in range(repeat):
                start.record()
                f()
                stop.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(stop))
            t = min(times)
            best = t if best is None else min(best, t)
        except Exception as e:  # an op missing in this build
            print(f"<!-- torch {f.__name__}: {e} -->")
    return best, ""


def gpuolap_wall(binary, args):
    out = subprocess.run([binary, "groupby-ordered", *args, "--timing"], capture_output=True, text=True, check=True)
    stages = dict(re.findall(r"^\s+(.+?)\s{2,}([0-9.]+) ms$", out.stderr, re.M))
    return {k.strip(): float(v) for k, v in stages.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuolap", required=True)
    ap.add_argument("--sizes", default="24,28")
    ap.add_argument("--runs", default="1,16,1024")
    ap.add_argument("--lineitem-scale", type=float, default=10)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--work", default="/tmp/ordered-peers")
    a = ap.parse_args()
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    print(f"DuckDB {duckdb.__version__}, {a.threads} threads\n")
    print("| data | rows | DuckDB | PyTorch (GPU) |")
    print("|---|---:|---:|---:|")
    for log2 in [int(s) for s in a.sizes.split(",")]:
        n = 1 << log2
        for run in [int(r) for r in a.runs.split(",")]:
            con.execute(f"CREATE OR REPLACE TABLE t AS SELECT (i // {run})::INTEGER AS k, "
                        f"((i * 7919) % 100000) / 100.0 AS v FROM range({n}) r(i)")
            ms = duckdb_time(con, "SELECT sum(s), count(*) FROM (SELECT k, SUM(v) AS s FROM t GROUP BY k)", a.repeat)
            tms, why = torch_time(n, run, a.repeat)
            name = "unique" if run == 1 else f"runs-{run}"
            print(f"| {name} | 2^{log2} | {ms:.1f} ms | " + (f"{tms:.3f} ms" if tms is not None else why) + " |")
    con.execute("DROP TABLE t")

    # lineitem at SF N, the query.
    os.makedirs(a.work, exist_ok=True)
    db = os.path.join(a.work, "db")
    csv = os.path.join(a.work, "lineitem.csv")
    subprocess.run([a.gpuolap, "generate", "--kind", "lineitem", "--db", db, "--scale", str(a.lineitem_scale), "--force"],
                   check=True, capture_output=True)
    with open(csv, "w") as f:
        subprocess.run([a.gpuolap, "sql", "--db", db, "--max-rows", "1000000000",
                        "SELECT l_orderkey, l_extendedprice FROM lineitem"], check=True, stdout=f)
    con.execute(f"CREATE TABLE lineitem AS SELECT * FROM read_csv('{csv}', header = true)")
    rows = con.execute("SELECT count(*) FROM lineitem").fetchone()[0]
    ms = duckdb_time(con, "SELECT sum(s), count(*) FROM (SELECT l_orderkey, SUM(l_extendedprice) AS s "
                          "FROM lineitem GROUP BY l_orderkey)", a.repeat)
    print(f"\nlineitem SF {a.lineitem_scale:g} ({rows} rows): SUM(l_extendedprice) GROUP BY l_orderkey\n")
    print("| engine | time | what is timed |")
    print("|---|---:|---|")
    print(f"| DuckDB, {a.threads} threads | {ms:.1f} ms | the query, table in memory |")
    base = ["--db", db, "--table", "lineitem", "--by", "l_orderkey", "--agg", "sum(l_extendedprice)"]
    cpu = gpuolap_wall(a.gpuolap, base + ["--engine", "cpu-parallel", "--repeat", str(a.repeat)])
    print(f"| gpuolap cpu-parallel | {cpu['wall']:.1f} ms | mean wall of {a.repeat} runs, table in memory |")
    try:
        gpu = gpuolap_wall(a.gpuolap, base + ["--engine", "gpu", "--repeat", str(a.repeat)])
        on_gpu = sum(v for k, v in gpu.items() if k not in ("upload", "download", "wall", "on the GPU, without transfers"))
        print(f"| gpuolap gpu (auto) | {on_gpu:.3f} ms | the kernels (the last run's stages) |")
        print(f"| gpuolap gpu (auto) | {gpu['wall']:.1f} ms | mean wall: upload {gpu.get('upload', 0):.1f} ms, "
              f"download {gpu.get('download', 0):.1f} ms, result to CSV |")
        print(f"\nDuckDB / gpu kernels: {ms / on_gpu:.0f}x")
    except subprocess.CalledProcessError as e:
        print(f"| gpuolap gpu | - | {e.stderr.strip()} |")


if __name__ == "__main__":
    main()
