#!/usr/bin/env python3
"""Randomized differential test of `gpuolap sql` against DuckDB.

Writes random tables as CSV (NULLs, duplicates, skew, strings with quotes
and commas), loads them with `gpuolap table load` and with DuckDB's
read_csv under the same declared types, runs random queries of the
supported subset on both, and compares the answers up to row order: doubles
within 1e-9 relative, everything else exactly.

Exit 0: all equal; 1: a difference (the query and both answers printed);
77: DuckDB is not importable (ctest reports the test as skipped).

The generator stays where PostgreSQL and DuckDB agree: no integer `/`
(DuckDB's `/` divides as doubles), no backslash in LIKE patterns (PostgreSQL
escapes with it, DuckDB does not), no ORDER BY ... LIMIT over sums.
"""
import argparse
import csv
import decimal
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

WORDS = ["alpha", "beta", "gamma", 'say "hi"', "a,b", "x", "Zeta", "zz top", "o'neil", "beta"]
FACT = {"k1": "int64", "k2": "string", "k3": "date", "v1": "int64", "v2": "double", "fk": "int64", "code": "string"}
D1 = {"id": "int64", "name": "string", "grp": "int64"}
D2 = {"code": "string", "cat": "string"}
DUCK = {"int64": "BIGINT", "double": "DOUBLE", "date": "DATE", "string": "VARCHAR"}


def maybe_null(rng, value, p=0.1):
    return None if rng.random() < p else value


def random_tables(rng, fact_rows):
    d1 = [{"id": i, "name": rng.choice(WORDS[:6]) + str(i % 4), "grp": maybe_null(rng, rng.randint(1, 3))}
          for i in range(1, 41)]
    codes = ["c%02d" % i for i in range(12)]
    d2 = [{"code": c, "cat": maybe_null(rng, rng.choice(["red", "green", "blue,ish"]))} for c in codes]
    fact = []
    for _ in range(fact_rows):
        # skew: the low keys are frequent
        k1 = int(rng.paretovariate(1.2)) % 9
        fact.append({
            "k1": maybe_null(rng, k1),
            "k2": maybe_null(rng, rng.choice(WORDS)),
            "k3": maybe_null(rng, "%04d-%02d-%02d" % (rng.choice([1998, 1999, 2000, 2024]), rng.randint(1, 12), rng.randint(1, 28))),
            "v1": maybe_null(rng, rng.randint(-1000, 1000)),
            "v2": maybe_null(rng, round(rng.uniform(-100, 100), rng.choice([0, 2, 6]))),
            "fk": maybe_null(rng, rng.randint(1, 45), 0.05),  # 41..45 match no dimension row
            "code": maybe_null(rng, rng.choice(codes + ["c99"]), 0.05),
        })
    return {"f": (FACT, fact), "d1": (D1, d1), "d2": (D2, d2)}


def write_csv(path, columns, rows):
    with open(path, "w", newline="") as out:
        w = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writerow(list(columns))
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in columns])


