#!/usr/bin/env python3
"""gpuolap's CPU engines against DuckDB on the thesis' area queries (issue 23,
item 3): B1-B3 over the Biker cube and M1-M3 over the Machines cube, on the
same host with the same number of threads.

gpuolap: `gpuolap generate --kind biker|machines` writes the schema, the facts
and the queries; `gpuolap create` makes a store; each query runs as `gpuolap
query --cube STORE --engine E --timing`, and its time is map + aggregate of
the timing line (the store's load is not per query), the median of --repeat
runs. cpu-serial runs too when its first run takes less than --serial-limit
seconds.

DuckDB (in-memory database, `SET threads` to the cores gpuolap's TBB uses):
the facts as one INTEGER column per dimension (the base's index among the
dimension's base elements, in schema order) and one DOUBLE per measure. Per
query and dimension a bridge table (pos: position in the query's list, base,
w: the base's weight under the listed element; zero weights left out), built
here from the schema. Three formulations, timed as the SQL alone (execute +
fetch from Python; building the bridges is not timed, gpuolap's map is):

  general    the facts joined to every dimension's bridge, GROUP BY the
             positions, the aggregate of value * the product of the weights;
  pruned     the same without the joins of dimensions whose list is a single
             element over every base with weight 1 (they change nothing);
  two-phase  bases with equal (pos, w) lists form a class; phase 1 aggregates
             the raw values (SUM, COUNT, MIN, MAX) per tuple of class ids
             (dimensions with one class over every base left out), phase 2
             joins that small table to the per-class bridges and aggregates
             w * sum (min/max: w * min or w * max by the sign of w).

Per query: one warm-up each, then --repeat rounds of cpu-parallel followed by
each formulation, medians reported; interleaving them makes other load on a
shared host fall on all alike.

Answers are checked per target cell against gpuolap cpu-parallel's CSV
(counts, mins and maxes exactly, sums and averages within 1e-9 relative,
or, where Actual and Budget cancel in a Variance cell, within 1e-9 of the
cell's sum of |contributions| -- gpuolap bench's house rule -- counted apart):
every DuckDB formulation and cpu-serial. A difference is printed and makes the
exit status 1. Output: a markdown report on stdout (and --md FILE), a PNG of
ms per query per engine (--png FILE).
"""
import argparse
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys
import time

import duckdb

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QUERIES = {"biker": ["B1", "B2", "B3"], "machines": ["M1", "M2", "M3"]}
FORMULATIONS = ["general", "pruned", "two-phase"]
TIMING = re.compile(r"timing: load ([0-9.]+) ms, map ([0-9.]+) ms, aggregate ([0-9.]+) ms, output ([0-9.]+) ms")


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd[:3]), p.returncode, p.stderr.strip()[-2000:]))
    return p


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the schema

class Dim:
    """A dimension: its elements in schema order, its bases (index = position
    among the base elements in schema order) and each element's base weights."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.elements = [e["name"] for e in spec["elements"]]
        self.children = {e["name"]: [(c["name"], float(c.get("weight", 1.0))) for c in e.get("children", [])]
                         for e in spec["elements"]}
        self.bases = [e for e in self.elements if not self.children[e]]
        self.base_index = {b: i for i, b in enumerate(self.bases)}
        self._weights = {}

    def weights(self, element):
        """{base index: weight} of the bases under element, summed over paths
        (products of the weights along each); zero weights left out."""
        if element not in self._weights:
            if element not in self.children:
                raise KeyError("dimension %s has no element %r" % (self.name, element))
            if not self.children[element]:
                w = {self.base_index[element]: 1.0}
            else:
                w = {}
                for child, cw in self.children[element]:
                    for b, bw in self.weights(child).items():
                        w[b] = w.get(b, 0.0) + cw * bw
                w = {b: x for b, x in sorted(w.items()) if x != 0.0}
            self._weights[element] = w
        return self._weights[element]


def query_lists(dims, query):
    """Per dimension the query's element list ("*": every element in schema
    order; Palo's "expand" applied as the server does)."""
    area = query["area"]
    lists = []
    for d in dims:
        spec = area[d.name]
        lst = list(d.elements) if spec == "*" else list(spec)
        exp = query.get("expand", {}).get(d.name)
        if exp is not None:
            modes = set([exp] if isinstance(exp, str) else exp)
            out, seen = [], set()
            for e in lst:
                cand = ([e] if "self" in modes else []) + \
                       ([c for c, _ in d.children[e]] if "children" in modes else []) + \
                       ([d.bases[b] for b in d.weights(e)] if "leaves" in modes else [])
                for c in cand:
                    if c not in seen:
                        seen.add(c)
                        out.append(c)
            lst = out
        lists.append(lst)
    return lists


