#!/usr/bin/env python3
"""GROUP BY over a table stored sorted on the grouping keys (issue 18, item
4): lineitem, stored sorted by (l_orderkey, l_linenumber), grouped by
l_orderkey, on gpuolap's cpu-serial and cpu-parallel (the ordered path: the
rows cut into ranges at group starts), with --gpu on the gpu engine
(ordered aggregation on the GPU, the columns kept there between runs), and
on DuckDB, same machine, same thread count, one run.

gpuolap: `gpuolap sql --repeat N --timing` (tables read once, one warm-up,
the median of N runs of parse+bind+plan+run; the result is built, not
printed, here as CSV into a file). DuckDB: the same columns in an
in-memory table in the same order (exported through `gpuolap sql` as
CSV), timed as `CREATE TEMP TABLE AS
<query>` (the result materialized, not fetched into Python), one warm-up
and the median of N. Both gpuolap engines' answers are compared with
DuckDB's row by row (joined on l_orderkey, values within 1e-9 relative).

    python3 bench/sql/ordered_vs_duckdb.py --work /tmp/ordered --scale 10 [--gpuolap build-gpu/src/gpuolap --gpu]
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import duckdb

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLUMNS = ["l_orderkey", "l_quantity", "l_extendedprice", "l_discount", "l_tax"]
QUERIES = [
    ("sum by l_orderkey", "SELECT l_orderkey, SUM(l_extendedprice) AS a FROM lineitem GROUP BY l_orderkey"),
    ("5 aggregates by l_orderkey",
     "SELECT l_orderkey, COUNT(*) AS a, SUM(l_quantity) AS b, MIN(l_extendedprice) AS c, MAX(l_discount) AS d, "
     "AVG(l_tax) AS e FROM lineitem GROUP BY l_orderkey"),
]


def gpuolap(binary, *args, stdout=subprocess.PIPE):
    run = subprocess.run([binary, *args], stdout=stdout, stderr=subprocess.PIPE, text=True)
    if run.returncode != 0:
        raise RuntimeError("gpuolap %s failed (%d): %s" % (" ".join(args[:3]), run.returncode, run.stderr.strip()))
    return run


def differences(con, csv, text):
    """Rows where gpuolap's answer (a CSV file) and DuckDB's (table r) differ:
    a group only one has, or a value off by more than 1e-9 relative."""
    cols = re.findall(r" AS (\w)\b", text)
    con.execute("CREATE OR REPLACE TEMP TABLE ours AS SELECT * FROM read_csv('%s', header=true)" % csv)
    close = " AND ".join("abs(o.%s - r.%s) <= 1e-9 * greatest(1, abs(r.%s))" % (c, c, c) for c in cols)
    return con.execute("SELECT COUNT(*) FROM ours o FULL JOIN r USING (l_orderkey) WHERE o.l_orderkey IS NULL "
                       "OR r.l_orderkey IS NULL OR NOT (%s)" % close).fetchone()[0]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--gpuolap", default=os.path.join(REPO, "build-cpu", "src", "gpuolap"))
    p.add_argument("--work", required=True)
    p.add_argument("--scale", default="1")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--no-serial", action="store_true", help="skip cpu-serial (the slow oracle; DuckDB still checks)")
    p.add_argument("--gpu", action="store_true", help="also the gpu engine (a gpuolap built with CUDA, on a GPU)")
    a = p.parse_args()
    db = os.path.join(a.work, "lineitem-sf%s" % a.scale)
    if not os.path.exists(os.path.join(db, "lineitem.table")):
        gpuolap(a.gpuolap, "generate", "lineitem", "--db", db, "--scale", a.scale, "--seed", "42")
    con = duckdb.connect()
    con.execute("SET threads = %d" % a.threads)
    csv = os.path.join(a.work, "export.csv")
    with open(csv, "w") as out:
        gpuolap(a.gpuolap, "sql", "--db", db, "--format", "csv", "--max-rows", "1000000000",
                "SELECT %s FROM lineitem" % ", ".join(COLUMNS), stdout=out)
    types = ", ".join("'%s': '%s'" % (c, "BIGINT" if c == "l_orderkey" else "DOUBLE") for c in COLUMNS)
    con.execute("CREATE TABLE lineitem AS SELECT * FROM read_csv('%s', header=true, columns={%s})" % (csv, types))
    os.remove(csv)
    rows = con.execute("SELECT COUNT(*) FROM lineitem").fetchone()[0]
    print("# GROUP BY on lineitem stored sorted by l_orderkey: gpuolap against DuckDB %s\n" % duckdb.__version__)
    print("lineitem SF %s: %d rows; %d threads; median of %d runs after a warm-up\n" % (a.scale, rows, a.threads, a.repeat))
    print("| query | groups | cpu-serial ms | cpu-parallel ms | gpu ms | DuckDB ms | DuckDB / cpu-parallel | DuckDB / gpu "
          "| answers |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    notes = []
    for name, text in QUERIES:
        times, wrong = {}, 0
        ctas = "CREATE OR REPLACE TEMP TABLE r AS " + text
        con.execute(ctas)
        duck = []
        for _ in range(a.repeat):
            start = time.perf_counter()
            con.execute(ctas)
            duck.append((time.perf_counter() - start) * 1e3)
        duck_ms = statistics.median(duck)
        engines = (() if a.no_serial else ("cpu-serial",)) + ("cpu-parallel",) + (("gpu",) if a.gpu else ())
        for engine in engines:
            answer = os.path.join(a.work, "answer.csv")
            with open(answer, "w") as out:
                run = gpuolap(a.gpuolap, "sql", "--db", db, "--engine", engine, "--repeat", str(a.repeat), "--timing",
                              "--format", "csv", "--max-rows", "1000000000", text, stdout=out)
            times[engine] = float(re.search(r"median ([0-9.]+) ms", run.stderr).group(1))
            wrong += differences(con, answer, text)
            os.remove(answer)
            if engine == "cpu-parallel":
                notes.append("- %s, cpu-parallel: %s" % (name, "; ".join(
                    re.sub(r"\s+", " ", l.strip()) for l in run.stderr.splitlines() if "ranges" in l or "append" in l)))
            if engine == "gpu":
                notes.append("- %s, gpu (last run's operators): %s" % (name, "; ".join(
                    re.sub(r"\s+", " ", l.strip()) for l in run.stderr.splitlines()
                    if "ordered aggregation" in l or "on the GPU" in l or "SQL values" in l)))
        groups = con.execute("SELECT COUNT(*) FROM r").fetchone()[0]
        gpu_ms = times.get("gpu")
        print("| %s | %d | %s | %.1f | %s | %.1f | %.2f | %s | %s |" % (
            name, groups, "%.1f" % times["cpu-serial"] if "cpu-serial" in times else "—", times["cpu-parallel"],
            "%.2f" % gpu_ms if gpu_ms else "—", duck_ms, duck_ms / times["cpu-parallel"],
            "%.1f" % (duck_ms / gpu_ms) if gpu_ms else "—",
            "agree" if wrong == 0 else "**%d rows differ**" % wrong), flush=True)
    print("\n" + "\n".join(notes))

if __name__ == "__main__":
    main()
