"""Plots where a GROUP BY's time goes, per code version, from a JSON of
stage times and benchmark medians (bench/results/*-sql-ordered-host-*.json):
left, the gpu engine's stages stacked; right, each engine's median beside
DuckDB's.

    python3 bench/sql/plot_route_stages.py IN.json OUT.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(path_in: str, path_out: str) -> None:
    data = json.load(open(path_in))
    stages = data["gpu_stages_ms"]
    versions = list(stages)
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
    names = []
    for v in versions:
        for s in stages[v]:
            if s != "whole query" and s not in names:
                names.append(s)
    bottom = [0.0] * len(versions)
    for s in names:
        heights = [stages[v].get(s, 0.0) for v in versions]
        left.bar(versions, heights, bottom=bottom, label=s)
        bottom = [b + h for b, h in zip(bottom, heights)]
    left.plot(versions, [stages[v]["whole query"] for v in versions], "k_", markersize=30, label="whole query")
    left.set_ylabel("ms")
    left.set_title("gpu engine: the stages of one run (--timing)")
    left.legend(fontsize=8)
    left.tick_params(axis="x", labelsize=8)

    medians = data["bench_median_ms"]
    engines = ["gpu", "cpu-parallel", "DuckDB"]
    width = 0.27
    for i, e in enumerate(engines):
        xs = [k + (i - 1) * width for k in range(len(versions))]
        right.bar(xs, [medians[v][e] for v in versions], width, label=e)
    right.set_xticks(range(len(versions)), versions, fontsize=8)
    right.set_ylabel("ms (median of 5)")
    right.set_title("the benchmark's medians, DuckDB in the same call")
    right.legend(fontsize=8)
    fig.suptitle(data["query"], fontsize=9)
    fig.tight_layout()
    fig.savefig(path_out, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
