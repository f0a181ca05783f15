#!/usr/bin/env python3
"""The cube-creation paper's fig. 5 from cube_bench.py's JSON: time against
rows for each algorithm. Left: the whole build as the command sees it (runs
2..N: the table coded and, on the GPU, resident), DuckDB's GROUP BY ROLLUP,
ROLLUP beside it. Right: the GPU algorithms' kernels against the floor (the
table's keys and values read once at the measured bandwidth).

    python3 bench/cube/plot_fig5.py cube-bench.json --table sales_sorted --bandwidth 4.43 --out fig5.png
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def kernels(stages):
    return sum(ms for name, ms in stages.items()
               if "host to device" not in name and "device to host" not in name and "(host" not in name
               and name not in ("transfers", "kernels (on the GPU, without transfers)"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--table", default="sales_sorted")
    ap.add_argument("--bandwidth", type=float, help="TB/s (for the GPU panel's floor; no GPU rows: no GPU panel)")
    ap.add_argument("--title", default="")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    rows = [r for r in json.load(open(args.json)) if "error" not in r and r.get("resident", True)
            and (r["table"] == args.table or r["algorithm"].startswith("DuckDB"))]
    gpu = any(r["algorithm"].startswith("gpu-") for r in rows)
    if gpu and args.bandwidth is None:
        ap.error("--bandwidth is needed for the GPU rows' floor")
    fig, axes = plt.subplots(1, 2 if gpu else 1, figsize=(13 if gpu else 7, 5), squeeze=False)
    left, right = axes[0][0], axes[0][1] if gpu else None
    series = {}
    for r in rows:
        label = r["algorithm"] + (f", {r['threads']} threads" if r["algorithm"] == "cpu-partitioned" else "")
        series.setdefault(label, []).append(r)
    for label, rs in sorted(series.items()):
        rs.sort(key=lambda r: r["rows"])
        x = [r["rows"] / 1e6 for r in rs]
        style = "--" if label.startswith("DuckDB") else "-"
        left.plot(x, [r["wall_last"] for r in rs], style, marker="o", label=label)
        if label.startswith("gpu-"):
            right.plot(x, [kernels(r["last"]) for r in rs], marker="o", label=label)
    xs = sorted({r["rows"] for r in rows})
    panels = [(left, "whole build (wall, table resident)")]
    if gpu:
        right.plot([x / 1e6 for x in xs], [x * 16 / (args.bandwidth * 1e12) * 1e3 for x in xs], "k:",
                   label=f"floor: 16 B a row at {args.bandwidth} TB/s")
        panels.append((right, "GPU kernels (no transfers)"))
    for ax, title in panels:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("rows (millions)")
        ax.set_ylabel("ms")
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(args.title or f"Cube creation, {args.table}: 12 grouping sets (fig. 5 of the cube-creation paper)")
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)


if __name__ == "__main__":
    main()
