#!/usr/bin/env python3
"""The SQL benchmark of issue 17: per query the input rows, the groups, the
plan's choice, and the medians of gpuolap's cpu-serial and cpu-parallel and
of DuckDB, on the same machine in one run, with the ratio to DuckDB and the
floor (bytes the query must read over the measured memory bandwidth).

Queries: TPC-H Q1 and SSB Q1.1-Q4.3 at each --scales; ROLLUP x ROLLUP and a
CUBE over sales-flat; the contention paper's Q1 (FK join) and Q2 (GROUP BY)
over zipf tables at theta 0, 1, 2.

gpuolap's times come from `gpuolap sql --repeat N --timing` (tables read once,
one warm-up run, the median of N runs of parse+bind+plan+run). DuckDB gets
the same tables (exported through `gpuolap sql` as CSV, read with the types
of its JSON header) in an in-memory database, the same thread count, one
warm-up and the median of N runs of the query alone. Answers are compared
(up to row order, doubles within 1e-9 relative) and a difference is marked.

Writes OUT/sql-HOST-DATE.md and OUT/sql-HOST-DATE.png (ratios to DuckDB).
"""
import argparse
import datetime
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

import duckdb
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "sql"))
from differential_duckdb import compare, normalise  # noqa: E402

DUCK = {"bigint": "BIGINT", "double precision": "DOUBLE", "date": "DATE", "text": "VARCHAR"}
# Bytes a value of each type occupies in gpuolap's columns (strings: int32 codes).
VALUE_BYTES = {"bigint": 8, "double precision": 8, "date": 4, "text": 4}

SALES_ROLLUP = ("SELECT year, month, day, product_group, product, SUM(amount) AS amount FROM sales "
                "GROUP BY ROLLUP(year, month, day), ROLLUP(product_group, product)")
SALES_CUBE = ("SELECT year, month, product_group, product, SUM(amount) AS amount FROM sales "
              "GROUP BY CUBE(year, month, product_group, product)")
ZIPF_Q1 = "SELECT SUM(d1.b) FROM f JOIN d1 ON f.fk = d1.id"
ZIPF_Q2 = "SELECT a, COUNT(*) FROM f GROUP BY a"


def gpuolap(binary, *args):
    run = subprocess.run([binary, *args], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("gpuolap %s failed (%d): %s" % (" ".join(args[:3]), run.returncode, run.stderr.strip()))
    return run


def generate(binary, db, kind, scale, extra=()):
    if os.path.isdir(db) and any(f.endswith(".table") for f in os.listdir(db)) and kind != "lineitem":
        return
    if kind == "lineitem" and os.path.exists(os.path.join(db, "lineitem.table")):
        return
    print("generate %s --scale %s %s -> %s" % (kind, scale, " ".join(extra), db), flush=True)
    gpuolap(binary, "generate", kind, "--db", db, "--scale", str(scale), "--seed", "42", *extra)


def table_columns(binary, db, table):
    out = gpuolap(binary, "sql", "--db", db, "--format", "json", 'select * from "%s" limit 0' % table).stdout
    return json.loads(out)["columns"]


def table_file_as_arrow(path):
    """A gpuolap table file (src/table/database.cpp's layout) as a pyarrow
    Table, its columns viewed over the file's bytes: int64, float64, date32,
    and strings (the dictionary's values by each row's code), NULLs as nulls.
    No checksum check: the file was just written by `gpuolap generate`."""
    import pyarrow as pa
    data = np.memmap(path, dtype=np.uint8, mode="r")
    count, rows, meta_bytes = (int(x) for x in (data[12:16].view(np.uint32)[0], data[16:24].view(np.uint64)[0],
                                                 data[24:32].view(np.uint64)[0]))
    meta = json.loads(bytes(data[64:64 + meta_bytes]))
    at = 64 + meta_bytes
    at += -at % 8
    arrays, names = [], []
    for c in meta["columns"][:count]:
        width = 8 if c["type"] in ("int64", "double") else 4
        values = data[at:at + rows * width]
        at += rows * width
        at += -at % 8
        mask = None
        if c["nullable"]:
            mask = data[at:at + rows].astype(bool)
            at += rows
            at += -at % 8
        if c["type"] == "int64":
            array = pa.array(values.view(np.int64), mask=mask)
        elif c["type"] == "double":
            array = pa.array(values.view(np.float64), mask=mask)
        elif c["type"] == "date":
            array = pa.array(values.view(np.int32), mask=mask).cast(pa.date32())
        else:
            n = c["dictionary_count"]
            offsets = data[at:at + (n + 1) * 8].view(np.int64)
            at += (n + 1) * 8
            strings = data[at:at + c["dictionary_bytes"]]
            at += c["dictionary_bytes"]
            at += -at % 8
            dictionary = pa.LargeStringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(strings))
            codes = values.view(np.int32)
            array = pa.DictionaryArray.from_arrays(pa.array(codes, mask=mask), dictionary).dictionary_decode()
        arrays.append(array)
        names.append(c["name"])
    return pa.table(arrays, names=names)


