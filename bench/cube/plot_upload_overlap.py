#!/usr/bin/env python3
"""A build that uploads its table, one copy against chunks aggregated beside
the copy: a stacked bar per (table, algorithm, upload) of the GPU part's
stages from cube_bench.py's JSON (its runs with --upload-chunks 0,1), on one
time axis, with the upload alone marked. The issue's target is the whole
bar within 1.3x of that mark.

  plot_upload_overlap.py BENCH.json OUT.png [ALGORITHM ...]   (default gpu-lattice)

"kernels after": the kernels that follow the upload (one copy: all of
them; chunks: those after the stage beside it).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BESIDE = ", beside the upload"
UPLOAD = "upload (host to device)"
DOWNLOAD = "download (device to host)"


def parts(stages):
    """(label, ms) of the GPU part in order: the upload or the stage beside
    it, the other kernels, the download."""
    beside = sum(ms for name, ms in stages.items() if name.endswith(BESIDE))
    other = sum(ms for name, ms in stages.items()
                if not name.endswith(BESIDE) and "host to device" not in name and "device to host" not in name
                and "(host" not in name and name not in ("transfers", "kernels (on the GPU, without transfers)"))
    first = ("finest set beside the upload", beside) if beside else ("upload", stages[UPLOAD])
    return [first, ("kernels after", other), ("download", stages.get(DOWNLOAD, 0.0))]


def main():
    path, png = sys.argv[1], sys.argv[2]
    algorithms = sys.argv[3:] or ["gpu-lattice"]
    rows = [r for r in json.load(open(path))
            if r["algorithm"] in algorithms and not r.get("resident", True) and "last" in r and UPLOAD in r["last"]]
    colors = {"upload": "#9e9e9e", "finest set beside the upload": "#1f77b4", "kernels after": "#ff7f0e",
              "download": "#2ca02c"}
    fig, ax = plt.subplots(figsize=(10, 1.8 + 0.6 * len(rows)))
    labels = []
    for y, r in enumerate(rows):
        how = "chunks" if r.get("upload_chunks") == 0 else "one copy" if r.get("upload_chunks") == 1 else \
            f"{r.get('upload_chunks')} chunks"
        labels.append(f"{r['table']}, {r['algorithm']}, {how}")
        left = 0.0
        for name, ms in parts(r["last"]):
            ax.barh(y, ms, left=left, color=colors[name], label=name if name not in ax.get_legend_handles_labels()[1] else None)
            left += ms
        up = r["last"][UPLOAD]
        ax.plot([up, up], [y - 0.4, y + 0.4], color="black", linewidth=1.5)
        ax.plot([1.3 * up, 1.3 * up], [y - 0.4, y + 0.4], color="red", linewidth=1, linestyle="--")
        ax.text(left + 0.05, y, f"{left / up:.2f}x the upload", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("ms (the last build's stages; black: the upload alone; red dashed: 1.3x it)")
    rows_count = rows[0]["rows"] if rows else 0
    ax.set_title(f"Uploading {rows_count:,} rows: one copy, or chunks aggregated beside the copy", fontsize=10)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.28), ncol=4, fontsize=8, frameon=False)
    ax.set_xlim(0, max(1.45 * r["last"][UPLOAD] for r in rows) if rows else 1)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()
