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
  Parquet file into columns (pyarrow's scanner decoding batches, the string
  columns the file keeps as dictionary indices as dictionaries, while
  gpuolap codes the batches before) and the table file stored (written
  atomically and synced);
- the same with the file read whole first and then coded, for comparison.
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
        db = str(Path(work) / "db")

        def streamed():
            # What gpuolap.load_table(db, name, path) does, its parts timed:
            # pyarrow's scanner decodes while load_table codes (read_seconds
            # holds both), then the table file is stored.
            source, rows = gpuolap.tables._arrow_source(path)
            return gpuolap._gpuolap.load_table(db, "lineitem", source.__arrow_c_stream__(), [], rows)

        def whole_first():
            # The file read whole first (string columns as _arrow_source
            # chooses), then coded: no overlap.
            started = time.perf_counter()
            data = gpuolap.tables._arrow_data(path)
            read = time.perf_counter() - started
            loaded = gpuolap._gpuolap.load_table(db, "lineitem", data.__arrow_c_stream__(), [], data.num_rows)
            return dict(loaded, parquet_seconds=read)

        def medians(run):
            runs = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                loaded = run()
                runs.append((time.perf_counter() - started, loaded))
            pick = lambda f: statistics.median(f(total, loaded) for total, loaded in runs)
            return (pick(lambda t, l: t), pick(lambda t, l: t - l["store_seconds"]), pick(lambda t, l: l["store_seconds"]),
                    pick(lambda t, l: l.get("parquet_seconds", 0.0)), runs[-1][1])

        load_s, unstored_s, store_s, _, loaded = medians(streamed)
        whole_s, whole_unstored_s, _, whole_parquet_s, _ = medians(whole_first)
        print(f"{args.rows:,} rows, {table.num_columns} columns, {path.stat().st_size / 2**20:.0f} MiB of Parquet, "
              f"{table.nbytes / 2**20:.0f} MiB as Arrow; medians of {args.repeat}\n")
        print("| step | seconds |\n|---|---:|")
        print(f"| pyarrow.parquet.read_table | {read_s:.3f} |")
        print(f"| one copy of its {table.nbytes / 2**20:.0f} MiB | {copy_s:.3f} |")
        print(f"| **target: read + one copy** | **{read_s + copy_s:.3f}** |")
        print(f"| gpuolap.load_table, in all | {load_s:.3f} |")
        print(f"| … the Parquet file into columns (decoding and coding at once) | {unstored_s:.3f} |")
        print(f"| … the table file stored (synced) | {store_s:.3f} |")
        print(f"| **load_table without the store** | **{unstored_s:.3f}** |")
        print(f"| the file read whole first, then coded: without the store | {whole_unstored_s:.3f} |")
        print(f"| … of which the Parquet read (dictionary-coded strings as dictionaries) | {whole_parquet_s:.3f} |")
        assert loaded["rows"] == args.rows


if __name__ == "__main__":
    main()
