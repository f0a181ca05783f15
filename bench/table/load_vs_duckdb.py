#!/usr/bin/env python3
"""Loading a CSV: `gpuolap table load` against DuckDB's read_csv, on the same
file, back to back, on the same machine (DuckDB into an in-memory table, and
into a database file as durable as gpuolap's table file); then opening the
stored table.

The file is lineitem-shaped (TPC-H's 16 columns, l_comment included: random
words) written by DuckDB itself at a given row count, since DuckDB's tpch
extension needs a download. Usage:
    bench/table/load_vs_duckdb.py --gpuolap build-cpu/src/gpuolap [--rows 6000000] [--repeat 3]
"""
import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time

import duckdb

LINEITEM = """
SELECT
  (i // 4) * 32 + 1                                  AS l_orderkey,
  1 + ((hash(i, 1) % 200000)::BIGINT)                          AS l_partkey,
  1 + ((hash(i, 2) % 10000)::BIGINT)                           AS l_suppkey,
  1 + (i % 4)                                        AS l_linenumber,
  (1 + (hash(i, 3) % 50)::BIGINT)::DECIMAL(15,2)               AS l_quantity,
  (((hash(i, 4) % 10000000)::BIGINT) / 100)::DECIMAL(15,2)     AS l_extendedprice,
  (((hash(i, 5) % 11)::BIGINT) / 100)::DECIMAL(15,2)           AS l_discount,
  (((hash(i, 6) % 9)::BIGINT) / 100)::DECIMAL(15,2)            AS l_tax,
  ['A','N','R'][1 + (hash(i, 7) % 3)::BIGINT]                  AS l_returnflag,
  ['F','O'][1 + (hash(i, 8) % 2)::BIGINT]                      AS l_linestatus,
  DATE '1992-01-02' + ((hash(i, 9) % 2526)::BIGINT)::INTEGER   AS l_shipdate,
  DATE '1992-01-31' + ((hash(i, 10) % 2466)::BIGINT)::INTEGER  AS l_commitdate,
  DATE '1992-01-03' + ((hash(i, 11) % 2554)::BIGINT)::INTEGER  AS l_receiptdate,
  ['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'][1 + (hash(i, 12) % 4)::BIGINT] AS l_shipinstruct,
  ['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'][1 + (hash(i, 13) % 7)::BIGINT] AS l_shipmode,
  concat_ws(' ', ['furiously','carefully','quickly','blithely','slyly','final','pending','regular','express','ironic'][1 + (hash(i, 14) % 10)::BIGINT],
                 ['deposits','requests','accounts','packages','foxes','theodolites','pinto beans','instructions'][1 + (hash(i, 15) % 8)::BIGINT],
                 ['sleep','wake','haggle','nag','use','boost','affix','detect','integrate','cajole'][1 + (hash(i, 16) % 10)::BIGINT],
                 substr(md5(i::VARCHAR), 1, 1 + (hash(i, 17) % 12)::BIGINT)) AS l_comment
FROM range({rows}) t(i)
"""


def cpu_seconds(who):
    u = resource.getrusage(who)
    return u.ru_utime + u.ru_stime


