#!/usr/bin/python3
"""Resident optimizer-state bytes per memory tier over the steps of one or several runs.

Usage: tier_occupancy.py STEPS_CSV [STEPS_CSV...] OUT_PNG [--label L]...

Each STEPS_CSV has the columns step, resident_device_bytes, resident_host_bytes,
resident_nvme_bytes. Runs are labelled with --label (one per run, in order) or by the name of
the directory holding their steps.csv.
"""
import argparse

from plot_common import (byte_unit, column_numbers, plt, read_csv, run_labels, run_script, save_png,
                         split_runs_and_output)

TIERS = (
    ("resident_device_bytes", "device"),
    ("resident_host_bytes", "host"),
    ("resident_nvme_bytes", "NVMe"),
)
REQUIRED_COLUMNS = ["step"] + [column for column, _ in TIERS]


def load_occupancy(path):
    """{'step': [...], column: [...]} for one run."""
    rows = read_csv(path, REQUIRED_COLUMNS)
    return {column: column_numbers(rows, column, path) for column in REQUIRED_COLUMNS}


def render_tier_occupancy(runs, out_png):
    """runs: list of (label, load_occupancy(...)). One panel per tier, one line per run."""
    largest = max((max(run[column], default=0.0) for _, run in runs for column, _ in TIERS), default=0.0)
    divisor, unit = byte_unit(largest)
    figure, panels = plt.subplots(len(TIERS), 1, figsize=(8.0, 7.5), sharex=True)
    for axes, (column, tier) in zip(panels, TIERS):
        for label, run in runs:
            axes.step(run["step"], [value / divisor for value in run[column]], where="post", label=label)
        axes.set_ylim(bottom=0)
        axes.set_ylabel(f"{tier} ({unit})")
        axes.grid(alpha=0.3)
    panels[0].set_title("Resident optimizer state per tier")
    panels[-1].set_xlabel("step")
    if runs:
        panels[0].legend(loc="upper right", fontsize="small", ncol=max(1, min(4, len(runs) // 6 + 1)))
    save_png(figure, out_png)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", metavar="STEPS_CSV... OUT_PNG")
    parser.add_argument("--label", action="append", default=[])
    args = parser.parse_args()
    steps_paths, out_png = split_runs_and_output(args.paths, "tier_occupancy.py")
    labels = run_labels(steps_paths, args.label, "tier_occupancy.py")
    render_tier_occupancy([(label, load_occupancy(path)) for label, path in zip(labels, steps_paths)], out_png)
    print(out_png)


if __name__ == "__main__":
    run_script(main)
