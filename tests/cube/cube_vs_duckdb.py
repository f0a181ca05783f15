#!/usr/bin/env python3
"""`gpuolap cube build` against DuckDB's GROUP BY GROUPING SETS.

Writes random tables as CSV (NULLs in keys and measures, strings with
commas and quotes, dates, doubles, wide sparse integers), loads each with
`gpuolap table load` (once as it is, once sorted) and into DuckDB, builds
random cubes (rollup products, CUBE, explicit GROUPING SETS) with every
algorithm asked for, and compares each answer with DuckDB's
  SELECT GROUPING(c1, ..., cn), c1, ..., cn, aggregates FROM t
  GROUP BY GROUPING SETS (...)
as multisets of rows: doubles within 1e-9 relative, everything else
exactly.

Exit 0: all equal; 1: a difference (the cube and both answers' first
differing rows printed); 77: DuckDB is not importable (ctest: skipped).
"""
import argparse
import csv
import io
import json
import math
import os
import random
import subprocess
import sys

try:
    import duckdb
except ImportError:
    print("SKIP: the Python module duckdb is not importable (scripts/setup.sh installs it: pip install duckdb)")
    sys.exit(77)

WORDS = ["alpha", "beta", "gamma", 'say "hi"', "a,b", "Zeta"]
TYPES = {"k1": "int64", "k2": "string", "k3": "date", "k4": "double", "k5": "int64", "v1": "int64", "v2": "double"}
DUCK = {"int64": "BIGINT", "double": "DOUBLE", "date": "DATE", "string": "VARCHAR"}
KEYS = ["k1", "k2", "k3", "k4", "k5"]
AGGREGATES = ["count(*)", "count(v2)", "sum(v2)", "avg(v2)", "min(v2)", "max(k2)", "sum(v1)", "min(k3)"]


def maybe_null(rng, value, p=0.1):
    return None if rng.random() < p else value


def random_rows(rng, n):
    return [{
        "k1": maybe_null(rng, rng.randint(-2, 3)),
        "k2": maybe_null(rng, rng.choice(WORDS)),
        "k3": "%04d-%02d-%02d" % (rng.choice([1999, 2024]), rng.randint(1, 12), rng.randint(1, 3)),
        "k4": maybe_null(rng, rng.choice([1.5, -2.25, 0.0, 1e300, 7.0]), 0.05),
        "k5": rng.choice([-1, 1]) * rng.randint(0, 4) * 10**12,
        "v1": maybe_null(rng, rng.randint(-10**12, 10**12), 0.2),
        "v2": maybe_null(rng, round(rng.uniform(-100, 100), rng.choice([0, 2, 6])), 0.15),
    } for _ in range(n)]


def write_csv(path, rows):
    with open(path, "w", newline="") as out:
        w = csv.writer(out, lineterminator="\n")
        w.writerow(list(TYPES))
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in TYPES])


def random_cube(rng):
    """(dims, sets or None, the sets as column lists)."""
    columns = rng.sample(KEYS, rng.randint(1, 4))
    shape = rng.choice(["rollups", "cube", "sets"])
    if shape == "cube":
        dims = ", ".join(columns)
    elif shape == "rollups":
        cut = rng.randint(1, len(columns))
        dims = ", ".join(x for x in [">".join(columns[:cut]), ">".join(columns[cut:])] if x)
    else:
        dims = ", ".join(columns)
    rollups = [d.strip().split(">") for d in dims.split(",")]
    sets = [[]]
    for rollup in reversed(rollups):
        sets = [rollup[:keep] + rest for keep in range(len(rollup), -1, -1) for rest in sets]
    explicit = None
    if shape == "sets":
        chosen = []
        for _ in range(rng.randint(1, 4)):
            s = [c for c in columns if rng.random() < 0.5]
            if s not in chosen:
                chosen.append(s)
        # GROUPING(...) takes only columns some set groups by.
        if any(all(c not in s for s in chosen) for c in columns) and columns not in chosen:
            chosen.append(list(columns))
        sets = chosen
        explicit = ", ".join("(" + ", ".join(s) + ")" for s in chosen)
    order = [c for r in rollups for c in r]
    return dims, explicit, order, sets


