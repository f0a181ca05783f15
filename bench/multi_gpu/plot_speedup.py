#!/usr/bin/env python3
"""Speed-up of the thesis queries over several GPUs against one, from the
markdown of `gpuolap bench --engines gpu,auto --gpus-sweep` (one file per
scale), as a PNG.

    python3 bench/multi_gpu/plot_speedup.py OUT.png SCALE=bench-scale1.md [SCALE=bench-scale4.md ...]
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def medians(path):
    """{query: {"one": ms, "all": ms, "auto": ms}} from the bench tables."""
    out = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 13 or not cells[0][:1] in "BM" or not cells[6].replace(".", "").isdigit():
            continue
        query, engine, ms = cells[0], cells[1], float(cells[6])
        kind = "auto" if engine == "auto" else "all" if "--gpus all" in engine else "one"
        out.setdefault(query, {})[kind] = ms
    return out


def main():
    png, runs = sys.argv[1], [a.split("=", 1) for a in sys.argv[2:]]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    width = 0.8 / len(runs)
    queries = None
    for k, (scale, path) in enumerate(runs):
        m = medians(path)
        queries = queries or list(m)
        xs = [i + (k - (len(runs) - 1) / 2) * width for i in range(len(queries))]
        ys = [m[q]["one"] / m[q]["all"] for q in queries]
        ax.bar(xs, ys, width, label=f"scale {scale}, --gpus all")
        for x, y in zip(xs, ys):
            ax.text(x, y + 0.02, f"{y:.2f}", ha="center", fontsize=7)
    ax.axhline(2.0, color="grey", linestyle="--", linewidth=1, label="2 GPUs, ideal")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(queries)), queries)
    ax.set_ylabel("one GPU's median ms / this median ms")
    ax.set_title("Thesis queries on 2 H100s (NVLink) against one")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