# ---------------------------------------------------------------- DuckDB

def literal(v):
    return "'%s'" % v.replace("'", "''") if isinstance(v, str) else repr(v)


def values_table(con, name, columns, rows):
    """CREATE TABLE name(columns) from Python rows (ints and floats)."""
    con.execute("DROP TABLE IF EXISTS %s" % name)
    con.execute("CREATE TABLE %s (%s)" % (name, ", ".join("%s %s" % c for c in columns)))
    for i in range(0, len(rows), 2000):
        chunk = rows[i:i + 2000]
        con.execute("INSERT INTO %s VALUES %s" % (name, ", ".join(
            "(" + ", ".join(literal(v) for v in r) + ")" for r in chunk)))


def load_facts(con, dims, measures, facts_csv):
    """facts(d0..dk INTEGER base indices, m0..mj DOUBLE) from the CSV of names."""
    for i, d in enumerate(dims):
        values_table(con, "names%d" % i, [("name", "VARCHAR"), ("idx", "INTEGER")],
                     [(b, j) for j, b in enumerate(d.bases)])
    header = next(csv.reader(open(facts_csv, newline="")))
    types = {m: "DOUBLE" for m in measures}
    cols = "{" + ", ".join("'%s': '%s'" % (h.replace("'", "''"), types.get(h, "VARCHAR")) for h in header) + "}"
    select = ["n%d.idx AS d%d" % (i, i) for i in range(len(dims))]
    select += ['%s AS m%d' % ('r."%s"' % m.replace('"', '""') if m in header else "CAST(NULL AS DOUBLE)", j)
               for j, m in enumerate(measures)]
    joins = " ".join('JOIN names%d n%d ON r."%s" = n%d.name' % (i, i, d.name.replace('"', '""'), i)
                     for i, d in enumerate(dims))
    con.execute("DROP TABLE IF EXISTS facts")
    con.execute("CREATE TABLE facts AS SELECT %s FROM read_csv('%s', header=true, columns=%s) r %s"
                % (", ".join(select), facts_csv.replace("'", "''"), cols, joins))
    return con.execute("SELECT COUNT(*) FROM facts").fetchone()[0]


