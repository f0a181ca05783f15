#!/usr/bin/env python3
"""DuckDB, the host-side peer of the memory-contention operators, on the
machine that ran gpuolap_contention_bench: the paper's Q2 and Q1 over 2^k
rows of a Zipf(theta) column over C values,

    Q2      SELECT a, COUNT(*), SUM(x) FROM f GROUP BY a      (x a double)
    Q2 cnt  SELECT a, COUNT(*) FROM f GROUP BY a
    Q1      SELECT COUNT(*), SUM(d1.b) FROM f JOIN d1 ON f.a = d1.id

    python3 bench/contention/peers.py [--log2-rows 28] [--cardinalities 1024,8192]
                                      [--thetas 0,0.5,1,1.5,2] [--threads 16] [--repeat 5]

The column is drawn inside DuckDB from the same distribution as the
benchmark's (an ASOF join of uniform draws against the CDF; the same law,
other draws). A query's time is the median of --repeat runs after a
warm-up, the table in DuckDB's memory. Prints CSV (query,theta,cardinality,
rows,threads,ms_median) on stdout.
"""
import argparse
import os
import sys

import duckdb

# DuckDB's timing (a warm-up, then the median of the runs) is ordered
# aggregation's peer script's.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "groupby"))
from peers import duckdb_time as timed  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log2-rows", type=int, default=28)
    ap.add_argument("--cardinalities", default="1024,8192")
    ap.add_argument("--thetas", default="0,0.5,1,1.5,2")
    ap.add_argument("--threads", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    rows = 1 << a.log2_rows
    con = duckdb.connect()
    con.execute(f"SET threads = {a.threads}")
    con.execute("SET preserve_insertion_order = false")
    print("query,theta,cardinality,rows,threads,ms_median", flush=True)
    for c in [int(x) for x in a.cardinalities.split(",")]:
        con.execute(f"CREATE OR REPLACE TABLE d1 AS SELECT i::INTEGER AS id, ((i * 2654435761) % 1000)::INTEGER AS b "
                    f"FROM range({c}) t(i)")
        for theta in [float(x) for x in a.thetas.split(",")]:
            con.execute("SELECT setseed(0.5)")
            con.execute(f"""CREATE OR REPLACE TABLE cdf AS
                SELECT k::INTEGER AS k, sum(pow(k + 1, -{theta})) OVER (ORDER BY k) / sum(pow(k + 1, -{theta})) OVER () AS p
                FROM range({c}) t(k)""")
            con.execute(f"""CREATE OR REPLACE TABLE f AS
                SELECT coalesce(cdf.k, {c - 1}) AS a, (hash(r.i) % 100000) / 100.0 AS x
                FROM (SELECT i, random() AS u FROM range({rows}) t(i)) r
                ASOF LEFT JOIN cdf ON r.u <= cdf.p""")
            for name, sql in [
                ("q2-sum-double", "SELECT a, count(*), sum(x) FROM f GROUP BY a"),
                ("q2-count", "SELECT a, count(*) FROM f GROUP BY a"),
                ("q1-join-sum", "SELECT count(*), sum(d1.b) FROM f JOIN d1 ON f.a = d1.id"),
            ]:
                ms = timed(con, sql, a.repeat)
                print(f"{name},{theta},{c},{rows},{a.threads},{ms:.3f}", flush=True)


if __name__ == "__main__":
    main()
