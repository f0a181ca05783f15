#!/usr/bin/env python3
"""TPC-H Q1 and the 13 Star Schema Benchmark queries, as written in their
specifications (tests/sql/queries/*.sql), through `gpuolap sql` and through
DuckDB over the same generated tables, compared up to row order (doubles
within 1e-9 relative, everything else exactly).

The tables come from `gpuolap generate ssb|lineitem`; DuckDB reads them as
`gpuolap sql` writes them (CSV, types from its JSON header). Exit 77 where
DuckDB is not importable (ctest: skipped).
"""
import argparse
import glob
import json
import os
import subprocess
import sys

try:
    import duckdb
except ImportError:
    print("SKIP: the Python module duckdb is not importable (scripts/setup.sh installs it: pip install duckdb)")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential_duckdb import compare, normalise  # noqa: E402

DUCK = {"bigint": "BIGINT", "double precision": "DOUBLE", "date": "DATE", "text": "VARCHAR"}


def gpuolap_sql(binary, db, text, fmt="json", path=None):
    args = [binary, "sql", "--db", db, "--format", fmt]
    args += ["-f", path] if path else [text]
    run = subprocess.run(args, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("gpuolap sql failed (%d): %s" % (run.returncode, run.stderr.strip()))
    return run.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpuolap", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--scale", default="0.02")
    args = parser.parse_args()
    db = os.path.join(args.work, "db")
    os.makedirs(args.work, exist_ok=True)
    for kind in ("ssb", "lineitem"):
        subprocess.run([args.gpuolap, "generate", kind, "--db", db, "--scale", args.scale], check=True,
                       stdout=subprocess.DEVNULL)
    con = duckdb.connect()
    for table in ("lineorder", "date", "customer", "supplier", "part", "lineitem"):
        columns = json.loads(gpuolap_sql(args.gpuolap, db, 'select * from "%s" limit 0' % table))["columns"]
        path = os.path.join(args.work, table + ".csv")
        with open(path, "w") as out:
            out.write(gpuolap_sql(args.gpuolap, db, 'select * from "%s"' % table, fmt="csv"))
        types = ", ".join("'%s': '%s'" % (c["name"], DUCK[c["type"]]) for c in columns)
        con.execute('CREATE TABLE "%s" AS SELECT * FROM read_csv(\'%s\', header=true, columns={%s})' % (table, path, types))
    failures = 0
    queries = sorted(glob.glob(os.path.join(os.path.dirname(os.path.abspath(__file__)), "queries", "*.sql")))
    for path in queries:
        name = os.path.basename(path)
        with open(path) as f:
            text = f.read()
        ours = [[normalise(v) for v in row] for row in json.loads(gpuolap_sql(args.gpuolap, db, None, path=path))["rows"]]
        theirs = [[normalise(v) for v in row] for row in con.execute(text).fetchall()]
        problem = compare(ours, theirs)
        print("%-14s %5d rows  %s" % (name, len(ours), "equal" if not problem else "DIFFERENT: " + problem))
        failures += problem is not None
    print("%d of %d queries differ from DuckDB (scale %s)" % (failures, len(queries), args.scale))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