class Plan:
    """A query's bridges and the SQL of each formulation."""

    def __init__(self, con, dims, query):
        self.lists = query_lists(dims, query)
        self.agg = query.get("aggregate", "sum")
        self.measure = query.get("measure")
        self.k = len(dims)
        bridges = []
        for i, (d, lst) in enumerate(zip(dims, self.lists)):
            rows = [(p, b, w) for p, e in enumerate(lst) for b, w in d.weights(e).items()]
            bridges.append(rows)
            values_table(con, "bridge%d" % i, [("pos", "INTEGER"), ("base", "INTEGER"), ("w", "DOUBLE")], rows)
        # a dimension whose list is one element over every base with weight 1
        self.total = [len(lst) == 1 and len(rows) == len(d.bases) and all(w == 1.0 for _, _, w in rows)
                      for d, lst, rows in zip(dims, self.lists, bridges)]
        # classes: bases with equal (pos, w) lists; bases under no listed element have none
        self.single_class = []
        for i, (d, rows) in enumerate(zip(dims, bridges)):
            per_base = {}
            for p, b, w in rows:
                per_base.setdefault(b, []).append((p, w))
            classes, classmap = {}, []
            for b, lst in sorted(per_base.items()):
                key = tuple(lst)
                classmap.append((b, classes.setdefault(key, len(classes))))
            values_table(con, "class%d" % i, [("base", "INTEGER"), ("cls", "INTEGER")], classmap)
            values_table(con, "cbridge%d" % i, [("cls", "INTEGER"), ("pos", "INTEGER"), ("w", "DOUBLE")],
                         [(c, p, w) for key, c in classes.items() for p, w in key])
            self.single_class.append(len(classes) == 1 and len(per_base) == len(d.bases))

    def _one_phase(self, m, prune):
        k = self.k
        keep = [i for i in range(k) if not (prune and self.total[i])]
        v = "f.m%d" % m
        w = " * ".join("b%d.w" % i for i in keep) or "1.0"
        vw = "%s * %s" % (v, w) if keep else v
        pos = ["b%d.pos AS p%d" % (i, i) if i in keep else "0 AS p%d" % i for i in range(k)]
        aggexpr = {"sum": "SUM(%s)" % vw, "count": "COUNT(%s)" % v, "avg": "SUM(%s) / COUNT(%s)" % (vw, v),
                   "min": "MIN(%s)" % vw, "max": "MAX(%s)" % vw}[self.agg]
        joins = " ".join("JOIN bridge%d b%d ON f.d%d = b%d.base" % (i, i, i, i) for i in keep)
        group = ", ".join("b%d.pos" % i for i in keep)
        return "SELECT %s, %s AS v FROM facts f %s WHERE %s IS NOT NULL%s" % (
            ", ".join(pos), aggexpr, joins, v, (" GROUP BY " + group) if group else "")

    def _two_phase(self, m):
        k = self.k
        kept = [i for i in range(k) if not self.single_class[i]]
        v = "f.m%d" % m
        cls = ["c%d.cls AS c%d" % (i, i) for i in kept]
        joins = " ".join("JOIN class%d c%d ON f.d%d = c%d.base" % (i, i, i, i) for i in kept)
        phase1 = "SELECT %sSUM(%s) AS s, COUNT(%s) AS n, MIN(%s) AS mn, MAX(%s) AS mx FROM facts f %s WHERE %s IS NOT NULL%s" % (
            "".join(c + ", " for c in cls), v, v, v, v, joins, v, (" GROUP BY " + ", ".join("c%d.cls" % i for i in kept)) if kept else "")
        w = " * ".join("cb%d.w" % i for i in range(k))
        joins2 = " ".join(("JOIN cbridge%d cb%d ON t.c%d = cb%d.cls" % (i, i, i, i)) if i in kept
                          else ("CROSS JOIN cbridge%d cb%d" % (i, i)) for i in range(k))
        aggexpr = {"sum": "SUM(W * t.s)", "count": "SUM(t.n)", "avg": "SUM(W * t.s) / SUM(t.n)",
                   "min": "MIN(CASE WHEN W >= 0 THEN W * t.mn ELSE W * t.mx END)",
                   "max": "MAX(CASE WHEN W >= 0 THEN W * t.mx ELSE W * t.mn END)"}[self.agg].replace("W", "(%s)" % w)
        return "WITH t AS (%s) SELECT %s, %s AS v FROM t %s GROUP BY %s" % (
            phase1, ", ".join("cb%d.pos AS p%d" % (i, i) for i in range(k)), aggexpr, joins2,
            ", ".join("cb%d.pos" % i for i in range(k)))

    def magnitude_sql(self, m):
        """Untimed: per target the sum of |contributions| and their count (the
        scale of a sum's rounding error), in two phases."""
        k = self.k
        v = "f.m%d" % m
        joins = " ".join("JOIN class%d c%d ON f.d%d = c%d.base" % (i, i, i, i) for i in range(k))
        phase1 = "SELECT %s, SUM(ABS(%s)) AS sa, COUNT(%s) AS n FROM facts f %s WHERE %s IS NOT NULL GROUP BY ALL" % (
            ", ".join("c%d.cls AS c%d" % (i, i) for i in range(k)), v, v, joins, v)
        w = " * ".join("cb%d.w" % i for i in range(k))
        joins2 = " ".join("JOIN cbridge%d cb%d ON t.c%d = cb%d.cls" % (i, i, i, i) for i in range(k))
        return "WITH t AS (%s) SELECT %s, SUM(ABS(%s) * t.sa), SUM(t.n) FROM t %s GROUP BY ALL" % (
            phase1, ", ".join("cb%d.pos AS p%d" % (i, i) for i in range(k)), w, joins2)

    def sql(self, formulation, m):
        if formulation == "general":
            return self._one_phase(m, False)
        if formulation == "pruned":
            return self._one_phase(m, True)
        return self._two_phase(m)

    def named(self, rows):
        """{target name tuple: value(s)} from DuckDB's (positions..., value(s)) rows."""
        return {tuple(self.lists[i][r[i]] for i in range(self.k)): (r[self.k] if len(r) == self.k + 1 else r[self.k:])
                for r in rows}


