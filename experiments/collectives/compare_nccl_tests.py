#!/usr/bin/env python3
"""Simulated collectives against published nccl-tests runs.

Each file in published/ holds one nccl-tests run as published (bytes, time_us) and, in its header,
the machine, the source, and how Asteria simulates it (profile, nodes, GPUs per node, algorithm).
For each, `asteria collective` runs the same sizes on the simulated machine; the relative error of
the time (simulated / published - 1) is reported per size and per size class:
  latency    up to 64 KiB (the per-step latencies dominate)
  middle     above 64 KiB up to 16 MiB
  bandwidth  above 16 MiB (the links' bandwidths dominate)

Writes results/comparison.csv (every size), results/comparison.md (per run and class) and
results/comparison.png (bus bandwidth against size, published and simulated).

usage: compare_nccl_tests.py [--asteria PATH] [--out DIR]
"""
import argparse
import csv
import io
import math
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KIB = 1024
MIB = 1024 * KIB
CLASSES = [("latency", 0, 64 * KIB), ("middle", 64 * KIB, 16 * MIB), ("bandwidth", 16 * MIB, math.inf)]


def size_class(size):
    for name, low, high in CLASSES:
        if low < size <= high or (low == 0 and size <= high):
            return name
    raise ValueError(size)


def read_published(path):
    meta, rows = {}, []
    with open(path) as f:
        lines = f.read().splitlines()
    body = []
    for line in lines:
        if line.startswith("# "):
            key, _, value = line[2:].partition(": ")
            meta[key] = value
        else:
            body.append(line)
    for row in csv.DictReader(io.StringIO("\n".join(body))):
        rows.append((int(row["bytes"]), float(row["time_us"])))
    for key in ("profile", "nodes", "gpus_per_node", "algorithm", "collective", "source"):
        if key not in meta:
            raise SystemExit(f"{path}: header field '{key}' missing (expected '# {key}: value')")
    return meta, rows


def simulate(asteria, meta, sizes):
    """The simulated rows of `sizes` (a doubling sweep from the smallest to the largest)."""
    command = [asteria, "collective", "--hw", meta["profile"], "--nodes", meta["nodes"],
               "--gpus-per-node", meta["gpus_per_node"], "--collective", meta["collective"],
               "--algorithm", meta["algorithm"], "--min-bytes", str(min(sizes)),
               "--max-bytes", str(max(sizes)), "--no-progress"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        cells = line.split()
        if len(cells) == 8 and cells[0].isdigit():
            rows[int(cells[0])] = {"time_us": float(cells[1]), "busbw": float(cells[3]),
                                   "algorithm": cells[4], "protocol": cells[5]}
    return rows


def bus_factor(collective, n):
    return {"all_reduce": 2 * (n - 1) / n, "reduce_scatter": (n - 1) / n,
            "all_gather": (n - 1) / n, "broadcast": 1.0}[collective]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--asteria", default=os.path.join(ROOT, "build", "release", "apps", "asteria", "asteria"))
    parser.add_argument("--out", default=os.path.join(HERE, "results"))
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    published_dir = os.path.join(HERE, "published")
    records = []
    runs = []
    for name in sorted(os.listdir(published_dir)):
        if not name.endswith(".csv"):
            continue
        meta, rows = read_published(os.path.join(published_dir, name))
        simulated = simulate(args.asteria, meta, [b for b, _ in rows])
        ranks = int(meta["nodes"]) * int(meta["gpus_per_node"])
        run = name[:-4]
        runs.append((run, meta, ranks))
        for size, published_us in rows:
            s = simulated[size]
            factor = bus_factor(meta["collective"], ranks)
            records.append({
                "run": run, "gpus": ranks, "bytes": size, "class": size_class(size),
                "published_us": published_us, "simulated_us": s["time_us"],
                "error": s["time_us"] / published_us - 1.0,
                "published_busbw": size / (published_us * 1e-6) / 1e9 * factor, "simulated_busbw": s["busbw"],
                "algorithm": s["algorithm"], "protocol": s["protocol"], "asked": meta["algorithm"]})
    with open(os.path.join(args.out, "comparison.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(records[0].keys()))
        writer.writeheader()
        for r in records:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    write_summary(args.out, runs, records)
    write_plot(args.out, runs, records)


def write_summary(out, runs, records):
    lines = ["# Simulated collectives against published nccl-tests runs", "",
             "Relative error of the simulated time per size class (simulated / published - 1): the median, and the",
             "largest in magnitude; the algorithms and protocols Asteria ran in that class. Written by",
             "`experiments/collectives/compare_nccl_tests.py` from `published/`, whose headers give each run's",
             "source and conditions.", "",
             "| run | GPUs | asked | class | sizes | median error | worst error | ran |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for run, meta, ranks in runs:
        for name, _, _ in CLASSES:
            rows = [r for r in records if r["run"] == run and r["class"] == name]
            if not rows:
                continue
            errors = [r["error"] for r in rows]
            worst = max(errors, key=abs)
            ran = sorted({f"{r['algorithm']}/{r['protocol']}" for r in rows})
            lines.append(f"| {run} | {ranks} | {meta['algorithm']} | {name} | {len(rows)} | "
                         f"{statistics.median(errors):+.0%} | {worst:+.0%} | {', '.join(ran)} |")
    lines += ["", "Sources:", ""]
    for run, meta, _ in runs:
        lines.append(f"- `{run}`: {meta.get('system', '')}. {meta['source']}. {meta.get('run', '')}.")
    with open(os.path.join(out, "comparison.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def write_plot(out, runs, records):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no comparison.png", file=sys.stderr)
        return
    columns = 3
    rows_of_panels = (len(runs) + columns - 1) // columns
    fig, axes = plt.subplots(rows_of_panels, columns, figsize=(5 * columns, 3.6 * rows_of_panels), squeeze=False)
    for i, (run, meta, ranks) in enumerate(runs):
        ax = axes[i // columns][i % columns]
        rows = [r for r in records if r["run"] == run]
        sizes = [r["bytes"] for r in rows]
        ax.plot(sizes, [r["published_busbw"] for r in rows], "o-", label="published", markersize=3)
        ax.plot(sizes, [r["simulated_busbw"] for r in rows], "s--", label="simulated", markersize=3)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{run} ({ranks} GPUs, {meta['algorithm']})", fontsize=9)
        ax.set_xlabel("bytes")
        ax.set_ylabel("busbw (GB/s)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    for j in range(len(runs), rows_of_panels * columns):
        axes[j // columns][j % columns].axis("off")
    fig.tight_layout()
    fig.savefig(os.path.join(out, "comparison.png"), dpi=110)


if __name__ == "__main__":
    main()
