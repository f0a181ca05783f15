#!/usr/bin/env python3
"""A Parquet file into a gpuolap table, against pyarrow reading it (issue 25's
target: load at least as fast as pyarrow.parquet.read_table plus one copy).

Writes a --rows-row Parquet file shaped like TPC-H lineitem's hot columns
(an int64 key, two doubles, a date, two low-cardinality strings and one of
--customers distinct names), then measures, --repeat times, the steps in
turn (each repeat runs every step once, so the machine's drift falls on all
of them alike):
- read: pyarrow.parquet.read_table(path) (strings as plain utf8);
- copy, fresh: one copy of as many bytes as that read returns, into newly
  allocated memory (what copying a table does: the pages are new);
- copy, reused: the same copy into memory copied into before (pages
  already mapped: the cheapest a copy can be);
- load: gpuolap.load_table(db, name, path) without its last step, the
  table file's store (written atomically and synced, a disk's speed, timed
  apart): pyarrow's scanner decoding batches while gpuolap codes the
  batches before — the Parquet path of load_table;
- load, whole first: the file read whole (string columns as load_table
  chooses), then coded: no overlap.
The target is read + copy (fresh); read + copy (reused) is printed beside.

--cold runs each measurement in a process of its own (Python and the
module imported first, not timed): a load as a user's script makes it,
with no memory left mapped by an earlier one. Without it, every repeat runs
in this process, where pyarrow's allocator keeps the pages of the reads
before and numbers come out lower and steadier.

Prints a markdown table of medians and minima of the seconds, and medians
of the CPU seconds (every thread's, user and system, so the kernel's
zeroing of new pages too: steadier than the seconds on a shared machine).

    python3 bench/python/parquet_load.py [--rows 10000000] [--repeat 5] [--cold] [--work DIR]
"""
import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import gpuolap

STEPS = ["read", "copy_fresh", "copy_reused", "load", "load_whole"]


