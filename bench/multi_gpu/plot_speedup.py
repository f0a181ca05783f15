#!/usr/bin/env python3
"""Speed-up of the thesis queries over several GPUs against one, from the
markdown of `gpuolap bench --engines gpu,auto --gpus-sweep` (one file per
scale), as a PNG: on the left each query's speed-up per GPU count and
scale; on the right the time per fact per GPU (median ms x GPUs / facts),
which stays flat when the GPUs are used as well as one is, also at a
scale that one GPU cannot hold (where the one-GPU row "does not fit").

    python3 bench/multi_gpu/plot_speedup.py OUT.png [--all N] [--title T] SCALE=bench-scale1.md [SCALE=...]

--all N: how many GPUs `--gpus all` was on that machine (default 2).
"""
import argparse
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def medians(path, every):
    """({query: {gpus: ms}}, {query: facts}) from the bench tables' fixed gpu rows."""
    times, facts, cube_facts = {}, {}, 0
    for line in open(path):
        header = re.match(r"## \w+ \(scale [^)]*\): (\d+) facts", line)
        if header:
            cube_facts = int(header.group(1))
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 13 or cells[0][:1] not in "BM" or not cells[1].startswith("gpu "):
            continue
        if not cells[6].replace(".", "").isdigit():
            continue  # a row that does not fit or does not apply
        query, engine, ms = cells[0], cells[1], float(cells[6])
        named = re.search(r"--gpus (\S+)", engine)
        gpus = 1 if not named else every if named.group(1) == "all" else len(named.group(1).split(","))
        times.setdefault(query, {})[gpus] = ms
        facts[query] = cube_facts
    return times, facts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("png")
    ap.add_argument("--all", type=int, default=2)
    ap.add_argument("--title", default="Thesis queries over several GPUs against one")
    ap.add_argument("runs", nargs="+", help="SCALE=bench.md")
    a = ap.parse_args()
    runs = [(scale, *medians(path, a.all)) for scale, path in (r.split("=", 1) for r in a.runs)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.6), gridspec_kw={"width_ratios": [3, 2]})

    bars = [(scale, g) for scale, times, _ in runs for g in sorted({g for t in times.values() for g in t}) if g > 1
            and any(1 in t for t in times.values())]
    queries = sorted({q for _, times, _ in runs for q in times})
    width = 0.8 / max(1, len(bars))
    for k, (scale, g) in enumerate(bars):
        times = next(t for s, t, _ in runs if s == scale)
        xs, ys = [], []
        for i, q in enumerate(queries):
            if q in times and 1 in times[q] and g in times[q]:
                xs.append(i + (k - (len(bars) - 1) / 2) * width)
                ys.append(times[q][1] / times[q][g])
        left.bar(xs, ys, width, label=f"scale {scale}, {g} GPUs")
        for x, y in zip(xs, ys):
            left.text(x, y + 0.03, f"{y:.2f}", ha="center", fontsize=6)
    for g in sorted({g for _, g in bars}):
        left.axhline(g, color="grey", linestyle="--", linewidth=0.8)
    left.axhline(1.0, color="black", linewidth=0.8)
    left.set_xticks(range(len(queries)), queries)
    left.set_ylabel("one GPU's median ms / this median ms")
    left.set_title("speed-up over one GPU (dashed: ideal)", fontsize=10)
    left.legend(fontsize=7)

    for scale, times, facts in runs:
        for q in ("B1", "B2", "B3"):
            if q not in times or not facts.get(q):
                continue
            gs = sorted(times[q])
            right.plot(gs, [times[q][g] * g / facts[q] * 1e9 for g in gs], marker="o", label=f"{q}, scale {scale}")
    right.set_xscale("log", base=2)
    right.set_xlabel("GPUs")
    right.set_ylabel("ps per fact per GPU (median ms x GPUs / facts)")
    right.set_title("Biker: time per fact per GPU", fontsize=10)
    right.set_ylim(bottom=0)
    right.legend(fontsize=7, ncol=2)
    fig.suptitle(a.title, fontsize=11)
    fig.tight_layout()
    fig.savefig(a.png, dpi=120)


if __name__ == "__main__":
    main()