class QueryGenerator:
    def __init__(self, rng):
        self.rng = rng

    def constant(self, column):
        r = self.rng
        if column.endswith(("k1", "grp")):
            return str(r.randint(0, 8))
        if column.endswith(("v1", "fk", ".id")):
            return str(r.randint(-500, 500))
        if column.endswith("v2"):
            return repr(round(r.uniform(-100, 100), 2))
        if column.endswith("k3"):
            return "date '%04d-%02d-%02d'" % (r.choice([1998, 1999, 2000]), r.randint(1, 12), r.randint(1, 28))
        return "'" + r.choice(WORDS).replace("'", "''") + "'"

    def predicate(self, columns, depth=0):
        r = self.rng
        c = r.choice(columns)
        kind = r.randint(0, 8)
        if depth < 1 and kind == 0:
            return "(%s OR %s)" % (self.predicate(columns, depth + 1), self.predicate(columns, depth + 1))
        if depth < 1 and kind == 1:
            return "NOT (%s)" % self.predicate(columns, depth + 1)
        if kind == 2:
            return "%s IS %sNULL" % (c, r.choice(["", "NOT "]))
        if kind == 3:
            items = [self.constant(c) for _ in range(r.randint(1, 4))]
            if r.random() < 0.2:
                items.append("NULL")
            return "%s %sIN (%s)" % (c, r.choice(["", "NOT "]), ", ".join(items))
        if kind == 4:
            lo, hi = sorted([self.constant(c), self.constant(c)]) if not c.endswith(("v1", "v2", "k1", "fk", "grp")) else \
                sorted([self.constant(c), self.constant(c)], key=float)
            return "%s %sBETWEEN %s AND %s" % (c, r.choice(["", "NOT "]), lo, hi)
        if kind == 5 and c.endswith(("k2", "name", "cat", "code")):
            pattern = r.choice(["%a%", "_eta", "%,%", "%\"%", "x", "%o", "b%a", "%"])
            return "%s %sLIKE '%s'" % (c, r.choice(["", "NOT "]), pattern)
        return "%s %s %s" % (c, r.choice(["=", "<>", "<", "<=", ">", ">="]), self.constant(c))

    def query(self):
        r = self.rng
        shape = r.choice(["f", "f", "f_d1", "f_d1_d2", "join_on"])
        tables = "f"
        columns = ["f.k1", "f.k2", "f.k3", "f.v1", "f.v2"]
        strings = ["f.k2"]
        if shape in ("f_d1", "f_d1_d2"):
            tables = "f, d1" + (", d2" if shape == "f_d1_d2" else "")
            columns += ["d1.name", "d1.grp"]
            strings += ["d1.name"]
        if shape == "f_d1_d2":
            columns += ["d2.cat"]
            strings += ["d2.cat"]
        if shape == "join_on":
            tables = "f JOIN d2 ON f.code = d2.code"
            columns += ["d2.cat"]
            strings += ["d2.cat"]
        conditions = []
        if shape in ("f_d1", "f_d1_d2"):
            conditions.append("f.fk = d1.id")
        if shape == "f_d1_d2":
            conditions.append("d2.code = f.code")
        for _ in range(r.randint(0, 2)):
            conditions.append(self.predicate(columns))
        where = (" WHERE " + " AND ".join(conditions)) if conditions else ""
        if r.random() < 0.7:
            return self.aggregate_query(tables, where, columns, strings)
        return self.plain_query(tables, where, columns)

    def aggregate_query(self, tables, where, columns, strings):
        r = self.rng
        key_choices = [c for c in columns if not c.endswith("v2")] + [
            "EXTRACT(YEAR FROM f.k3)", "f.k1 % 3", "CASE WHEN f.v1 > 0 THEN 'pos' WHEN f.v1 < 0 THEN 'neg' END",
            "f.k3 + 7"]
        keys = r.sample(key_choices, r.randint(0, 3))
        grouping = r.choice(["plain", "plain", "rollup", "cube", "sets"]) if keys else "none"
        if grouping == "plain":
            group_by = " GROUP BY " + ", ".join(keys)
        elif grouping == "rollup":
            group_by = " GROUP BY ROLLUP (%s)" % ", ".join(keys)
        elif grouping == "cube":
            group_by = " GROUP BY CUBE (%s)" % ", ".join(keys)
        elif grouping == "sets":
            sets = ["(%s)" % ", ".join(r.sample(keys, r.randint(0, len(keys)))) for _ in range(r.randint(1, 4))]
            group_by = " GROUP BY GROUPING SETS (%s)" % ", ".join(sets)
        else:
            group_by = ""
        aggs = ["count(*)", "count(%s)" % r.choice(columns), "count(DISTINCT %s)" % r.choice(columns),
                "sum(f.v1)", "sum(f.v2)", "avg(f.v1)", "avg(f.v2)", "min(%s)" % r.choice(columns),
                "max(%s)" % r.choice(columns), "sum(f.v1 * 2 + f.k1)", "sum(f.v2 * f.v1)", "min(f.k3 - 3)",
                "sum(CASE WHEN f.v1 > 0 THEN f.v2 ELSE 0 END)", "max(f.k3 - date '1998-01-01')"]
        select = list(keys) + r.sample(aggs, r.randint(1, 4))
        if grouping in ("rollup", "cube", "sets") and r.random() < 0.6:
            select.append("GROUPING(%s)" % ", ".join(keys))
        having = ""
        if r.random() < 0.25:
            having = " HAVING count(*) > %d" % r.randint(0, 5)
        elif r.random() < 0.1:
            having = " HAVING sum(f.v1) IS NOT NULL"
        return "SELECT %s FROM %s%s%s%s" % (", ".join(select), tables, where, group_by, having)

    def plain_query(self, tables, where, columns):
        r = self.rng
        exprs = ["f.v1 + f.k1", "f.v2 * 2", "f.v2 / 4.0", "-f.v1", "f.v1 % 7", "f.k3 - 30", "f.k3 + 1",
                 "EXTRACT(MONTH FROM f.k3)", "EXTRACT(DAY FROM f.k3)", "CASE WHEN f.k2 LIKE '%a%' THEN f.v1 ELSE f.k1 END",
                 "CAST(f.v1 AS double precision)", "f.v1 BETWEEN 0 AND 100", "f.k2 IS NULL", "f.v1 * 1.5"]
        select = r.sample(columns, r.randint(1, 3)) + r.sample(exprs, r.randint(0, 3))
        order = ""
        if r.random() < 0.5:
            positions = list(range(1, len(select) + 1))
            order = " ORDER BY " + ", ".join("%d %s NULLS %s" % (p, r.choice(["ASC", "DESC"]), r.choice(["FIRST", "LAST"]))
                                             for p in positions)
            order += " LIMIT %d" % r.randint(0, 30)
            if r.random() < 0.3:
                order += " OFFSET %d" % r.randint(0, 10)
        return "SELECT %s FROM %s%s%s" % (", ".join(select), tables, where, order)