def make_file(path: Path, rows: int, customers: int) -> pa.Table:
    rng = np.random.default_rng(7)
    names = np.array([f"Customer#{i:09d}" for i in range(customers)], dtype=object)
    table = pa.table({
        "l_orderkey": pa.array(np.sort(rng.integers(1, rows // 4 + 2, rows))),
        "l_extendedprice": pa.array(rng.uniform(900, 105000, rows).round(2)),
        "l_discount": pa.array(rng.integers(0, 11, rows) / 100.0),
        "l_shipdate": pa.array(rng.integers(8036, 10561, rows).astype(np.int32), pa.int32()).cast(pa.date32()),
        "l_returnflag": pa.array(np.array(["A", "N", "R"], dtype=object)[rng.integers(0, 3, rows)], pa.string()),
        "l_shipmode": pa.array(np.array(["AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"], dtype=object)
                               [rng.integers(0, 7, rows)], pa.string()),
        "c_name": pa.array(names[rng.integers(0, customers, rows)], pa.string()),
    })
    pq.write_table(table, path)
    return table


def cpu_seconds() -> float:
    """This process's CPU time so far, every thread's, user and system (the kernel's zeroing of new pages)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class Steps:
    """Each step once: its seconds and the process's CPU seconds (every
    thread's, user and system: the kernel's zeroing of new pages too); for a
    load, without the store, whose seconds are given apart."""

    def __init__(self, path: Path, db: Path, nbytes: int):
        self.path, self.db, self.nbytes = path, str(db), nbytes
        self.source = self.reused = None

    def run(self, step: str) -> dict:
        if step.startswith("copy") and self.source is None:
            # (Made only where a copy is measured: a load's process maps no more than it needs.)
            self.source = np.ones(self.nbytes, dtype=np.uint8)
            self.reused = np.empty_like(self.source)
            np.copyto(self.reused, self.source)  # its pages mapped from here on
        started, cpu = time.perf_counter(), cpu_seconds()
        if step in ("load", "load_whole"):
            if step == "load":
                source, rows = gpuolap.tables._arrow_source(self.path)
            else:
                source = gpuolap.tables._arrow_data(self.path)
                rows = source.num_rows
            before_call = cpu_seconds()  # (the file read whole, for load_whole)
            loaded = gpuolap._gpuolap.load_table(self.db, "lineitem", source.__arrow_c_stream__(), [], rows)
            total = time.perf_counter() - started
            return {"seconds": total - loaded["store_seconds"], "store": loaded["store_seconds"], "rows": loaded["rows"],
                    "cpu": before_call - cpu + loaded["read_cpu_seconds"]}
        if step == "read":
            pq.read_table(self.path)
        elif step == "copy_fresh":
            self.source.copy()
        elif step == "copy_reused":
            np.copyto(self.reused, self.source)
        return {"seconds": time.perf_counter() - started, "cpu": cpu_seconds() - cpu}


def run_cold(step: str, path: Path, db: Path, nbytes: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", step, "--file", str(path), "--db", str(db),
                          "--nbytes", str(nbytes)], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--customers", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="each measurement in a process of its own")
    parser.add_argument("--work", default=None)
    parser.add_argument("--one", choices=STEPS, help=argparse.SUPPRESS)  # (a --cold measurement's process)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    parser.add_argument("--nbytes", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(Steps(Path(args.file), Path(args.db), args.nbytes).run(args.one)))
        return
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        path = Path(work) / "lineitem.parquet"
        table = make_file(path, args.rows, args.customers)
        nbytes, columns = table.nbytes, table.num_columns
        del table
        db = Path(work) / "db"
        steps = None if args.cold else Steps(path, db, nbytes)
        runs = {step: [] for step in STEPS}
        for _ in range(args.repeat):
            for step in STEPS:
                got = run_cold(step, path, db, nbytes) if args.cold else steps.run(step)
                runs[step].append(got)
                if "rows" in got:
                    assert got["rows"] == args.rows

        def stat(step, f, key="seconds"):
            return f(r[key] for r in runs[step])

        print(f"{args.rows:,} rows, {columns} columns, {path.stat().st_size / 2**20:.0f} MiB of Parquet, "
              f"{nbytes / 2**20:.0f} MiB as Arrow; {args.repeat} repeats, "
              f"{'each step in a fresh process' if args.cold else 'all in one process'}\n")
        print("| step | median s | min s | median CPU s |\n|---|---:|---:|---:|")
        names = {"read": "pyarrow.parquet.read_table", "copy_fresh": f"one copy of {nbytes / 2**20:.0f} MiB, into new memory",
                 "copy_reused": "the same copy, into memory copied into before",
                 "load": "**gpuolap.load_table without the store** (decoding and coding at once)",
                 "load_whole": "load_table, the file read whole first, without the store"}
        for step in STEPS:
            print(f"| {names[step]} | {stat(step, statistics.median):.3f} | {stat(step, min):.3f} | "
                  f"{stat(step, statistics.median, 'cpu'):.3f} |")
        for copy in ("copy_fresh", "copy_reused"):
            # The sum of each repeat's read and copy: a target per repeat.
            sums = [r["seconds"] + c["seconds"] for r, c in zip(runs["read"], runs[copy])]
            label = "**target: read + copy into new memory**" if copy == "copy_fresh" else "read + copy into reused memory"
            cpus = [r["cpu"] + c["cpu"] for r, c in zip(runs["read"], runs[copy])]
            print(f"| {label} | {statistics.median(sums):.3f} | {min(sums):.3f} | {statistics.median(cpus):.3f} |")
        print(f"| the table file stored (synced), apart | {stat('load', statistics.median, 'store'):.3f} | "
              f"{stat('load', min, 'store'):.3f} | |")
        loads = [l["seconds"] / (r["seconds"] + c["seconds"])
                 for l, r, c in zip(runs["load"], runs["read"], runs["copy_fresh"])]
        print(f"\nload / target, repeat by repeat: {', '.join(f'{x:.2f}' for x in loads)}")


if __name__ == "__main__":
    main()
