#!/usr/bin/env python3
"""The cube-creation paper's fig. 5 right re-measured: gpu-lattice over 1, 2
and 4 GPUs, from the JSON of `cube_bench.py --gpus 1,2,4`.

Left: the GPU part of a build (by the host's clock) against the GPU count,
the table resident on the GPUs or uploaded each build, with the ideal
line (one GPU's time over n). Right: where the time of a resident build
goes, on one GPU and on four: the slowest context's finest cells, the
GPU-to-GPU copies and the merge, the coarser sets, the download, the
cells into host vectors, and the rest (host waits and launches).

    plot_gpus.py RESULTS.json OUT.png [--rows N]
"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

WALL = "GPU build, all contexts (host clock)"


def stage(last, suffix, pick=max):
    values = [ms for name, ms in last.items() if name.endswith(suffix)]
    return pick(values) if values else 0.0


def breakdown(last):
    parts = {
        "finest cells (slowest GPU)": stage(last, ": finest cells") or stage(last, "finest cells"),
        "GPU to GPU + merge": stage(last, "(GPU to GPU)") + stage(last, "merge of the contexts' finest cells"),
        "coarser sets": stage(last, "coarser sets from their parents"),
        "upload (slowest GPU)": stage(last, "upload (host to device)"),
        "download": stage(last, "download (device to host)"),
        "cells into host vectors": stage(last, "cells into host vectors (host)"),
    }
    parts["rest (host)"] = max(last.get(WALL, 0.0) - sum(parts.values()), 0.0)
    return parts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--rows", type=int, default=250_000_000)
    args = ap.parse_args()
    rows = [r for r in json.load(open(args.results))
            if r["algorithm"] == "gpu-lattice" and r["rows"] == args.rows and "error" not in r]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    for table, colour in (("sales", "tab:blue"), ("sales_sorted", "tab:orange")):
        for resident, style in ((True, "-"), (False, "--")):
            line = sorted((r["gpus"], r["last"][WALL]) for r in rows
                          if r["table"] == table and r["resident"] == resident and WALL in r["last"])
            if not line:
                continue
            gpus, ms = zip(*line)
            label = f"{'sorted' if table.endswith('sorted') else 'unsorted'}, {'resident' if resident else 'uploaded each build'}"
            left.plot(gpus, ms, style, marker="o", color=colour, label=label)
            left.plot(gpus, [ms[0] / g for g in gpus], ":", color=colour, alpha=0.5)
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xticks([1, 2, 4], ["1", "2", "4"])
    left.set_xlabel("GPUs")
    left.set_ylabel("GPU part of a build, ms (host clock)")
    left.set_title(f"gpu-lattice, {args.rows / 1e6:.0f} M rows, 12 sets (dotted: one GPU's time / n)")
    left.legend(fontsize=8)

    bars = []
    for table in ("sales", "sales_sorted"):
        for gpus in (1, 4):
            match = [r for r in rows if r["table"] == table and r["resident"] and r["gpus"] == gpus]
            if match:
                bars.append((f"{'sorted' if table.endswith('sorted') else 'unsorted'}\n{gpus} GPU{'s' if gpus > 1 else ''}",
                             breakdown(match[0]["last"])))
    bottom = [0.0] * len(bars)
    for name in bars[0][1] if bars else []:
        heights = [b[1][name] for b in bars]
        right.bar([b[0] for b in bars], heights, bottom=bottom, label=name)
        bottom = [x + h for x, h in zip(bottom, heights)]
    right.set_ylabel("ms")
    right.set_title("a resident build's parts")
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)


if __name__ == "__main__":
    main()