def load_into_duckdb(binary, con, db, tables, work):
    """Each table handed to DuckDB: read from its table file as Arrow where
    pyarrow is installed (seconds at SF 10), else exported by `gpuolap sql`
    as CSV and read with the types gpuolap reports; returns
    {table: (columns, rows)}."""
    try:
        import pyarrow  # noqa: F401
        arrow = True
    except ImportError:
        arrow = False
    shapes = {}
    for table in tables:
        columns = table_columns(binary, db, table)
        con.execute('DROP TABLE IF EXISTS "%s"' % table)
        if arrow:
            data = table_file_as_arrow(os.path.join(db, table + ".table"))  # noqa: F841 (DuckDB reads it by name)
            con.execute('CREATE TABLE "%s" AS SELECT * FROM data' % table)
            del data
        else:
            path = os.path.join(work, "export.csv")
            with open(path, "w") as out:
                subprocess.run([binary, "sql", "--db", db, "--format", "csv", "--max-rows", "1000000000",
                                'select * from "%s"' % table], stdout=out, check=True)
            types = ", ".join("'%s': '%s'" % (c["name"], DUCK[c["type"]]) for c in columns)
            con.execute('CREATE TABLE "%s" AS SELECT * FROM read_csv(\'%s\', header=true, columns={%s})'
                        % (table, path, types))
            os.remove(path)
        rows = con.execute('SELECT COUNT(*) FROM "%s"' % table).fetchone()[0]
        shapes[table] = (columns, rows)
    return shapes


def bytes_read(text, shapes):
    """Columns a query names x their tables' rows x bytes per value: what any
    engine must read at least (dimension columns included)."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text.lower()))
    total = 0
    for table, (columns, rows) in shapes.items():
        if table.lower() not in words:
            continue
        for c in columns:
            if c["name"].lower() in words:
                total += VALUE_BYTES[c["type"]] * rows
    return total


def memory_bandwidth(threads, mib=512, repeat=5):
    """A STREAM-like copy with `threads` threads (numpy releases the GIL in
    copyto): bytes read + written per second, the best of `repeat`."""
    n = mib * 1024 * 1024 // 8
    src = np.ones(n)
    dst = np.zeros(n)
    chunks = np.array_split(np.arange(n), threads)
    bounds = [(c[0], c[-1] + 1) for c in chunks]

    def copy(lo, hi):
        np.copyto(dst[lo:hi], src[lo:hi])

    best = 0.0
    for _ in range(repeat):
        workers = [threading.Thread(target=copy, args=b) for b in bounds]
        start = time.perf_counter()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        best = max(best, 2 * n * 8 / (time.perf_counter() - start))
    return best


def gpuolap_time(binary, db, text, engine, repeat):
    run = gpuolap(binary, "sql", "--db", db, "--engine", engine, "--repeat", str(repeat), "--timing",
                  "--format", "json", "--max-rows", "100000000", text)
    m = re.search(r"median ([0-9.]+) ms, min ([0-9.]+) ms", run.stderr)
    if not m:
        raise RuntimeError("no repeat timing in: " + run.stderr[-500:])
    return float(m.group(1)), json.loads(run.stdout)["rows"]


def plan_choice(binary, db, text):
    """The plan's choices in one line: aggregation (ordered, perfect hash or
    hash), lattice or per-set for several grouping sets, each join's method."""
    out = gpuolap(binary, "sql", "--db", db, "--engine", "cpu-parallel", "--format", "csv", "EXPLAIN " + text).stdout
    lines = [l.strip().strip('"').strip() for l in out.splitlines()[1:]]
    picks = []
    for l in lines:
        if l.startswith("Aggregate ("):
            picks.append("ordered" if l.startswith("Aggregate (ordered") else
                         ("perfect hash (ids hashed)" if "hashed" in l.split("set 1:")[-1].split(", set")[0] else "perfect hash")
                         if "perfect hash" in l else "hash")
        elif l.startswith("cube operator"):
            picks.append("cube operator (%s)" % ("gpu-lattice" if "gpu-lattice" in l else "cpu-partitioned"))
        elif l.startswith("grouping sets by the lattice"):
            picks.append("lattice")
        elif l.startswith("grouping sets by one pass") and "one grouping set" not in l:
            picks.append("per-set")
        m = re.match(r"Join \((array lookup|hash)\) (\w+)", l)
        if m:
            picks.append("%s %s" % (m.group(2), "array" if m.group(1) == "array lookup" else "hash"))
    return ", ".join(picks)


