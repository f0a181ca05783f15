#!/usr/bin/env python3
"""Plots of gpuolap_ordered_bench's CSV (bench/groupby/ordered_bench.cu).

    python3 bench/groupby/plot_ordered.py RESULTS.csv OUTDIR [LABEL]

writes OUTDIR/LABEL-fig10-11-architectures.png (the paper's figs. 10-11:
architectures x local size, unique and reduce data), -fig12-intent.png,
-fig13-variants.png (variants on synthetic data and lineitem columns),
-best.png (each contender as a fraction of the streaming floor), and prints
the best figure's table as markdown.
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def throughput_panel(ax, points, title, xlabel):
    """One panel: a line of G rows/s over a log2 x axis per series; points are (series, x, rows/s)."""
    series = defaultdict(list)
    for name, x, y in points:
        series[name].append((x, y))
    for name, xy in sorted(series.items()):
        xy.sort()
        ax.plot([x for x, _ in xy], [y / 1e9 for _, y in xy], marker="o", ms=3, label=name)
    ax.set_xscale("log", base=2)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("G rows/s")
    ax.grid(alpha=0.3)


def fig_architectures(rows, out):
    pts = [r for r in rows if r["figure"] == "arch"]
    if not pts:
        return
    datas = sorted({r["data"] for r in pts})
    sizes = sorted({int(r["log2_rows"]) for r in pts})
    fig, axes = plt.subplots(len(datas), len(sizes), figsize=(4 * len(sizes), 3.4 * len(datas)), squeeze=False)
    for i, d in enumerate(datas):
        for j, s in enumerate(sizes):
            points = [(r["architecture"], int(r["local_size"]), float(r["rows_per_s"]))
                      for r in pts if r["data"] == d and int(r["log2_rows"]) == s]
            throughput_panel(axes[i][j], points, f"{d}, 2^{s} rows", "local size (threads per block)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Figs. 10-11 re-measured: architectures x local size (direct atomics, intent 128)")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def fig_intent(rows, out):
    pts = [r for r in rows if r["figure"] == "intent"]
    if not pts:
        return
    sizes = sorted({int(r["log2_rows"]) for r in pts})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4 * len(sizes), 3.4), squeeze=False)
    for j, s in enumerate(sizes):
        points = [(r["data"], int(r["intent"]), float(r["rows_per_s"])) for r in pts if int(r["log2_rows"]) == s]
        throughput_panel(axes[0][j], points, f"2^{s} rows", "intent (rows per thread)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Fig. 12 re-measured: 2-kernel, chunked atomics, local size 8, intent 2^0..2^12")
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def fig_variants(rows, out):
    pts = [r for r in rows if r["figure"] in ("variant", "lineitem") and r["architecture"] == "2-kernel"
           and r["local_size"] == "8" and r["intent"] == "128"]
    if not pts:
        return
    largest = max(int(r["log2_rows"]) for r in pts if r["figure"] == "variant") if any(
        r["figure"] == "variant" for r in pts) else None
    pts = [r for r in pts if r["figure"] == "lineitem" or int(r["log2_rows"]) == largest]
    datas = []
    for r in pts:
        if r["data"] not in datas:
            datas.append(r["data"])
    variants = ["direct-atomics", "chunked-atomics", "private-variable", "private-array"]
    fig, ax = plt.subplots(figsize=(max(8, 1.3 * len(datas)), 4))
    width = 0.8 / len(variants)
    for k, v in enumerate(variants):
        ys = []
        for d in datas:
            m = [float(r["rows_per_s"]) for r in pts if r["data"] == d and r["variant"] == v]
            ys.append(max(m) / 1e9 if m else 0)
        ax.bar([i + k * width for i in range(len(datas))], ys, width, label=v)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(datas))])
    ax.set_xticklabels(datas, rotation=20, fontsize=8)
    ax.set_ylabel("G rows/s")
    ax.set_title(f"Fig. 13 re-measured: variants, 2-kernel, local 8, intent 128 (synthetic at 2^{largest} rows; lineitem)")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)


def contender(r):
    a, v = r["architecture"], r["variant"]
    if a == "2-kernel" and v == "private-variable" and r["local_size"] == "8" and r["intent"] == "128":
        return "paper's winner (2-kernel, private variable, 8 x 128)"
    if a in ("1-kernel", "2-kernel"):
        return f"{a}, {v}"
    return a


def fig_best(rows, out):
    pts = [r for r in rows if r["figure"] in ("best", "cpu", "lineitem")]
    if not pts:
        return
    best = {}
    for r in pts:
        key = (r["data"], int(r["log2_rows"]), contender(r))
        if key not in best or float(r["ms_min"]) < float(best[key]["ms_min"]):
            best[key] = r
    points = sorted({(d, s) for d, s, _ in best})
    names = ["paper's winner (2-kernel, private variable, 8 x 128)", "1-kernel, private-variable", "block-cooperative",
             "cub-reduce-by-key", "auto", "cpu-parallel"]
    fig, ax = plt.subplots(figsize=(max(9, 0.9 * len(points)) + 3, 4.5))
    width = 0.8 / len(names)
    for k, n in enumerate(names):
        ys = [float(best[(d, s, n)]["fraction_of_floor"]) if (d, s, n) in best else 0 for d, s in points]
        ax.bar([i + k * width for i in range(len(points))], ys, width, label=n)
    ax.axhline(0.9, color="k", lw=0.8, ls="--")
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(points))])
    ax.set_xticklabels([f"{d}\n2^{s}" for d, s in points], fontsize=7)
    ax.set_ylabel("fraction of the streaming floor")
    ax.set_title("Each contender's best setting as a fraction of the floor (dashed: the 0.9 target)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)
    plt.close(fig)
    print("| data | rows | " + " | ".join(names) + " |")
    print("|---|---:|" + "---:|" * len(names))
    for d, s in points:
        cells = []
        for n in names:
            r = best.get((d, s, n))
            cells.append(f"{float(r['ms_min']):.3f} ms ({float(r['fraction_of_floor']):.2f})" if r else "")
        print(f"| {d} | 2^{s} | " + " | ".join(cells) + " |")


def main():
    rows = load(sys.argv[1])
    outdir = sys.argv[2]
    label = sys.argv[3] if len(sys.argv) > 3 else "ordered"
    os.makedirs(outdir, exist_ok=True)
    fig_architectures(rows, os.path.join(outdir, f"{label}-fig10-11-architectures.png"))
    fig_intent(rows, os.path.join(outdir, f"{label}-fig12-intent.png"))
    fig_variants(rows, os.path.join(outdir, f"{label}-fig13-variants.png"))
    fig_best(rows, os.path.join(outdir, f"{label}-best.png"))


if __name__ == "__main__":
    main()
