#!/usr/bin/env python3
"""Plots of gpuolap_contention_bench's CSV files (and peers.py's DuckDB CSV):

    python3 bench/contention/plot_contention.py --variants V.csv [--placement P.csv] [--duckdb D.csv]
                                                 --out PREFIX

PREFIX-variants.png   every variant's time against theta for Q2 SUM(double),
                      Q2 COUNT and Q1, C = 1,024 and 8,192, beside the floor
                      and DuckDB (log scale)
PREFIX-placement.png  the paper's figures: copies a value vs rows (fig. 3)
                      and vs C (fig. 4), the speed-up of the placement over
                      one copy (fig. 5), throughput vs window (fig. 6) and
                      vs budget (fig. 8), optimization time (fig. 9)
"""
import argparse
import csv
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

STYLE = {
    "placement": ("tab:red", "o"),
    "shared": ("tab:blue", "s"),
    "naive-replicas": ("tab:green", "^"),
    "warp-aggregation": ("tab:purple", "D"),
    "global-atomics": ("tab:gray", "x"),
    "sort-reduce": ("tab:brown", "v"),
}
QUERIES = [("q2-sum-double", "Q2: COUNT(*), SUM(x double) GROUP BY a"),
           ("q2-count", "Q2: COUNT(*) GROUP BY a"),
           ("q1-join-sum", "Q1: SUM(d1.b) over f JOIN d1")]


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def num(r, k):
    return float(r[k]) if r.get(k) not in (None, "") else None


