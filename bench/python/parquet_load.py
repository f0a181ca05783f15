#!/usr/bin/env python3
"""A Parquet file into a gpuolap table, against pyarrow reading it (issue 25's
target: load at least as fast as pyarrow.parquet.read_table plus one copy).

Writes a --rows-row Parquet file shaped like TPC-H lineitem's hot columns
(an int64 key, two doubles, a date, two low-cardinality strings and one of
--customers distinct names), then times, --repeat times each, median:
- read: pyarrow.parquet.read_table(path) (strings as plain utf8);
- copy: one copy of the bytes that read returns (numpy copyto of as many
  bytes as the table holds): the "+ one copy" of the target;
- gpuolap.load_table(db, name, path): its whole time and its parts — the
  Parquet read (pyarrow, string columns read as dictionaries), the Arrow
  stream into gpuolap's columns, and the table file stored (written
  atomically and synced).
Prints a markdown table.

    python3 bench/python/parquet_load.py [--rows 10000000] [--repeat 3] [--work DIR]
"""
import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

import gpuolap


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


def timed(run, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--customers", type=int, default=150_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as work:
        path = Path(work) / "lineitem.parquet"
        make_file(path, args.rows, args.customers)
        read_s, table = timed(lambda: pq.read_table(path), args.repeat)
        source = np.ones(table.nbytes, dtype=np.uint8)
        target = np.empty_like(source)
        copy_s, _ = timed(lambda: np.copyto(target, source), args.repeat)
        parts = []

        def load():
            started = time.perf_counter()
            data = gpuolap.tables._arrow_data(path)
            parquet = time.perf_counter() - started
            loaded = gpuolap._gpuolap.load_table(str(Path(work) / "db"), "lineitem", data.__arrow_c_stream__(), [],
                                                 data.num_rows)
            parts.append((parquet, loaded["read_seconds"], loaded["store_seconds"]))
            return loaded

        load_s, loaded = timed(load, args.repeat)
        parquet_s = statistics.median(p[0] for p in parts)
        columns_s = statistics.median(p[1] for p in parts)
        store_s = statistics.median(p[2] for p in parts)
        print(f"{args.rows:,} rows, {table.num_columns} columns, {path.stat().st_size / 2**20:.0f} MiB of Parquet, "
              f"{table.nbytes / 2**20:.0f} MiB as Arrow; medians of {args.repeat}\n")
        print("| step | seconds |\n|---|---:|")
        print(f"| pyarrow.parquet.read_table | {read_s:.3f} |")
        print(f"| one copy of its {table.nbytes / 2**20:.0f} MiB | {copy_s:.3f} |")
        print(f"| **target: read + one copy** | **{read_s + copy_s:.3f}** |")
        print(f"| gpuolap.load_table, in all | {load_s:.3f} |")
        print(f"| … the Parquet read (strings as dictionaries) | {parquet_s:.3f} |")
        print(f"| … the Arrow stream into gpuolap's columns | {columns_s:.3f} |")
        print(f"| … the table file stored (synced) | {store_s:.3f} |")
        print(f"| **load_table without the store** | **{parquet_s + columns_s:.3f}** |")
        assert loaded["rows"] == args.rows


if __name__ == "__main__":
    main()