def timed(fn, who):
    """Wall seconds and CPU seconds (user + system) of fn; `who` is
    RUSAGE_SELF for work in this process (DuckDB) and RUSAGE_CHILDREN for a
    command it runs. On a machine others share, CPU seconds are the fairer
    comparison."""
    cpu = cpu_seconds(who)
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start, cpu_seconds(who) - cpu


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpuolap", required=True)
    p.add_argument("--rows", type=int, default=6_000_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dir", default=None)
    a = p.parse_args()
    work = a.dir or tempfile.mkdtemp(prefix="gpuolap_load_bench_")
    os.makedirs(work, exist_ok=True)
    csv = os.path.join(work, "lineitem.csv")
    if not os.path.exists(csv):
        duckdb.sql(f"COPY ({LINEITEM.format(rows=a.rows)}) TO '{csv}' (HEADER, DELIMITER ',')")
    size = os.path.getsize(csv)
    print(f"file: {csv}, {size / 2**20:.0f} MiB, {a.rows} rows; threads: {os.cpu_count()} cores")
    db = os.path.join(work, "db")
    ours, theirs, stored, opens = [], [], [], []
    reading, storing = [], []
    duck_file = os.path.join(work, "lineitem.duckdb")
    for _ in range(a.repeat):
        # Back to back, the file already in the page cache for both.
        con = duckdb.connect()
        theirs.append(timed(lambda: con.sql(f"CREATE OR REPLACE TABLE lineitem AS SELECT * FROM read_csv('{csv}')"),
                            resource.RUSAGE_SELF))
        con.close()
        # DuckDB storing the table durably too, as `table load` does: a
        # database file, checkpointed (DuckDB compresses its columns and
        # syncs the file) and closed.
        for f in (duck_file, duck_file + ".wal"):
            if os.path.exists(f):
                os.remove(f)

        def duck_store():
            con = duckdb.connect(duck_file)
            con.sql(f"CREATE TABLE lineitem AS SELECT * FROM read_csv('{csv}')")
            con.sql("CHECKPOINT")
            con.close()
        stored.append(timed(duck_store, resource.RUSAGE_SELF))
        shutil.rmtree(db, ignore_errors=True)
        printed = []
        ours.append(timed(lambda: printed.append(subprocess.run(
            [a.gpuolap, "table", "load", "--db", db, "--name", "lineitem", "--csv", csv], check=True,
            stdout=subprocess.PIPE, text=True).stdout), resource.RUSAGE_CHILDREN))
        # Its own split: "(R s reading the CSV, S s storing)" — the table in
        # memory, as DuckDB's in-memory load leaves it, then the table file.
        m = re.search(r"\(([0-9.]+) s reading the CSV, ([0-9.]+) s storing\)", printed[0])
        reading.append(float(m.group(1)))
        storing.append(float(m.group(2)))
        opens.append(timed(lambda: subprocess.run([a.gpuolap, "table", "info", "--db", db, "--name", "lineitem"],
                                                  check=True, stdout=subprocess.DEVNULL),
                           resource.RUSAGE_CHILDREN))
    table_bytes = os.path.getsize(os.path.join(db, "lineitem.table"))

    def line(label, runs):
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        shown = ", ".join(f"{w:.2f}/{c:.2f}" for w, c in runs)
        print(f"{label}: median {wall:.2f} s wall, {cpu:.2f} s CPU  (runs wall/CPU: {shown})")
        return wall, cpu

    d_wall, d_cpu = line("duckdb read_csv into a table (in memory)", theirs)
    s_wall, s_cpu = line("duckdb read_csv into a table of a database file (checkpointed: compressed, synced)", stored)
    g_wall, g_cpu = line("gpuolap table load (parse, store, fsync)", ours)
    r_wall = statistics.median(reading)
    print(f"  of which reading the CSV into the table in memory: median {r_wall:.2f} s "
          f"(runs: {', '.join(f'{r:.2f}' for r in reading)}); storing it: median {statistics.median(storing):.2f} s")
    print(f"gpuolap / duckdb in memory: {g_wall / d_wall:.2f} wall, {g_cpu / d_cpu:.2f} CPU; "
          f"gpuolap's reading alone / duckdb in memory: {r_wall / d_wall:.2f} wall")
    print(f"gpuolap / duckdb into a file: {g_wall / s_wall:.2f} wall, {g_cpu / s_cpu:.2f} CPU")
    o_wall, _ = line("gpuolap table info (start, open, checksum, count NULLs)", opens)
    print(f"table file {table_bytes / 2**20:.0f} MiB: opened at {o_wall / (table_bytes / 2**30):.2f} s per GiB")


if __name__ == "__main__":
    main()