# ---------------------------------------------------------------- gpuolap

def gpuolap_run(binary, store, qfile, engine):
    p = run([binary, "query", "--cube", store, "--query", qfile, "--engine", engine, "--timing"])
    m = TIMING.search(p.stderr)
    if not m:
        raise RuntimeError("no timing line in: " + p.stderr[-1000:])
    plan = re.search(r"^plan: (.*)$", p.stderr, re.M)
    return float(m.group(2)) + float(m.group(3)), p.stdout, plan.group(1) if plan else ""


def gpuolap_time(binary, store, qfile, engine, repeat, limit_s=None):
    """Median of map + aggregate over `repeat` runs (one run only when the
    first exceeds limit_s), the CSV of the last run and the plan line."""
    first, out, plan = gpuolap_run(binary, store, qfile, engine)
    times = [first]
    if limit_s is not None and first > limit_s * 1e3:
        return None, out, plan
    for _ in range(repeat - 1):
        t, out, plan = gpuolap_run(binary, store, qfile, engine)
        times.append(t)
    return statistics.median(times), out, plan


def parse_csv(text, k):
    rows = list(csv.reader(io.StringIO(text)))
    return {tuple(r[:k]): float(r[k]) for r in rows[1:]}


def compare(expected, got, agg, what, magnitude):
    """Differences between two {target: value} answers (at most 5 described)
    and how many sums passed only by the house rule (within 1e-9 of the sum
    of |contributions|, not of the sum itself: Actual and Budget cancel in
    Variance cells)."""
    problems, loose = [], 0
    for key in expected.keys() - got.keys():
        problems.append("%s lacks target %s (expected %r)" % (what, key, expected[key]))
    for key in got.keys() - expected.keys():
        problems.append("%s has extra target %s = %r" % (what, key, got[key]))
    for key in expected.keys() & got.keys():
        a, b = expected[key], float(got[key])
        if agg in ("count", "min", "max"):
            ok = a == b
        else:
            ok = abs(a - b) <= 1e-9 * max(abs(a), abs(b)) or a == b
            if not ok:
                sa, n = magnitude[key]
                scale = sa / n if agg == "avg" else sa
                ok = abs(a - b) <= 1e-9 * scale
                loose += ok
        if not ok:
            problems.append("%s: target %s: gpuolap %r, %s %r" % (what, key, a, what, b))
    return len(problems), loose, problems[:5]


# ---------------------------------------------------------------- main