def duckdb_time(con, text, repeat):
    con.execute(text).fetchall()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        rows = con.execute(text).fetchall()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3, rows


def workloads(args):
    """(group, database, tables, generator calls, [(query name, text)])."""
    queries_dir = os.path.join(REPO, "tests", "sql", "queries")
    ssb = sorted(f for f in os.listdir(queries_dir) if f.startswith("ssb_"))
    for sf in (args.scales if "star" in args.workloads else []):
        db = os.path.join(args.work, "sf%s" % sf)
        texts = [("TPC-H Q1", open(os.path.join(queries_dir, "tpch_q1.sql")).read())]
        texts += [("SSB " + f[4:-4].upper(), open(os.path.join(queries_dir, f)).read()) for f in ssb]
        yield ("SF %s" % sf, db, ["lineitem", "lineorder", "date", "customer", "supplier", "part"],
               [("ssb", sf, ()), ("lineitem", sf, ())], texts)
    if "sales" in args.workloads:
        db = os.path.join(args.work, "sales%s" % args.sales_scale)
        yield ("sales-flat scale %s" % args.sales_scale, db, ["sales"], [("sales-flat", args.sales_scale, ())],
               [("ROLLUP x ROLLUP", SALES_ROLLUP), ("CUBE(year, month, group, product)", SALES_CUBE)])
    for theta in (args.thetas if "zipf" in args.workloads else []):
        db = os.path.join(args.work, "zipf%s-theta%s" % (args.zipf_scale, theta))
        yield ("zipf scale %s, theta %s" % (args.zipf_scale, theta), db, ["f", "d1"],
               [("zipf", args.zipf_scale, ("--theta", str(theta)))],
               [("contention Q1 (join)", ZIPF_Q1), ("contention Q2 (group by)", ZIPF_Q2)])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gpuolap", default=os.path.join(REPO, "build-cpu", "src", "gpuolap"))
    parser.add_argument("--work", required=True, help="where the databases are generated (kept between runs)")
    parser.add_argument("--out", default=os.path.join(REPO, "bench", "results"))
    parser.add_argument("--host", default=socket.gethostname())
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    parser.add_argument("--scales", nargs="+", default=["1"], help="TPC-H/SSB scale factors")
    parser.add_argument("--sales-scale", default="1", help="sales-flat scale (25 M rows at 1)")
    parser.add_argument("--zipf-scale", default="1", help="zipf scale (10 M rows of f at 1)")
    parser.add_argument("--thetas", nargs="+", default=["0", "1", "2"])
    parser.add_argument("--workloads", nargs="+", default=["star", "sales", "zipf"],
                        help="star (TPC-H Q1 and SSB at --scales), sales (sales-flat), zipf (the contention queries)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--serial-repeat", type=int, default=3)
    args = parser.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    # TBB takes all cores; DuckDB gets the same number.
    threads = args.threads
    bandwidth = memory_bandwidth(threads)
    print("memory bandwidth (numpy copy, %d threads): %.1f GB/s" % (threads, bandwidth / 1e9), flush=True)
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()

    results = []
    for group, db, tables, gens, texts in workloads(args):
        for kind, scale, extra in gens:
            generate(args.gpuolap, db, kind, scale, extra)
        con = duckdb.connect()
        con.execute("SET threads=%d" % threads)
        shapes = load_into_duckdb(args.gpuolap, con, db, tables, args.work)
        for name, text in texts:
            serial, _ = gpuolap_time(args.gpuolap, db, text, "cpu-serial", args.serial_repeat)
            parallel, ours = gpuolap_time(args.gpuolap, db, text, "cpu-parallel", args.repeat)
            duck, theirs = duckdb_time(con, text, args.repeat)
            problem = compare([[normalise(v) for v in r] for r in ours], [[normalise(v) for v in r] for r in theirs])
            fact = max((t for t in shapes if t.lower() in re.findall(r"\w+", text.lower())), key=lambda t: shapes[t][1])
            floor = bytes_read(text, shapes) / bandwidth * 1e3
            row = dict(group=group, query=name, rows=shapes[fact][1], groups=len(ours), plan=plan_choice(args.gpuolap, db, text),
                       serial=serial, parallel=parallel, duckdb=duck, floor=floor, equal=problem is None, problem=problem)
            results.append(row)
            print("%-22s %-34s rows %10d groups %8d  serial %9.1f  parallel %9.1f  duckdb %8.1f ms  ratio %5.2f  floor %6.2f ms  %s"
                  % (group, name, row["rows"], row["groups"], serial, parallel, duck, parallel / duck, floor,
                     "equal" if problem is None else "DIFFERENT: " + problem), flush=True)
        con.close()

    stem = os.path.join(args.out, "sql-%s-%s" % (args.host, args.date))
    with open(stem + ".md", "w") as md:
        md.write("# SQL: gpuolap cpu-serial and cpu-parallel against DuckDB (%s, %s)\n\n" % (args.host, args.date))
        md.write("Commit %s; `bench/sql/sql_vs_duckdb.py %s`. %d threads (TBB's default and DuckDB's `SET threads`), "
                 "DuckDB %s. Times are medians in ms: gpuolap `sql --repeat` (%d runs of cpu-parallel, %d of cpu-serial, "
                 "after a warm-up, tables in memory, parse+bind+plan+run); DuckDB the query alone over in-memory tables "
                 "(%d runs after a warm-up). Ratio: cpu-parallel / DuckDB. Floor: the bytes of the columns the query names "
                 "(int64/double 8, date/string code 4, × the table's rows) over the measured memory bandwidth, "
                 "%.1f GB/s (numpy copy with %d threads, read + written bytes).\n\n"
                 % (commit, " ".join(sys.argv[1:]), threads, duckdb.__version__, args.repeat, args.serial_repeat,
                    args.repeat, bandwidth / 1e9, threads))
        md.write("| data | query | rows | groups | plan (cpu-parallel) | cpu-serial | cpu-parallel | DuckDB | ratio | floor | answers |\n")
        md.write("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|\n")
        for r in results:
            md.write("| %s | %s | %d | %d | %s | %.1f | %.1f | %.1f | %.2f | %.2f | %s |\n"
                     % (r["group"], r["query"], r["rows"], r["groups"], r["plan"].replace("|", "/"), r["serial"],
                        r["parallel"], r["duckdb"], r["parallel"] / r["duckdb"], r["floor"],
                        "equal" if r["equal"] else "DIFFERENT: " + r["problem"]))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        labels = ["%s %s" % (r["group"], r["query"]) for r in results]
        fig, ax = plt.subplots(figsize=(10, 0.3 * len(results) + 1.5))
        y = np.arange(len(results))
        ax.barh(y + 0.2, [r["serial"] / r["duckdb"] for r in results], 0.4, label="cpu-serial / DuckDB")
        ax.barh(y - 0.2, [r["parallel"] / r["duckdb"] for r in results], 0.4, label="cpu-parallel / DuckDB")
        ax.axvline(1.5, color="red", linestyle="--", label="target 1.5x")
        ax.set_yticks(y)
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.set_xlabel("time / DuckDB's time (log)")
        ax.set_title("gpuolap SQL vs DuckDB, %s, %d threads" % (args.host, threads))
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(stem + ".png", dpi=110)
    except ImportError:
        print("matplotlib not importable: no plot")
    print("wrote %s.md" % stem)
    return 0 if all(r["equal"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