def plot_variants(data, duck, out):
    fig, axes = plt.subplots(len(QUERIES), 2, figsize=(12, 11), sharex=True)
    for qi, (query, title) in enumerate(QUERIES):
        for ci, c in enumerate(["1024", "8192"]):
            ax = axes[qi][ci]
            sel = [r for r in data if r["figure"] == "variants" and r["query"] == query and r["cardinality"] == c]
            by = defaultdict(list)
            floor = None
            for r in sel:
                if num(r, "ms_min"):
                    by[r["variant"]].append((float(r["theta"]), float(r["ms_min"])))
                floor = num(r, "floor_ms") or floor
            for v, pts in by.items():
                pts.sort()
                color, marker = STYLE.get(v, ("black", "."))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=color, label=v)
            if floor:
                ax.axhline(floor, color="black", linestyle=":", label="floor (columns read once)")
            d = sorted((float(r["theta"]), float(r["ms_median"])) for r in duck
                       if r["query"] == query and r["cardinality"] == c)
            if d:
                ax.plot([p[0] for p in d], [p[1] for p in d], marker="*", color="orange", linestyle="--",
                        label="DuckDB, 16 threads (host)")
            ax.set_yscale("log")
            ax.set_title(f"{title}, C = {c}", fontsize=10)
            ax.set_ylabel("ms (2^28 rows)")
            ax.grid(True, which="both", alpha=0.3)
            if qi == len(QUERIES) - 1:
                ax.set_xlabel("Zipf theta")
            if qi == 0 and ci == 0:
                ax.legend(fontsize=7)
    fig.suptitle("Shared-memory grouped aggregation and FK join on an H100, 2^28 rows", fontsize=12)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def plot_placement(variants, sweeps, out):
    fig, axes = plt.subplots(2, 3, figsize=(15, 9))
    thetas = sorted({float(r["theta"]) for r in sweeps if r["figure"] == "copies"})
    # fig. 3: copies a value vs rows
    ax = axes[0][0]
    for t in thetas:
        for goal, ls in [("write", "-"), ("read", "--")]:
            pts = sorted((int(r["rows"]), float(r["copies_per_value"])) for r in sweeps
                         if r["figure"] == "copies" and float(r["theta"]) == t and r["goal"] == goal)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker=".",
                        label=f"theta {t:g} {goal}")
    ax.set_xscale("log", base=2)
    ax.set_title("fig. 3: copies a value vs rows (C 1024, budget 12;\nwrite: window 16, 8-byte words; read: 4-byte)",
                 fontsize=9)
    ax.set_xlabel("rows")
    ax.legend(fontsize=6, ncol=2)
    ax.grid(True, alpha=0.3)
    # fig. 4: copies vs C
    ax = axes[0][1]
    for t in sorted({float(r["theta"]) for r in sweeps if r["figure"] == "cardinality"}):
        for w, ls in [("0", "--"), ("16", "-")]:
            pts = sorted((int(r["cardinality"]), float(r["copies_per_value"])) for r in sweeps
                         if r["figure"] == "cardinality" and float(r["theta"]) == t and r["window"] == w)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle=ls, marker="o",
                    label=f"theta {t:g}, window {w}")
    ax.set_xscale("log", base=2)
    ax.set_title("fig. 4: copies a value vs C (2^24 rows, writes, budget 12)", fontsize=9)
    ax.set_xlabel("C (distinct values)")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    # fig. 5: speed-up of the placement over one copy
    ax = axes[0][2]
    for query, label, ls in [("q2-sum-double", "writes (Q2 SUM double)", "-"), ("q2-count", "writes (Q2 COUNT)", ":"),
                             ("q1-join-sum", "reads (Q1)", "--")]:
        for c in ["1024", "8192"]:
            one = {float(r["theta"]): float(r["ms_min"]) for r in variants
                   if r["figure"] == "variants" and r["query"] == query and r["cardinality"] == c
                   and r["variant"] == "shared" and num(r, "ms_min")}
            pl = {float(r["theta"]): float(r["ms_min"]) for r in variants
                  if r["figure"] == "variants" and r["query"] == query and r["cardinality"] == c
                  and r["variant"] == "placement" and num(r, "ms_min")}
            ts = sorted(set(one) & set(pl))
            ax.plot(ts, [one[t] / pl[t] for t in ts], linestyle=ls, marker="o", label=f"{label}, C {c}")
    ax.set_yscale("log")
    ax.set_title("fig. 5: speed-up of the placement over one copy (2^28 rows)", fontsize=9)
    ax.set_xlabel("Zipf theta")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    # fig. 6 and 8: throughput vs window and budget
    for ax, fig_name, key, title in [(axes[1][0], "window", "window", "fig. 6: vs window (budget 12)"),
                                     (axes[1][1], "budget", "budget", "fig. 8: vs budget (window 16)")]:
        for t in sorted({float(r["theta"]) for r in sweeps if r["figure"] == fig_name}):
            pts = sorted((float(r[key]), int(r["rows"]) / float(r["ms_min"]) / 1e6) for r in sweeps
                         if r["figure"] == fig_name and float(r["theta"]) == t)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"theta {t:g}")
        floor = [r for r in sweeps if r["figure"] == fig_name and num(r, "floor_ms")]
        if floor:
            ax.axhline(int(floor[0]["rows"]) / float(floor[0]["floor_ms"]) / 1e6, color="black", linestyle=":",
                       label="floor")
        ax.set_title(title + ", Q2 SUM(double), C 1024, 2^26 rows", fontsize=9)
        ax.set_xlabel(key)
        ax.set_ylabel("billion rows / s")
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
    # fig. 9: optimization time
    ax = axes[1][2]
    for t in sorted({float(r["theta"]) for r in sweeps if r["figure"] == "window"}):
        pts = sorted((int(r["window"]), float(r["opt_s"])) for r in sweeps
                     if r["figure"] == "window" and float(r["theta"]) == t)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=f"theta {t:g}, 2^26 rows")
    ax.set_title("fig. 9: optimization time vs window (writes, budget 12, 16 threads)", fontsize=9)
    ax.set_xlabel("window (chunks)")
    ax.set_ylabel("s")
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    fig.suptitle("The placement optimizer on the H100 machine's 16 host threads", fontsize=12)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variants", required=True)
    ap.add_argument("--placement")
    ap.add_argument("--duckdb")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    variants = rows(a.variants)
    duck = rows(a.duckdb) if a.duckdb else []
    plot_variants(variants, duck, a.out + "-variants.png")
    if a.placement:
        plot_placement(variants, rows(a.placement), a.out + "-placement.png")


if __name__ == "__main__":
    main()