def text_of(value, column_type):
    if value is None:
        return None
    if column_type == "double":
        return float(value)
    if isinstance(value, float):
        return value
    return str(value)


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return a == b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpuolap", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tables", type=int, default=2)
    ap.add_argument("--cubes", type=int, default=12)
    ap.add_argument("--algorithms", default="cpu-sequential,cpu-partitioned")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "types.json"), "w") as f:
        json.dump(TYPES, f)
    checked = 0
    for t in range(args.tables):
        db = os.path.join(args.work, f"db{t}")
        rows = random_rows(rng, rng.choice([0, 1, 50, 3000]) if t else 3000)
        path = os.path.join(args.work, f"t{t}.csv")
        write_csv(path, rows)
        for name, extra in (("t", []), ("ts", ["--sort-by", "k1,k2,k3,k4,k5"])):
            subprocess.run([args.gpuolap, "table", "load", "--db", db, "--name", name, "--csv", path, "--types",
                            os.path.join(args.work, "types.json")] + extra, check=True, capture_output=True)
        con = duckdb.connect()
        con.execute("CREATE TABLE t (" + ", ".join(f"{c} {DUCK[ty]}" for c, ty in TYPES.items()) + ")")
        con.execute(f"INSERT INTO t SELECT * FROM read_csv('{path}', header=true, columns={{" +
                    ", ".join(f"'{c}': '{DUCK[ty]}'" for c, ty in TYPES.items()) + "})")
        for _ in range(args.cubes):
            dims, explicit, order, sets = random_cube(rng)
            aggregates = rng.sample(AGGREGATES, rng.randint(1, 5))
            grouping_sets = ", ".join("(" + ", ".join(s) + ")" for s in sets)
            query = (f"SELECT GROUPING({', '.join(order)}), {', '.join(order)}, {', '.join(aggregates)} FROM t "
                     f"GROUP BY GROUPING SETS ({grouping_sets})")
            types = ["int64"] + [TYPES[c] for c in order] + [
                "int64" if a.startswith("count") else "double" if a.startswith(("avg", "sum(v2", "min(v2")) else
                TYPES[a[a.index("(") + 1:-1]] for a in aggregates]
            want = sorted(([text_of(v, ty) for v, ty in zip(r, types)] for r in con.execute(query).fetchall()),
                          key=repr)
            for table in ("t", "ts"):
                for algorithm in args.algorithms.split(","):
                    cmd = [args.gpuolap, "cube", "build", "--db", db, "--table", table, "--dims", dims,
                           "--measure", ",".join(aggregates), "--algorithm", algorithm]
                    if explicit:
                        cmd += ["--sets", explicit]
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    if p.returncode != 0:
                        print(f"FAILED: {' '.join(cmd)}\n{p.stderr}")
                        return 1
                    got_rows = list(csv.reader(io.StringIO(p.stdout)))[1:]
                    got = sorted(([text_of(v if v != "" else None, ty) for v, ty in zip(r, types)] for r in got_rows),
                                 key=repr)
                    if any(len(r) != len(types) for r in got_rows):
                        print(f"DIFFERS: {' '.join(cmd)}: a row has not {len(types)} fields")
                        return 1
                    if len(got) != len(want) or any(not all(same(a, b) for a, b in zip(x, y)) for x, y in zip(want, got)):
                        print(f"DIFFERS: {' '.join(cmd)}\nDuckDB: {query}")
                        for x, y in zip(want, got):
                            if not all(same(a, b) for a, b in zip(x, y)):
                                print(f"  DuckDB: {x}\n  cube:   {y}")
                                break
                        print(f"  rows: DuckDB {len(want)}, cube {len(got)}")
                        return 1
                    checked += 1
    print(f"{checked} cube builds equal DuckDB's GROUPING SETS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
