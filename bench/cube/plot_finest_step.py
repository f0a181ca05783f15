#!/usr/bin/env python3
"""The lattice's finest step over sorted rows, kernel by kernel, for several
forms of it: a stacked bar per kernel list (scripts/device/cube_kernels.sh's
kernels-*.txt, Nsight Compute's durations). The finest step is the first
build's kernels before its first init_cells (where the coarser sets begin),
or, with kernels.txt@ID, the kernels from the one numbered ID (the second,
resident build's first, where the first build uploaded in chunks) to the
next init_cells.

  plot_finest_step.py OUT.png LABEL=kernels.txt[@ID] [LABEL=kernels.txt[@ID] ...]
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def finest_kernels(path, first_id=None):
    """(short name, us) of the finest step's kernels in one list."""
    out = []
    for line in open(path):
        m = re.match(r"\s*(\d+)\s+([\d.]+) us\s+(.*)", line)
        if not m or (first_id is not None and int(m.group(1)) < first_id):
            continue
        us, name = float(m.group(2)), m.group(3)
        if "init_cells" in name:
            break
        short = re.sub(r"^void ", "", name)
        short = re.sub(r"^(gpuolap|cube|groupby)::", "", short)
        short = re.split(r"[<(]", short)[0].split("::")[-1]
        out.append((short, us))
    return out


def main():
    png, specs = sys.argv[1], sys.argv[2:]
    fig, ax = plt.subplots(figsize=(11, 1.2 + 0.8 * len(specs)))
    colors = {}
    palette = plt.get_cmap("tab20").colors
    for row, spec in enumerate(specs):
        label, path = spec.split("=", 1)
        path, _, first_id = path.partition("@")
        left = 0.0
        for name, us in finest_kernels(path, int(first_id) if first_id else None):
            if name not in colors:
                colors[name] = palette[len(colors) % len(palette)]
            ax.barh(row, us, left=left, color=colors[name], edgecolor="white",
                    label=name if name not in ax.get_legend_handles_labels()[1] else None)
            if us > 40:
                ax.text(left + us / 2, row, f"{us:.0f}", ha="center", va="center", fontsize=8, color="white")
            left += us
        ax.text(left + 8, row, f"{left:.0f} us", va="center", fontsize=9)
    ax.set_yticks(range(len(specs)))
    ax.set_yticklabels([s.split("=", 1)[0] for s in specs])
    ax.invert_yaxis()
    ax.set_xlabel("us (Nsight Compute, one resident build)")
    ax.set_title("gpu-lattice's finest step, 25 M sorted rows of sales-flat, H200")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_xlim(0, ax.get_xlim()[1] * 1.1)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