def normalise(value):
    if value is None:
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, decimal.Decimal):  # DuckDB reads 1.5 as a DECIMAL; PostgreSQL's numeric is a double here
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if isinstance(value, float) else value
    return str(value)


def sort_key(row):
    out = []
    for v in row:
        if v is None:
            out.append((0, ""))
        elif isinstance(v, bool):
            out.append((1, str(v)))
        elif isinstance(v, (int, float)):
            out.append((2, "%.9g" % v))
        else:
            out.append((3, v))
    return out


def equal(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return a == b
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


def compare(ours, theirs):
    if len(ours) != len(theirs):
        return "row counts differ: gpuolap %d, DuckDB %d" % (len(ours), len(theirs))
    a, b = sorted(ours, key=sort_key), sorted(theirs, key=sort_key)
    for x, y in zip(a, b):
        if len(x) != len(y) or not all(equal(p, q) for p, q in zip(x, y)):
            return "rows differ: gpuolap %r, DuckDB %r" % (x, y)
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpuolap", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--datasets", type=int, default=3)
    parser.add_argument("--queries", type=int, default=100, help="queries per data set")
    parser.add_argument("--configs", default="cpu-serial:per-set,cpu-serial:lattice,cpu-parallel:auto",
                        help="engine:grouping-sets pairs, each compared with DuckDB")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    os.makedirs(args.work, exist_ok=True)
    failures = 0
    total = 0
    for dataset in range(args.datasets):
        db = os.path.join(args.work, "db%d" % dataset)
        con = duckdb.connect()
        for name, (columns, rows) in random_tables(rng, rng.choice([0, 5, 300, 1500]) if dataset else 800).items():
            path = os.path.join(args.work, "%s_%d.csv" % (name, dataset))
            write_csv(path, columns, rows)
            types = os.path.join(args.work, "%s_%d.types.json" % (name, dataset))
            with open(types, "w") as t:
                json.dump(columns, t)
            subprocess.run([args.gpuolap, "table", "load", "--db", db, "--name", name, "--csv", path, "--types", types],
                           check=True, stdout=subprocess.DEVNULL)
            duck_types = ", ".join("'%s': '%s'" % (c, DUCK[t]) for c, t in columns.items())
            con.execute("CREATE TABLE %s AS SELECT * FROM read_csv('%s', header=true, columns={%s})"
                        % (name, path, duck_types))
        generator = QueryGenerator(rng)
        for _ in range(args.queries):
            sql = generator.query()
            try:
                expected = [[normalise(v) for v in row] for row in con.execute(sql).fetchall()]
                duck_error = None
            except duckdb.Error as e:
                expected, duck_error = None, str(e)
            for config in args.configs.split(","):
                engine, grouping_sets = config.split(":")
                total += 1
                run = subprocess.run([args.gpuolap, "sql", "--db", db, "--format", "json", "--engine", engine,
                                      "--grouping-sets", grouping_sets, sql], capture_output=True, text=True)
                if run.returncode != 0 or duck_error:
                    # Both refuse (an error of evaluation, as division by zero): equal.
                    if run.returncode == 2 and duck_error:
                        continue
                    failures += 1
                    print("FAIL [%s] %s\n  gpuolap: rc %d %s\n  DuckDB: %s" % (config, sql, run.returncode,
                                                                             run.stderr.strip(), duck_error))
                    continue
                ours = [[normalise(v) for v in row] for row in json.loads(run.stdout)["rows"]]
                problem = compare(ours, expected)
                if problem:
                    failures += 1
                    print("FAIL [%s] %s\n  %s" % (config, sql, problem))
    print("%d of %d runs of random queries (%s) differ from DuckDB (seed %d)" % (failures, total, args.configs, args.seed))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
