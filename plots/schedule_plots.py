#!/usr/bin/python3
"""Throughput of step schedules (horizontal vs vertical) against the batch, from a study table.

Usage: schedule_plots.py STUDY_DIR [OUT.png]

Reads STUDY_DIR/table.csv: the columns config, fits, mean_step_s, schedule and batch (and, where
the study varies them, hw, model, units, defer_fraction, gradients_on, micro_batches). Draws one
panel per (hw, model, units) with sequences per second per GPU (batch / mean step time) against
the batch, one line per schedule and setting (the defer fraction of a vertical schedule, where the
gradients rest for a horizontal one). Runs that did not fit are left out (named on stderr).
Writes STUDY_DIR/plots/schedule_throughput.png (or OUT.png) and prints its path. Every study
whose table has a schedule column gets this plot from study_plots.py.
"""
import argparse
import os
import sys

from plot_common import InputProblem, boolean, empty_figure, number, read_csv, run_script, save_png

REQUIRED_COLUMNS = ["config", "fits", "mean_step_s", "schedule", "batch"]
PANEL_COLUMNS = ("hw", "model", "units")
SERIES_COLUMNS = ("schedule", "defer_fraction", "gradients_on", "weights_on", "placement")
PLOTS = ("schedule_throughput",)


def is_schedule_study(header):
    """Whether a table with these columns compares schedules."""
    return "schedule" in header and "batch" in header


def short(value):
    """A path's stem, or the value."""
    return os.path.splitext(os.path.basename(value))[0] if "/" in value else value


def throughput_points(table_path):
    """{panel: {series: [(batch, sequences/s per GPU)]}} of the runs that fit."""
    rows = read_csv(table_path, REQUIRED_COLUMNS)
    varying = [c for c in SERIES_COLUMNS[1:] if c in rows[0] and len({r.get(c, "") for r in rows}) > 1] if rows else []
    panels = {}
    for index, row in enumerate(rows, start=1):
        if not boolean(row, "fits", table_path, index):
            print(f"{row['config']}: did not fit, left out", file=sys.stderr)
            continue
        step = number(row, "mean_step_s", table_path, index)
        batch = number(row, "batch", table_path, index)
        if not step > 0 or not batch > 0:
            raise InputProblem(f"{table_path}: row {index}: expected a positive mean_step_s and batch")
        panel = " / ".join(short(row[c]) + (" GPUs" if c == "units" else "")
                           for c in PANEL_COLUMNS if c in row and row[c] != "")
        series = ", ".join([row["schedule"]] + [f"{c} {row[c]}" for c in varying if row.get(c, "") != ""])
        panels.setdefault(panel, {}).setdefault(series, []).append((batch, batch / step))
    return panels


def throughput_figure(table_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    panels = throughput_points(table_path)
    if not panels:
        return empty_figure("throughput by schedule", "no run fit")
    figure, axes = plt.subplots(1, len(panels), figsize=(5.0 * len(panels), 4.0), squeeze=False)
    for ax, (panel, series) in zip(axes[0], sorted(panels.items())):
        for name, points in sorted(series.items()):
            points.sort()
            style = "-" if name.startswith("vertical") else "--"
            ax.plot([b for b, _ in points], [s for _, s in points], style, marker="o", label=name)
        ax.set_title(panel or "all runs", fontsize=9)
        ax.set_xlabel("batch (sequences per GPU and step)")
        ax.set_ylabel("sequences / s per GPU")
        ax.set_xscale("log", base=2)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=6)
    figure.tight_layout()
    return figure


def schedule_figures(study_dir):
    """{plot name: figure} for a schedule study."""
    return {"schedule_throughput": throughput_figure(os.path.join(study_dir, "table.csv"))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study_dir")
    parser.add_argument("out_png", nargs="?")
    args = parser.parse_args()
    out = args.out_png or os.path.join(args.study_dir, "plots", "schedule_throughput.png")
    save_png(schedule_figures(args.study_dir)["schedule_throughput"], out)
    print(out)


if __name__ == "__main__":
    run_script(main)