def fmt_ms(x):
    if x is None:
        return "—"
    return "%.1f" % x if x >= 10 else "%.2f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpuolap", default=os.path.join(REPO, "build-cpu", "src", "gpuolap"))
    ap.add_argument("--work", default="/tmp/cpu_vs_duckdb", help="cubes and stores (kept between runs)")
    ap.add_argument("--biker-scale", default="0.01")
    ap.add_argument("--machines-scale", default="0.05")
    ap.add_argument("--kinds", nargs="+", default=["biker", "machines"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--serial-limit", type=float, default=20.0, help="seconds: cpu-serial only below this")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--md", help="also write the markdown report here")
    ap.add_argument("--png", help="plot ms per query per engine here")
    args = ap.parse_args()

    os.makedirs(args.work, exist_ok=True)
    results, failures = [], []
    for kind in args.kinds:
        scale = args.biker_scale if kind == "biker" else args.machines_scale
        cube = os.path.join(args.work, "%s-%s" % (kind, scale))
        store = cube + "-store"
        if not os.path.exists(os.path.join(cube, "facts.csv")):
            log("generate %s --scale %s" % (kind, scale))
            run([args.gpuolap, "generate", "--kind", kind, "--scale", scale, "--out", cube])
        if not os.path.exists(os.path.join(store, "cube.gpuolap")):
            log("create %s" % store)
            run([args.gpuolap, "create", "--schema", os.path.join(cube, "schema.json"),
                 "--facts", os.path.join(cube, "facts.csv"), "--out", store])
        schema = json.load(open(os.path.join(cube, "schema.json")))
        dims = [Dim(d) for d in schema["dimensions"]]
        measures = schema["measures"]

        con = duckdb.connect()
        con.execute("SET threads = %d" % args.threads)
        t = time.perf_counter()
        nfacts = load_facts(con, dims, measures, os.path.join(cube, "facts.csv"))
        log("duckdb: %s facts loaded in %.1f s" % (nfacts, time.perf_counter() - t))

        for name in QUERIES[kind]:
            qfile = os.path.join(cube, "queries", name + ".json")
            query = json.load(open(qfile))
            plan = Plan(con, dims, query)
            m = measures.index(query.get("measure", measures[0]))
            agg = query.get("aggregate", "sum")
            row = {"kind": kind, "scale": scale, "query": name, "facts": nfacts,
                   "targets": 1}
            for lst in plan.lists:
                row["targets"] *= len(lst)

            # Warm-ups (gpuolap's run gives the reference answer), then
            # --repeat rounds of cpu-parallel and each formulation in turn, so
            # that other load on the host falls on all of them alike.
            _, out, gplan = gpuolap_run(args.gpuolap, store, qfile, "cpu-parallel")
            expected = parse_csv(out, len(dims))
            magnitude = plan.named(con.execute(plan.magnitude_sql(m)).fetchall())
            sqls = {f: plan.sql(f, m) for f in FORMULATIONS}
            times = {f: [] for f in ["parallel"] + FORMULATIONS}
            answers = {f: con.execute(sqls[f]).fetchall() for f in FORMULATIONS}
            for _ in range(args.repeat):
                t, out, _ = gpuolap_run(args.gpuolap, store, qfile, "cpu-parallel")
                times["parallel"].append(t)
                for f in FORMULATIONS:
                    t = time.perf_counter()
                    answers[f] = con.execute(sqls[f]).fetchall()
                    times[f].append((time.perf_counter() - t) * 1e3)
            checks, looses = {}, {}
            n, loose, probs = compare(expected, parse_csv(out, len(dims)), agg, "cpu-parallel (last run)", magnitude)
            checks["cpu-parallel"], looses["cpu-parallel"] = n, loose
            failures += ["%s %s" % (name, p) for p in probs]
            par = statistics.median(times["parallel"])
            row.update(parallel=par, plan=gplan, filled=len(expected))
            ser, out, _ = gpuolap_time(args.gpuolap, store, qfile, "cpu-serial", args.repeat, args.serial_limit)
            row["serial"] = ser
            n, loose, probs = compare(expected, parse_csv(out, len(dims)), agg, "cpu-serial", magnitude)
            checks["cpu-serial"], looses["cpu-serial"] = n, loose
            failures += ["%s %s" % (name, p) for p in probs]
            for f in FORMULATIONS:
                row[f] = statistics.median(times[f])
                n, loose, probs = compare(expected, plan.named(answers[f]), agg, "duckdb " + f, magnitude)
                checks[f], looses[f] = n, loose
                failures += ["%s %s" % (name, p) for p in probs]
            best = min(FORMULATIONS, key=lambda f: row[f])
            row["best"], row["best_ms"] = best, row[best]
            row["ratio"] = row[best] / par
            row["checks"], row["loose"] = checks, looses
            row["pruned_dims"] = sum(plan.total)
            results.append(row)
            log("%s: cpu-parallel %.2f ms, cpu-serial %s, duckdb %s; mismatches %s, sums equal only within 1e-9 of the sum of |contributions| %s" % (
                name, par, fmt_ms(ser), ", ".join("%s %.2f" % (f, row[f]) for f in FORMULATIONS), checks, looses))
        con.close()

    lines = [
        "DuckDB %s, %d threads (SET threads; gpuolap's TBB uses os.cpu_count() = %d), repeat %d; load average at the end %s."
        % (duckdb.__version__, args.threads, os.cpu_count(), args.repeat, " ".join("%.2f" % x for x in os.getloadavg())),
        "Times in ms, medians: gpuolap map + aggregate (`query --timing`), DuckDB the SQL alone.",
        "",
        "| query | facts | targets (filled / overall) | cpu-serial | cpu-parallel | DuckDB general | DuckDB pruned | DuckDB two-phase | DuckDB best | DuckDB best / cpu-parallel | answers |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    for r in results:
        bad = [k for k, v in r["checks"].items() if v]
        lines.append("| %s (%s %s) | %s | %s / %s | %s | %s | %s | %s | %s | %s | %.2f | %s |" % (
            r["query"], r["kind"], r["scale"], f"{r['facts']:,}", f"{r['filled']:,}", f"{r['targets']:,}",
            fmt_ms(r["serial"]), fmt_ms(r["parallel"]), fmt_ms(r["general"]), fmt_ms(r["pruned"]),
            fmt_ms(r["two-phase"]), r["best"], r["ratio"],
            ("equal" + ("" if not sum(r["loose"].values()) else " (%s sums within 1e-9 of Σ|contribution| only)" % (
                ", ".join("%s %d" % (k, v) for k, v in r["loose"].items() if v))))
            if not bad else "DIFFER: " + ", ".join(bad)))
    lines.append("")
    lines.append("cpu-parallel plans: " + "; ".join("%s %s" % (r["query"], r["plan"]) for r in results) + ".")
    table = "\n".join(lines)
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")
    if args.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            engines = [("cpu-serial", "serial"), ("cpu-parallel", "parallel"), ("DuckDB general", "general"),
                       ("DuckDB pruned", "pruned"), ("DuckDB two-phase", "two-phase")]
            fig, ax = plt.subplots(figsize=(10, 4.5))
            width = 0.8 / len(engines)
            for j, (label, key) in enumerate(engines):
                xs = [i + (j - (len(engines) - 1) / 2) * width for i in range(len(results))]
                ys = [r[key] if r[key] is not None else 0 for r in results]
                ax.bar(xs, ys, width, label=label)
            ax.set_xticks(range(len(results)))
            ax.set_xticklabels([r["query"] for r in results])
            ax.set_yscale("log")
            ax.set_ylabel("ms (median; gpuolap: map + aggregate)")
            ax.set_title("gpuolap CPU engines vs DuckDB, %d threads (biker %s, machines %s)"
                         % (args.threads, args.biker_scale, args.machines_scale))
            ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
            ax.grid(axis="y", which="both", alpha=0.3)
            fig.tight_layout()
            fig.savefig(args.png, dpi=110)
        except ImportError:
            log("matplotlib not importable: no plot")
    if failures:
        print("\nMISMATCH between gpuolap cpu-parallel and another engine:", file=sys.stderr)
        for f in failures:
            print("  " + f, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
