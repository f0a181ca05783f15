"""The H-tree bench's CSV as the paper's figures: time per engine against
the varied parameter, one panel per figure (fig1a-c build, fig2a-c update,
fig3-6 queries), log scale. Usage: plot_htree.py OUT.png CSV..."""
import csv
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = []
for path in sys.argv[2:]:
    with open(path) as f:
        rows += [r for r in csv.DictReader(f) if r["figure"].startswith("fig")]

def x_of(fig, shape):
    base = shape.split("+")
    if fig == "fig2a":
        return int(re.sub("K", "000", base[1])) / 1000
    m = re.match(r"D(\d+)C(\d+)T(\d+)([KM])", base[0])
    d, c, t = int(m.group(1)), int(m.group(2)), int(m.group(3)) * (1000 if m.group(4) == "K" else 1000000)
    return {"fig1a": t / 1000, "fig1b": d, "fig1c": c, "fig2b": d, "fig2c": c, "fig3": d, "fig5": d, "fig4": c, "fig6": c}[fig]

labels = {"fig1a": "build, D15C160: tuples (K)", "fig1b": "build, C160 T400K: dimensions", "fig1c": "build, D15 T400K: cardinality",
          "fig2a": "update D15C40T300K: new tuples (K)", "fig2b": "update C40 T300K+300K: dimensions",
          "fig2c": "update D15 T300K+300K: cardinality", "fig3": "10K popular-path queries, C40 T600K: dimensions",
          "fig4": "10K popular-path queries, D15 T600K: cardinality", "fig5": "10K online queries, C40 T600K: dimensions",
          "fig6": "10K online queries, D15 T600K: cardinality"}
figs = [f for f in labels if any(r["figure"] == f for r in rows)]
fig, axes = plt.subplots(2, 5, figsize=(24, 9))
for ax, f in zip(axes.flat, figs):
    engines = sorted({r["engine"] for r in rows if r["figure"] == f})
    for e in engines:
        pts = sorted((x_of(f, r["shape"]), float(r["ms"])) for r in rows if r["figure"] == f and r["engine"] == e)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=e)
    ax.set_yscale("log")
    ax.set_title(labels[f], fontsize=10)
    ax.set_ylabel("ms")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle("H-tree on an NVIDIA H100 vs cpu-serial (1 core) and cpu-parallel (16 cores): the paper's figures 1-6")
fig.tight_layout()
fig.savefig(sys.argv[1], dpi=90)
